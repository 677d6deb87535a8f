package httpapi_test

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/account/redisaccount"
	"github.com/inferkit/inferkit/internal/redistest"
	"github.com/inferkit/inferkit/policy"
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
		store, l := redisBackends(t, sock)
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
	if count[http.StatusOK] != int(policy.Default.Requests) || count[http.StatusTooManyRequests] != n-int(policy.Default.Requests) {
		t.Fatalf("%d racing requests through two replicas: %v, want %d × 200 and the rest 429", n, count, policy.Default.Requests)
	}
	want := ratelimit.Money(policy.Default.Requests) * chatCost(t)
	for i, r := range replicas {
		u := admin(t, r.h, "GET", "/v1/admin/usage?account=acct_r", "", 200)
		if u["spend_usd"] != want.String() || u["held_usd"] != "0" || u["requests"] != float64(policy.Default.Requests) {
			t.Errorf("replica %d: usage %v, want %s USD spent on %d requests", i, u, want, policy.Default.Requests)
		}
	}
}

// redisBackends returns an account store and a limiter on connections
// of their own to the Redis server at sock, as a replica has them.
func redisBackends(t *testing.T, sock string) (account.Store, ratelimit.Limiter) {
	t.Helper()
	store, err := redisaccount.New(redisaccount.Config{Client: redistest.Client(t, sock)})
	if err != nil {
		t.Fatal(err)
	}
	l, err := redislimit.New(redislimit.Config{Client: redistest.Client(t, sock)})
	if err != nil {
		t.Fatal(err)
	}
	return store, l
}

// TestRedisOutage: while the Redis server that keeps the accounts and the
// limits is down, every API style answers 503 with Retry-After in its
// own error shape (not 500), the admin API too, and /readyz is 503; once
// Redis is back (restarted with its data), the same key is served again
// and /readyz is 200.
func TestRedisOutage(t *testing.T) {
	sock := redistest.Start(t)
	rdb := redistest.Client(t, sock)
	store, err := redisaccount.New(redisaccount.Config{Client: rdb})
	if err != nil {
		t.Fatal(err)
	}
	l, err := redislimit.New(redislimit.Config{Client: rdb})
	if err != nil {
		t.Fatal(err)
	}
	e := newAccountsEnv(t, store, l)
	k := field(admin(t, e.h, "POST", "/v1/admin/api-keys", `{"name":"outage"}`, http.StatusCreated), "key")
	routes := []struct{ name, method, path, key, body, wantType string }{
		{"chat", "POST", "/v1/chat/completions", k, chatBody, "api_error"},
		{"chat stream", "POST", "/v1/chat/completions", k, streaming(chatBody), "api_error"},
		{"messages", "POST", "/v1/messages", k, messagesBody, "api_error"},
		{"responses", "POST", "/v1/responses", k, responsesBody, "api_error"},
		{"models", "GET", "/v1/models", k, "", "api_error"},
		{"admin", "GET", "/v1/admin/accounts", adminKey, "", "api_error"},
	}
	check := func(t *testing.T, want int) {
		t.Helper()
		for _, rt := range routes {
			w := do(e.h, rt.method, rt.path, rt.key, rt.body)
			if w.Code != want {
				t.Errorf("%s: %d, want %d: %s", rt.name, w.Code, want, w.Body)
				continue
			}
			if want != http.StatusServiceUnavailable {
				continue
			}
			if ra := w.Header().Get("Retry-After"); ra == "" || ra == "0" {
				t.Errorf("%s: 503 without Retry-After", rt.name)
			}
			if typ, _, _, msg := errorOf(t, w.Body.Bytes()); typ != rt.wantType || strings.Contains(msg, sock) {
				t.Errorf("%s: error type %q, message %q", rt.name, typ, msg)
			}
		}
		if w := do(e.h, "GET", "/readyz", "", ""); (w.Code == http.StatusOK) != (want == http.StatusOK) {
			t.Errorf("/readyz: %d while the routes answer %d: %s", w.Code, want, w.Body)
		} else if w.Code != http.StatusOK && w.Header().Get("Retry-After") == "" {
			t.Error("/readyz: 503 without Retry-After")
		}
	}
	check(t, http.StatusOK)

	// Down: saved first, so that it comes back with its data.
	_ = rdb.ShutdownSave(t.Context()).Err()
	for rdb.Ping(t.Context()).Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	check(t, http.StatusServiceUnavailable)

	// Back, on the same socket, from its saved data.
	restartRedis(t, sock)
	for rdb.Ping(t.Context()).Err() != nil {
		time.Sleep(10 * time.Millisecond)
	}
	check(t, http.StatusOK)
}

// restartRedis starts redis-server again on the socket (and folder) of a
// server of redistest.Start that has shut down, loading the data it
// saved; it stops when the test ends.
func restartRedis(t *testing.T, sock string) {
	t.Helper()
	dir := filepath.Dir(sock)
	cmd := exec.Command("redis-server", "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
}
