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
	"github.com/inferkit/inferkit/policy"
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
			_, err := replicas[i%3].Reserve(context.Background(), ratelimit.Request{Key: "shared", Tier: policy.Tier2, InputTokens: 5_000}, now)
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
		if _, err := l.UseQuota(ctx, ratelimit.QuotaRequest{Account: acct, Plan: policy.Free, User: "ann", Reviews: 1}, now); err != nil {
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

// TestLeaseExpires: a reservation whose process died (neither settled nor
// cancelled) holds its cost against the account's spend until
// ratelimit.Lease has passed, then the account's next Reserve gives it
// back; a Settle that comes after all charges its whole cost. Settled and
// cancelled reservations leave no lease behind.
func TestLeaseExpires(t *testing.T) {
	sock := redistest.Start(t)
	rdb := redistest.Client(t, sock)
	l, err := redislimit.New(redislimit.Config{Client: rdb})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	t0 := time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)
	prices := ratelimit.Prices{Request: ratelimit.Dollar}
	tier := ratelimit.Tier{Name: "capped", MaxMonthlySpend: 100 * ratelimit.Dollar}
	reserve := func(key string, at time.Time) ratelimit.Reservation {
		t.Helper()
		res, err := l.Reserve(ctx, ratelimit.Request{Key: key, Account: "acct", Tier: tier, Prices: prices}, at)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	usage := func(at time.Time) ratelimit.MonthUsage {
		t.Helper()
		u, err := l.Usage(ctx, "acct", at)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	dead := reserve("killed", t0) // its process is killed: no Settle, no Cancel
	live := reserve("live", t0.Add(ratelimit.Lease-time.Minute))
	if u := usage(t0); u.Held != 2*ratelimit.Dollar || u.Spent != 2*ratelimit.Dollar {
		t.Fatalf("two reservations in flight: held %s, spent %s; want 2 USD each", u.Held, u.Spent)
	}
	if err := l.Settle(ctx, live, ratelimit.Usage{Requests: 1}); err != nil {
		t.Fatal(err)
	}
	// Before the lease ends, the dead one still holds its cost.
	reserve("other", t0.Add(ratelimit.Lease-time.Second))
	if u := usage(t0); u.Held != 2*ratelimit.Dollar {
		t.Fatalf("before the lease ends: held %s, want 2 USD (the dead one and the latest)", u.Held)
	}
	// After it, the next Reserve gives the dead one's cost back.
	reserve("other", t0.Add(ratelimit.Lease+time.Second))
	if u := usage(t0); u.Held != 2*ratelimit.Dollar || u.Spent != 3*ratelimit.Dollar {
		t.Fatalf("after the lease: held %s, spent %s; want the two latest held and 3 USD spent in all", u.Held, u.Spent)
	}
	// A Settle after all (a request that outlived its lease) charges its
	// whole cost, once.
	for range 2 {
		if err := l.Settle(ctx, dead, ratelimit.Usage{Requests: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if u := usage(t0); u.Held != 2*ratelimit.Dollar || u.Spent != 4*ratelimit.Dollar || u.Requests != 2 {
		t.Fatalf("a late Settle: held %s, spent %s, %d requests; want 2 USD, 4 USD, 2", u.Held, u.Spent, u.Requests)
	}
	// Settled and cancelled ones leave no lease.
	for _, key := range []string{"a", "b"} {
		res := reserve(key, t0.Add(2*ratelimit.Lease))
		if key == "a" {
			err = l.Settle(ctx, res, ratelimit.Usage{Requests: 1})
		} else {
			err = l.Cancel(ctx, res)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// Left: the lease of the reservation made at Lease+1s, never settled
	// (the one made a second before the Lease expired at 2×Lease).
	if n, err := rdb.ZCard(ctx, redislimit.DefaultPrefix+"{acct}:leases").Result(); err != nil || n != 1 {
		t.Fatalf("leases left: %d, %v; want 1, of the latest reservation never settled", n, err)
	}
	if u := usage(t0); u.Held != ratelimit.Dollar {
		t.Fatalf("held at the end: %s, want the 1 USD of the one lease left", u.Held)
	}
}
