package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/account/redisaccount"
	"github.com/inferkit/inferkit/cache"
	"github.com/inferkit/inferkit/cache/rediscache"
	"github.com/inferkit/inferkit/console"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
	"github.com/inferkit/inferkit/ratelimit/redislimit"
)

// parseKey reads an -api-key value: KEY, or KEY:TIER where TIER is
// default, tier2, tier3 or unlimited, which pins the default account's
// tier. A key that itself holds a colon takes an explicit tier:
// "a:b:default". tier is "" for a plain KEY.
func parseKey(s string) (key, tier string, err error) {
	s = strings.TrimSpace(s)
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, "", nil
	}
	t, err := policy.Tiers().Lookup(s[i+1:])
	if err != nil {
		return "", "", fmt.Errorf("-api-key KEY:%s: %w", s[i+1:], err)
	}
	if s[:i] == "" {
		return "", "", fmt.Errorf("-api-key: empty key before %q", s[i:])
	}
	return s[:i], t.Name, nil
}

// staticKeys parses every -api-key value (and INFERKIT_API_KEYS'): the
// keys, and the tier they pin the default account to, agreed with
// -tier's; "" when none says one.
func staticKeys(values []string, tier string) (keys []string, pinned string, err error) {
	if tier != "" {
		t, err := policy.Tiers().Lookup(tier)
		if err != nil {
			return nil, "", fmt.Errorf("-tier: %w", err)
		}
		pinned = t.Name
	}
	for _, v := range values {
		k, t, err := parseKey(v)
		if err != nil {
			return nil, "", err
		}
		keys = append(keys, k)
		switch {
		case t == "" || t == pinned:
		case pinned == "":
			pinned = t
		default:
			// The keys are of one account, whose tier is one: say which
			// tiers clash, never the keys.
			return nil, "", fmt.Errorf("-api-key and -tier: the keys of the default account share its tier, but they say both %s and %s: give one tier", pinned, t)
		}
	}
	return keys, pinned, nil
}

// backends are what the API keeps its state in: the accounts (keys,
// credits, plans, console sessions), the rate limiter (windows, monthly
// spend and usage) and, with -redis, the stored responses.
type backends struct {
	accounts *account.Accounts
	limiter  ratelimit.Limiter
	// responses is the shared store of responses of -redis; nil
	// otherwise (the Handler's in-memory default, or -store's file).
	responses cache.Store
	// store keeps the accounts, and the code reviews beside them.
	store account.Store
	// close releases the Redis connection or the accounts' file, after
	// the HTTP server has shut down.
	close func() error
}

// redactAddr returns a -redis address fit for messages and logs: a
// URL's password replaced as url.URL.Redacted does, or, where the URL
// does not parse, its whole user information.
func redactAddr(addr string) string {
	if u, err := url.Parse(addr); err == nil {
		return u.Redacted()
	}
	scheme, rest, ok := strings.Cut(addr, "://")
	if at := strings.LastIndexByte(rest, '@'); ok && at >= 0 {
		return scheme + "://xxxxx@" + rest[at+1:]
	}
	return addr
}

// openBackends opens the backends the flags name:
//
//   - -redis ADDR: accounts in Redis (redisaccount), limits in Redis
//     (redislimit) and stored responses in Redis (rediscache), shared by
//     every replica started with the same -redis;
//   - -accounts PATH: accounts in the bbolt file PATH, and an in-memory
//     limiter whose monthly counters (spend, usage) are written through
//     to the same file (account.Ledger), so that they survive a restart;
//   - neither: accounts and limits in memory, for this process only.
//
// The keys of -api-key and INFERKIT_API_KEYS are static keys of the
// default account; a tier they or -tier give pins its tier.
func openBackends(ctx context.Context, o options, logger *slog.Logger) (b backends, err error) {
	keys, tier, err := staticKeys(o.keys, o.tier)
	if err != nil {
		return backends{}, err
	}
	var store account.Store
	b.close = func() error { return nil }
	switch {
	case o.redis != "":
		addr := redactAddr(o.redis) // for messages: never the password
		opts := &redis.Options{Addr: o.redis}
		if strings.Contains(o.redis, "://") {
			if opts, err = redis.ParseURL(o.redis); err != nil {
				var ue *url.Error
				if errors.As(err, &ue) {
					ue.URL = addr
				}
				return backends{}, fmt.Errorf("-redis %s: %w", addr, err)
			}
		}
		rdb := redis.NewClient(opts)
		b.close = rdb.Close
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := rdb.Ping(pctx).Err(); err != nil {
			rdb.Close()
			return backends{}, fmt.Errorf("-redis %s: %w", addr, err)
		}
		if b.limiter, err = redislimit.New(redislimit.Config{Client: rdb}); err == nil {
			if b.responses, err = rediscache.New(rediscache.Config{Client: rdb}); err == nil {
				store, err = redisaccount.New(redisaccount.Config{Client: rdb})
			}
		}
	case o.accounts != "":
		var bolt *account.Bolt
		if bolt, err = account.OpenBolt(o.accounts); err != nil {
			return backends{}, fmt.Errorf("-accounts: %w", err)
		}
		store, b.close = bolt, bolt.Close
		b.limiter, err = ratelimit.NewDurableMemory(account.Ledger(bolt))
		logger.Info("inferkit-server: keeping accounts, keys, credits and spend in a file", "path", o.accounts)
	default:
		store, b.limiter = account.NewMemory(), ratelimit.NewMemory()
	}
	b.store = store
	if err == nil {
		b.accounts, err = account.New(ctx, account.Config{Store: store, StaticKeys: keys, SecretFile: o.secretFile, Logger: logger, Billing: o.billing})
	}
	if err == nil && o.redis != "" {
		if o.secretFile != "" {
			logger.Info("inferkit-server: the operator secret is kept in Redis and in a file, which gives it back to a Redis that lost its data", "secret_file", o.secretFile)
		} else {
			logger.Info("inferkit-server: the operator secret is kept in Redis only: a Redis that loses it while it holds keys is refused at start-up (see -secret-file)")
		}
	}
	if err == nil && tier != "" {
		_, err = b.accounts.SetTier(ctx, account.DefaultAccount, tier)
	}
	if err != nil {
		return backends{}, errors.Join(err, b.close())
	}
	return b, nil
}

// either returns the file store of -store when there is one, else the
// shared store of -redis (nil without one).
func either(file, redis cache.Store) cache.Store {
	if file != nil {
		return file
	}
	return redis
}

// withConsole serves the console's pages (/, /login, /logout, /api-keys
// and below) from con, and every other request from api: a path the
// console has no page for, a method its pages do not take, and an
// unclean path (which a ServeMux would redirect) all reach the API, for
// its JSON answers.
func withConsole(api http.Handler, con *console.Console) http.Handler {
	pages := http.NewServeMux()
	con.Register(pages)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.EscapedPath(); p != "" && p[0] == '/' && path.Clean(p) == p {
			if _, pattern := pages.Handler(r); pattern != "" {
				pages.ServeHTTP(w, r)
				return
			}
		}
		api.ServeHTTP(w, r)
	})
}
