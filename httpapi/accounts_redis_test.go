package httpapi_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/account/redisaccount"
	"github.com/inferkit/inferkit/internal/redistest"
	"github.com/inferkit/inferkit/ratelimit"
	"github.com/inferkit/inferkit/ratelimit/redislimit"
)

// TestAccountsReplicas: two Handlers, each with its own Accounts and
// redislimit Limiter on its own connections to one Redis server, are
// replicas of one service. A key made through one's admin API works on
// the other; revoked on one, it is refused by the other at once. Under
// requests racing through both, the key's tier admits exactly its
// request limit in all, and the account's monthly spend, as either
// admin API reports it, is exactly the cost of the admitted requests.
func TestAccountsReplicas(t *testing.T) {
	sock := redistest.Start(t)
	var replicas [2]*accountsEnv
	for i := range replicas {
		store, err := redisaccount.New(redisaccount.Config{Client: redistest.Client(t, sock)})
		if err != nil {
			t.Fatal(err)
		}
		l, err := redislimit.New(redislimit.Config{Client: redistest.Client(t, sock)})
		if err != nil {
			t.Fatal(err)
		}
		replicas[i] = newAccountsEnv(t, store, l)
	}
	a, b := replicas[0], replicas[1]
	advance := func(d time.Duration) {
		for _, r := range replicas {
			r.clock.Advance(d)
		}
	}

	admin(t, a.h, "POST", "/v1/admin/accounts", `{"id":"acct_r","name":"Replicated"}`, http.StatusCreated)
	if got := admin(t, b.h, "GET", "/v1/admin/accounts/acct_r", "", 200); got["name"] != "Replicated" {
		t.Fatalf("the account on the other replica: %v", got)
	}
	gone := admin(t, a.h, "POST", "/v1/admin/api-keys", `{"name":"to revoke","account":"acct_r"}`, http.StatusCreated)
	if w := do(b.h, "GET", "/v1/models", field(gone, "key"), ""); w.Code != http.StatusOK {
		t.Fatalf("a key made on one replica, on the other: %d %s", w.Code, w.Body)
	}
	admin(t, b.h, "DELETE", "/v1/admin/api-keys/"+field(gone, "id"), "", 200)
	for i, r := range replicas {
		if w := do(r.h, "GET", "/v1/models", field(gone, "key"), ""); w.Code != http.StatusUnauthorized {
			t.Errorf("replica %d: the key revoked on the other: %d %s", i, w.Code, w.Body)
		}
	}

	// A fresh key, in a fresh window: racing requests through both,
	// with few output tokens each, so that the request limit is the one
	// they reach (a reservation holds its output tokens until it
	// settles).
	body := `{"model":"core-2-5-mini","max_tokens":8,"messages":[{"role":"user","content":"Hi"}]}`
	k := admin(t, b.h, "POST", "/v1/admin/api-keys", `{"name":"racing","account":"acct_r"}`, http.StatusCreated)
	advance(time.Minute)
	const n = 3 * 20 // three times Default's request limit
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Go(func() {
			w := do(replicas[i%2].h, "POST", "/v1/chat/completions", field(k, "key"), body)
			codes[i] = w.Code
		})
	}
	wg.Wait()
	count := map[int]int{}
	for _, c := range codes {
		count[c]++
	}
	if count[http.StatusOK] != int(ratelimit.Default.Requests) || count[http.StatusTooManyRequests] != n-int(ratelimit.Default.Requests) {
		t.Fatalf("%d racing requests through two replicas: %v, want %d × 200 and the rest 429", n, count, ratelimit.Default.Requests)
	}
	want := ratelimit.Money(ratelimit.Default.Requests) * chatCost(t)
	for i, r := range replicas {
		u := admin(t, r.h, "GET", "/v1/admin/usage?account=acct_r", "", 200)
		if u["spend_usd"] != want.String() || u["held_usd"] != "0" || u["requests"] != float64(ratelimit.Default.Requests) {
			t.Errorf("replica %d: usage %v, want %s USD spent on %d requests", i, u, want, ratelimit.Default.Requests)
		}
	}
}
