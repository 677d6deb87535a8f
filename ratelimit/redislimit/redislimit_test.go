package redislimit_test

import (
	"context"
	"errors"
	"fmt"
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
	ratelimittest.Run(t, func(t *testing.T) ratelimit.Limiter {
		n++ // a fresh prefix per subtest: an empty limiter
		l, err := redislimit.New(redislimit.Config{Client: rdb, Prefix: fmt.Sprintf("test%d:", n)})
		if err != nil {
			t.Fatal(err)
		}
		return l
	})
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
