package httpapi_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/internal/redistest"
	"github.com/inferkit/inferkit/ratelimit"
)

// prepaidLadder has one tier, unlocked by 5 USD, whose rates do not bind
// the tests below, so that the balance is the limit they reach.
var prepaidLadder = ratelimit.Ladder{Tiers: []ratelimit.Tier{{Name: "starter", Requests: 10_000,
	InputTokens: 10_000_000, OutputTokens: 10_000_000, Credits: 5 * ratelimit.Dollar}}}

// prepaidReplica is a Handler of prepaid accounts on a Redis server,
// where core-2-5-mini costs 0.2 USD per request and nothing per token.
func prepaidReplica(t *testing.T, sock string) *accountsEnv {
	t.Helper()
	store, l := redisBackends(t, sock)
	return accountsEnvWith(t, store, l, func(ac *account.Config, cfg *httpapi.Config) {
		ac.Billing, ac.Tiers = account.Prepaid, prepaidLadder
		for i := range cfg.Models {
			if cfg.Models[i].ID == "core-2-5-mini" {
				p := &cfg.Models[i].Pricing
				p.Prompt, p.Completion, p.InputCacheReads, p.InputCacheWrites, p.Request = "0", "0", "0", "0", "0.2"
			}
		}
	})
}

// TestPrepaidReplicas: two replicas, each with its own Accounts and
// limiter on one Redis server, bill one account prepaid. Before its
// first purchase the account has no tier, and every style refuses its
// requests with 429 insufficient_quota before the engine runs. After a
// purchase of 5 USD (25 requests at 0.2 USD), 60 requests racing
// through both replicas admit exactly 25, and the balance, as either
// admin API reports it, stops at exactly 0; the engines ran exactly the
// admitted requests. A purchase through one replica lets the other
// serve at once.
func TestPrepaidReplicas(t *testing.T) {
	sock := redistest.Start(t)
	replicas := [2]*accountsEnv{prepaidReplica(t, sock), prepaidReplica(t, sock)}
	a, b := replicas[0], replicas[1]
	calls := func() int { return a.eng.calls() + b.eng.calls() }

	admin(t, a.h, "POST", "/v1/admin/accounts", `{"id":"acct_pp","name":"Prepaid"}`, http.StatusCreated)
	k := field(admin(t, b.h, "POST", "/v1/admin/api-keys", `{"name":"prepaid","account":"acct_pp"}`, http.StatusCreated), "key")
	u := admin(t, a.h, "GET", "/v1/admin/usage?account=acct_pp", "", 200)
	if u["tier"] != nil || u["balance_usd"] != "0" || u["billing"] != "prepaid" {
		t.Fatalf("before any purchase: %v, want no tier and a balance of 0", u)
	}
	for _, rt := range []struct{ path, body, typ, code string }{
		{"/v1/chat/completions", chatBody, "rate_limit_error", "insufficient_quota"},
		{"/v1/messages", messagesBody, "rate_limit_error", ""},
		{"/v1/responses", responsesBody, "rate_limit_error", "insufficient_quota"},
	} {
		w := do(b.h, "POST", rt.path, k, rt.body)
		typ, code, _, msg := errorOf(t, w.Body.Bytes())
		if w.Code != http.StatusTooManyRequests || typ != rt.typ || code != rt.code || !strings.Contains(msg, "no tier yet") {
			t.Errorf("%s without a purchase: %d %q %q %q", rt.path, w.Code, typ, code, msg)
		}
	}
	if n := calls(); n != 0 {
		t.Fatalf("the engines ran %d refused requests", n)
	}

	admin(t, b.h, "POST", "/v1/admin/credits", `{"id":"pay_1","account":"acct_pp","amount_usd":"5"}`, 200)
	const n = 60
	var wg sync.WaitGroup
	codes := make([]int, n)
	quota := make([]bool, n)
	for i := range n {
		wg.Go(func() {
			w := do(replicas[i%2].h, "POST", "/v1/chat/completions", k, chatBody)
			codes[i] = w.Code
			quota[i] = strings.Contains(w.Body.String(), `"insufficient_quota"`)
		})
	}
	wg.Wait()
	count := map[int]int{}
	for i, c := range codes {
		count[c]++
		if c == http.StatusTooManyRequests && !quota[i] {
			t.Errorf("request %d: a 429 that is not insufficient_quota", i)
		}
	}
	if count[http.StatusOK] != 25 || count[http.StatusTooManyRequests] != n-25 {
		t.Fatalf("%d racing requests on 5 USD at 0.2 USD each: %v, want 25 × 200 and the rest 429", n, count)
	}
	if got := calls(); got != 25 {
		t.Errorf("the engines ran %d requests, want the 25 admitted", got)
	}
	for i, r := range replicas {
		u := admin(t, r.h, "GET", "/v1/admin/usage?account=acct_pp", "", 200)
		if u["balance_usd"] != "0" || u["held_balance_usd"] != "0" || u["tier"] != "starter" || u["credits_usd"] != "5" || u["spend_usd"] != "5" {
			t.Errorf("replica %d: usage %v, want a balance of exactly 0 after 5 USD spent", i, u)
		}
	}
	w := do(a.h, "POST", "/v1/chat/completions", k, chatBody)
	if _, code, _, msg := errorOf(t, w.Body.Bytes()); w.Code != http.StatusTooManyRequests || code != "insufficient_quota" ||
		!strings.Contains(msg, "0 USD left") || w.Header().Get("Retry-After") != "" {
		t.Fatalf("on an empty balance: %d %q %q, Retry-After %q", w.Code, code, msg, w.Header().Get("Retry-After"))
	}

	// A purchase through b tops the balance up for a at once.
	acct := admin(t, b.h, "POST", "/v1/admin/credits", `{"id":"pay_2","account":"acct_pp","amount_usd":"0.4"}`, 200)
	if acct["balance_usd"] != "0.4" {
		t.Errorf("the account after a top-up: %v", acct)
	}
	for i := range 3 {
		want := http.StatusOK
		if i == 2 {
			want = http.StatusTooManyRequests
		}
		if w := do(a.h, "POST", "/v1/chat/completions", k, chatBody); w.Code != want {
			t.Fatalf("request %d after a top-up of 2 requests: %d, want %d: %s", i+1, w.Code, want, w.Body)
		}
	}
}
