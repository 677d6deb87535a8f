package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inferkit/inferkit/cache"
	"github.com/inferkit/inferkit/cache/rediscache"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/ratelimit"
	"github.com/inferkit/inferkit/ratelimit/redislimit"
)

// parseKey reads an -api-key value: KEY or KEY:TIER, where TIER is
// default, tier2 or tier3. A key that itself holds a colon takes an
// explicit tier: "a:b:default".
func parseKey(s string) (httpapi.APIKey, error) {
	s = strings.TrimSpace(s)
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return httpapi.APIKey{Key: s, Tier: ratelimit.Default}, nil
	}
	tier, err := ratelimit.LookupTier(s[i+1:])
	if err != nil {
		return httpapi.APIKey{}, fmt.Errorf("-api-key KEY:%s: %w", s[i+1:], err)
	}
	if s[:i] == "" {
		return httpapi.APIKey{}, fmt.Errorf("-api-key: empty key before %q", s[i:])
	}
	return httpapi.APIKey{Key: s[:i], Tier: tier}, nil
}

// tieredKeys parses every -api-key value.
func tieredKeys(values []string) ([]httpapi.APIKey, error) {
	keys := make([]httpapi.APIKey, 0, len(values))
	for _, v := range values {
		k, err := parseKey(v)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// shared returns the rate limiter and the store of responses shared
// through the Redis server at addr (host:port, or a redis:// URL) by
// every replica started with the same -redis; without addr, an in-memory
// limiter and no store (the Handler's in-memory default). close releases
// the connection.
func shared(ctx context.Context, addr string) (l ratelimit.Limiter, store cache.Store, close func() error, err error) {
	if addr == "" {
		return ratelimit.NewMemory(), nil, func() error { return nil }, nil
	}
	opts := &redis.Options{Addr: addr}
	if strings.Contains(addr, "://") {
		if opts, err = redis.ParseURL(addr); err != nil {
			return nil, nil, nil, fmt.Errorf("-redis: %w", err)
		}
	}
	rdb := redis.NewClient(opts)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		rdb.Close()
		return nil, nil, nil, fmt.Errorf("-redis %s: %w", addr, err)
	}
	if l, err = redislimit.New(redislimit.Config{Client: rdb}); err == nil {
		store, err = rediscache.New(rediscache.Config{Client: rdb})
	}
	if err != nil {
		rdb.Close()
		return nil, nil, nil, err
	}
	return l, store, rdb.Close, nil
}

// either returns the file store of -store when there is one, else the
// shared store of -redis (nil without one).
func either(file, redis cache.Store) cache.Store {
	if file != nil {
		return file
	}
	return redis
}
