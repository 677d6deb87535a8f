package redisaccount_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/account/accounttest"
	"github.com/inferkit/inferkit/account/redisaccount"
	"github.com/inferkit/inferkit/internal/redistest"
)

func TestRedis(t *testing.T) {
	sock := redistest.Start(t)
	rdb := redistest.Client(t, sock)
	n := 0
	accounttest.Run(t, func(t *testing.T) account.Store {
		n++ // a fresh prefix per subtest: an empty store
		s, err := redisaccount.New(redisaccount.Config{Client: rdb, Prefix: fmt.Sprintf("test%d:", n)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestTTL checks that a TTL becomes the Redis key's own expiry, and that
// an Update without one removes it.
func TestTTL(t *testing.T) {
	rdb := redistest.Client(t, redistest.Start(t))
	s, err := redisaccount.New(redisaccount.Config{Client: rdb})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	set := func(ttl time.Duration) {
		t.Helper()
		if err := s.Update(ctx, "session/x", ttl, func([]byte) ([]byte, error) { return []byte("v"), nil }); err != nil {
			t.Fatal(err)
		}
	}
	set(time.Hour)
	ttl, err := rdb.PTTL(ctx, redisaccount.DefaultPrefix+"session/x").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 59*time.Minute || ttl > time.Hour {
		t.Fatalf("PTTL = %v, want about an hour", ttl)
	}
	// Redis expires it: an expiry in the past stands for the hour
	// passing.
	if err := rdb.PExpireAt(ctx, redisaccount.DefaultPrefix+"session/x", time.Unix(1, 0)).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "session/x"); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("Get after expiry = %v, want ErrNotFound", err)
	}
	set(time.Hour)
	set(0)
	if ttl, err := rdb.PTTL(ctx, redisaccount.DefaultPrefix+"session/x").Result(); err != nil || ttl != -1 {
		t.Fatalf("PTTL after an Update without TTL = %v, %v; want none (-1ns)", ttl, err)
	}
}

// TestReplicas races Updates through three Stores, each with its own
// connection, on one server, and revokes a key through one of three
// Accounts: the others refuse it at once.
func TestReplicas(t *testing.T) {
	sock := redistest.Start(t)
	var stores []*redisaccount.Store
	for range 3 {
		s, err := redisaccount.New(redisaccount.Config{Client: redistest.Client(t, sock)})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	ctx := t.Context()
	const n = 90
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := account.Ledger(stores[i%3]).Add(ctx, "2026-11", map[string]int64{"requests": 1}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, s := range stores {
		if got, err := account.Ledger(s).Load(ctx, "2026-11"); err != nil || got["requests"] != n {
			t.Fatalf("Load = %v, %v; want %d requests", got, err, n)
		}
	}

	var replicas []*account.Accounts
	for _, s := range stores {
		a, err := account.New(ctx, account.Config{Store: s})
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, a)
	}
	k, secret, err := replicas[0].CreateKey(ctx, account.DefaultAccount, "shared")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range replicas {
		if _, err := a.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	if err := replicas[1].RevokeKey(ctx, "", k.ID); err != nil {
		t.Fatal(err)
	}
	for i, a := range replicas {
		if _, err := a.Authenticate(ctx, secret); !errors.Is(err, account.ErrInvalidKey) {
			t.Fatalf("replica %d after revocation: %v, want ErrInvalidKey", i, err)
		}
	}
}

// TestContention checks that an Update whose key changes under it at
// every try gives up with ErrContention, having written nothing.
func TestContention(t *testing.T) {
	rdb := redistest.Client(t, redistest.Start(t))
	s, err := redisaccount.New(redisaccount.Config{Client: rdb})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	tries := 0
	err = s.Update(ctx, "hot", 0, func(old []byte) ([]byte, error) {
		tries++
		// Another writer, between this read and the write.
		if err := rdb.Incr(ctx, redisaccount.DefaultPrefix+"hot").Err(); err != nil {
			return nil, err
		}
		return []byte("mine"), nil
	})
	if !errors.Is(err, redisaccount.ErrContention) || tries != redisaccount.MaxRetries {
		t.Fatalf("Update = %v after %d tries, want ErrContention after %d", err, tries, redisaccount.MaxRetries)
	}
	if got, err := rdb.Get(ctx, redisaccount.DefaultPrefix+"hot").Int(); err != nil || got != redisaccount.MaxRetries {
		t.Fatalf("hot = %d, %v; want the other writer's %d", got, err, redisaccount.MaxRetries)
	}
	if _, err := redisaccount.New(redisaccount.Config{}); err == nil {
		t.Fatal("New accepted no client")
	}
}

// TestFlushAll: FLUSHALL while an Accounts serves, then a restart (a new
// Accounts on the store): the keys made after the flush still
// authenticate, with or without a secret file; with one, so do the ids
// of keys made before it. A Redis that is down is ErrUnavailable.
func TestFlushAll(t *testing.T) {
	sock := redistest.Start(t)
	rdb := redistest.Client(t, sock)
	ctx := t.Context()
	s, err := redisaccount.New(redisaccount.Config{Client: rdb})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "secret")
	a, err := account.New(ctx, account.Config{Store: s, SecretFile: file})
	if err != nil {
		t.Fatal(err)
	}
	_, before, err := a.CreateKey(ctx, account.DefaultAccount, "before")
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	_, after, err := a.CreateKey(ctx, account.DefaultAccount, "after")
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []account.Config{{Store: s}, {Store: s, SecretFile: file}} {
		b, err := account.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Authenticate(ctx, after); err != nil {
			t.Fatalf("a key made after FLUSHALL, after a restart (file %q): %v", cfg.SecretFile, err)
		}
		if b.KeyID(before) != a.KeyID(before) {
			t.Fatal("a new operator secret after FLUSHALL")
		}
	}
	// All lost again, and a restart before anything put the secret back:
	// the file gives it.
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	c, err := account.New(ctx, account.Config{Store: s, SecretFile: file})
	if err != nil || c.KeyID(before) != a.KeyID(before) {
		t.Fatalf("a restart on an empty Redis with the secret file: %v", err)
	}

	if err := rdb.Shutdown(ctx).Err(); err == nil {
		t.Log("SHUTDOWN answered")
	}
	if _, err := s.Get(ctx, "anything"); !errors.Is(err, account.ErrUnavailable) {
		t.Fatalf("Get while Redis is down: %v, want ErrUnavailable", err)
	}
	if err := a.Check(ctx); !errors.Is(err, account.ErrUnavailable) {
		t.Fatalf("Check while Redis is down: %v, want ErrUnavailable", err)
	}
}
