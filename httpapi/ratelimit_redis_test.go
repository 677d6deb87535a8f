package httpapi_test

import (
	"net/http"
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
