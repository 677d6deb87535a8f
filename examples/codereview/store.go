package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/account/redisaccount"
	"github.com/inferkit/inferkit/ratelimit"
	"github.com/inferkit/inferkit/ratelimit/redislimit"
)

// store is where a run finds the account's plan and counts its quotas.
type store struct {
	// accounts keeps the plans; nil without -accounts or -redis, when
	// the plan is the -plan flag's.
	accounts *account.Accounts
	// quotas counts the plans' quotas.
	quotas ratelimit.Quotas
	// close releases the store.
	close func() error
	// log is told of the accounts the store creates; nil is io.Discard.
	log io.Writer
}

// openStore opens the store the options name: the bbolt file of
// -accounts (accounts and quota counts in one file), the Redis server of
// -redis (accounts in redisaccount, quotas in redislimit), or neither (a
// quota count in memory for this run, the plan taken from -plan). now is
// the accounts' clock.
func openStore(ctx context.Context, o options, now func() time.Time) (store, error) {
	switch {
	case o.accountsPath != "":
		db, err := account.OpenBolt(o.accountsPath)
		if err != nil {
			return store{}, fmt.Errorf("-accounts %s: %w", o.accountsPath, err)
		}
		accts, err := account.New(ctx, account.Config{Store: db, Now: now})
		if err != nil {
			return store{}, errors.Join(err, db.Close())
		}
		quotas, err := ratelimit.NewDurableMemory(account.Ledger(db))
		if err != nil {
			return store{}, errors.Join(err, db.Close())
		}
		return store{accounts: accts, quotas: quotas, close: db.Close}, nil
	case o.redis != "":
		opts := &redis.Options{Addr: o.redis}
		if strings.HasPrefix(o.redis, "/") {
			opts.Network = "unix"
		}
		rdb := redis.NewClient(opts)
		if err := rdb.Ping(ctx).Err(); err != nil {
			return store{}, errors.Join(fmt.Errorf("-redis %s: %w", o.redis, err), rdb.Close())
		}
		rs, err := redisaccount.New(redisaccount.Config{Client: rdb})
		if err != nil {
			return store{}, errors.Join(err, rdb.Close())
		}
		accts, err := account.New(ctx, account.Config{Store: rs, Now: now})
		if err != nil {
			return store{}, errors.Join(err, rdb.Close())
		}
		quotas, err := redislimit.New(redislimit.Config{Client: rdb})
		if err != nil {
			return store{}, errors.Join(err, rdb.Close())
		}
		return store{accounts: accts, quotas: quotas, close: rdb.Close}, nil
	}
	return store{quotas: ratelimit.NewMemory(), close: func() error { return nil }}, nil
}

// account returns the stored account id, creating it (on Free, named
// after its id) if the store lacks it, and saying so on s.log: an
// account comes into being on its first use.
func (s store) account(ctx context.Context, id string) (account.Account, error) {
	a, err := s.accounts.Account(ctx, id)
	if !errors.Is(err, account.ErrNotFound) {
		return a, err
	}
	a, err = s.accounts.CreateAccount(ctx, account.NewAccount{ID: id, Name: id})
	if errors.Is(err, account.ErrExists) { // another run made it first
		return s.accounts.Account(ctx, id)
	}
	if err == nil && s.log != nil {
		fmt.Fprintf(s.log, "codereview: created account %s, on the Free plan\n", a.ID)
	}
	return a, err
}
