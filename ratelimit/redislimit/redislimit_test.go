package redislimit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferkit/inferkit/internal/redistest"
	"github.com/inferkit/inferkit/ratelimit"
	"github.com/inferkit/inferkit/ratelimit/ratelimittest"
	"github.com/inferkit/inferkit/ratelimit/redislimit"
)

func TestRedis(t *testing.T) {
	sock := redistest.Start(t)
	rdb := redistest.Client(t, sock)
	n := 0
	empty := func(t *testing.T) *redislimit.Limiter {
		n++ // a fresh prefix per subtest: an empty limiter
		l, err := redislimit.New(redislimit.Config{Client: rdb, Prefix: fmt.Sprintf("test%d:", n)})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	ratelimittest.Run(t, func(t *testing.T) ratelimit.Limiter { return empty(t) })
	ratelimittest.RunQuotas(t, func(t *testing.T) ratelimit.Quotas { return empty(t) })
}

// TestReplicas races three limiters, each with its own connection, on one
// server: together they admit exactly the limit.
func TestReplicas(t *testing.T) {
	sock := redistest.Start(t)
	var replicas []*redislimit.Limiter
	for range 3 {
		l, err := redislimit.New(redislimit.Config{Client: redistest.Client(t, sock)})
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, l)
	}
	now := time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)
	var (
		wg       sync.WaitGroup
		admitted atomic.Int64
	)
	for i := range 90 {
		wg.Go(func() {
			_, err := replicas[i%3].Reserve(context.Background(), ratelimit.Request{Key: "shared", Tier: ratelimit.Tier2, InputTokens: 5_000}, now)
			switch {
			case err == nil:
				admitted.Add(1)
			case !errors.Is(err, ratelimit.ErrRateLimited):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := admitted.Load(); got != 60 { // 300,000 / 5,000
		t.Fatalf("three replicas admitted %d, want 60", got)
	}
}

func TestNewNeedsClient(t *testing.T) {
	if _, err := redislimit.New(redislimit.Config{}); err == nil {
		t.Fatal("New without a client succeeded")
	}
}

// TestOneSlotPerAccount: every Redis key of an account's requests,
// windows and quotas carries the account's hash tag, so that each script
// touches one Redis Cluster slot; an account's name cannot break out of
// its tag.
func TestOneSlotPerAccount(t *testing.T) {
	sock := redistest.Start(t)
	rdb := redistest.Client(t, sock)
	l, err := redislimit.New(redislimit.Config{Client: rdb, Prefix: "p:"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)
	for _, acct := range []string{"acme", "a}b{c:d"} {
		tier := ratelimit.Tier{Name: "t", Requests: 10, MaxMonthlySpend: ratelimit.Dollar}
		for _, k := range []string{"key_1", "key}:2"} {
			res, err := l.Reserve(ctx, ratelimit.Request{Key: k, Account: acct, Tier: tier, Prices: ratelimit.Prices{Request: ratelimit.Cent}}, now)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Settle(ctx, res, ratelimit.Usage{Requests: 1}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.UseQuota(ctx, ratelimit.QuotaRequest{Account: acct, Plan: ratelimit.Free, User: "ann", Reviews: 1}, now); err != nil {
			t.Fatal(err)
		}
		if u, err := l.Usage(ctx, acct, now); err != nil || u.Spent != 2*ratelimit.Cent || u.Requests != 2 {
			t.Fatalf("usage of %q: %+v, %v", acct, u, err)
		}
	}
	keys, err := rdb.Keys(ctx, "p:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]int{}
	for _, k := range keys {
		open, end := strings.IndexByte(k, '{'), strings.IndexByte(k, '}')
		if open < 0 || end < open {
			t.Fatalf("key %q has no hash tag", k)
		}
		tags[k[open+1:end]]++
	}
	// Each account: two keys' log and amounts, its month, its users.
	if len(tags) != 2 || tags["acme"] != 6 || tags["a%7Db%7Bc%3Ad"] != 6 {
		t.Fatalf("hash tags %v of keys %q, want the two accounts' with 6 keys each", tags, keys)
	}
}
