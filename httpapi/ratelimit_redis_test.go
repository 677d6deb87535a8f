package httpapi_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/internal/redistest"
	"github.com/inferkit/inferkit/ratelimit"
	"github.com/inferkit/inferkit/ratelimit/redislimit"
)

// TestRateLimitReplicas: two Handlers, each with its own Redis
// connection, share one key's limits.
func TestRateLimitReplicas(t *testing.T) {
	sock := redistest.Start(t)
	tier := ratelimit.Tier{Name: "three", Requests: 3}
	var replicas []*env
	for range 2 {
		l, err := redislimit.New(redislimit.Config{Client: redistest.Client(t, sock)})
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, limitedEnv(t, tier, func(cfg *httpapi.Config, _ *fakeEngine) {
			// The replicas' keys have the same ids: their ids derive
			// from one secret.
			keys, err := httpapi.NewSharedKeys([]byte("the replicas' secret, 32 bytes or more"), httpapi.APIKey{Key: key, Tier: tier})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Keys, cfg.Limiter = keys, l
		}))
	}
	codes := map[int]int{}
	for i := range 6 {
		w := do(replicas[i%2].h, "POST", "/v1/chat/completions", key, chatBody)
		codes[w.Code]++
	}
	if codes[http.StatusOK] != 3 || codes[http.StatusTooManyRequests] != 3 {
		t.Fatalf("two replicas answered %v, want 3 × 200 and 3 × 429", codes)
	}
}

// TestSpendCapReplicas: two Handlers on one Redis, racing requests of two
// keys of one account, admit exactly what the account's monthly cap
// allows, and the month's spend and usage are exact (run with -race).
func TestSpendCapReplicas(t *testing.T) {
	sock := redistest.Start(t)
	tier := ratelimit.Tier{Name: "capped", Requests: 1_000, MaxMonthlySpend: 10 * smallCost}
	keys := accountKeys{
		key:      {KeyID: "key_a", Account: "acme", Tier: tier},
		otherKey: {KeyID: "key_b", Account: "acme", Tier: tier},
	}
	var replicas []*env
	var limiter *redislimit.Limiter
	for range 2 {
		l, err := redislimit.New(redislimit.Config{Client: redistest.Client(t, sock)})
		if err != nil {
			t.Fatal(err)
		}
		limiter = l
		replicas = append(replicas, newEnv(t, func(cfg *httpapi.Config, f *fakeEngine) {
			smallRequests(f)
			cfg.Keys, cfg.Limiter = keys, l
		}))
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		codes = map[int]int{}
	)
	for i := range 30 {
		wg.Go(func() {
			w := do(replicas[i%2].h, "POST", "/v1/chat/completions", []string{key, otherKey}[i/2%2], smallChat)
			if w.Code == http.StatusTooManyRequests {
				if _, code, _, _ := errorOf(t, w.Body.Bytes()); code != "insufficient_quota" {
					t.Errorf("429 with code %q, want insufficient_quota", code)
				}
			}
			mu.Lock()
			codes[w.Code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[http.StatusOK] != 10 || codes[http.StatusTooManyRequests] != 20 {
		t.Fatalf("two replicas answered %v, want 10 × 200 and 20 × 429", codes)
	}
	u, err := limiter.Usage(context.Background(), "acme", replicas[0].clock.Now())
	want := ratelimit.MonthUsage{Month: "2026-01", Spent: 10 * smallCost, Requests: 10, InputTokens: 50, OutputTokens: 20}
	if err != nil || u != want {
		t.Fatalf("usage %+v, %v; want %+v", u, err, want)
	}
}
