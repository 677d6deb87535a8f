package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/ratelimit"
)

// TestAccountsSurviveRestart runs a Handler on accounts in a bbolt file
// and a durable limiter on its ledger, as the example server does with
// -accounts, closes everything, and starts again on the same file: the
// account, its key (which authenticates, under the same id), its
// credits, tier, plan, login and the month's spend are all there, and
// the spend goes on from where it was.
func TestAccountsSurviveRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "accounts.db")
	// start opens the file and a Handler on it; stop closes the file.
	start := func(advance time.Duration) (e *accountsEnv, stop func()) {
		t.Helper()
		store, err := account.OpenBolt(path)
		if err != nil {
			t.Fatal(err)
		}
		l, err := ratelimit.NewDurableMemory(account.Ledger(store))
		if err != nil {
			t.Fatal(err)
		}
		e = newAccountsEnv(t, store, l)
		e.clock.Advance(advance)
		return e, func() {
			if err := store.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}

	e, stop := start(0)
	admin(t, e.h, "POST", "/v1/admin/accounts", `{"id":"acct_d","name":"Durable","owner":"d@example.test","password":"a durable password"}`, http.StatusCreated)
	k := admin(t, e.h, "POST", "/v1/admin/api-keys", `{"name":"kept","account":"acct_d"}`, http.StatusCreated)
	admin(t, e.h, "POST", "/v1/admin/credits", `{"id":"pay_1","account":"acct_d","amount_usd":"40"}`, 200)
	admin(t, e.h, "POST", "/v1/admin/accounts/acct_d/plan", `{"plan":"team","trial":true}`, 200)
	for range 3 {
		if w := do(e.h, "POST", "/v1/chat/completions", field(k, "key"), chatBody); w.Code != 200 {
			t.Fatalf("chat: %d %s", w.Code, w.Body)
		}
	}
	before := admin(t, e.h, "GET", "/v1/admin/accounts/acct_d", "", 200)
	usage := admin(t, e.h, "GET", "/v1/admin/usage?account=acct_d", "", 200)
	if usage["spend_usd"] != (3*chatCost(t)).String() || usage["requests"] != float64(3) {
		t.Errorf("usage before the restart: %v", usage)
	}
	stop()

	e, stop = start(time.Hour)
	defer stop()
	if after := admin(t, e.h, "GET", "/v1/admin/accounts/acct_d", "", 200); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the account after the restart:\n%v\nwant\n%v", after, before)
	}
	if u := admin(t, e.h, "GET", "/v1/admin/usage?account=acct_d", "", 200); fmt.Sprint(u) != fmt.Sprint(usage) {
		t.Errorf("usage after the restart:\n%v\nwant\n%v", u, usage)
	}
	if w := do(e.h, "POST", "/v1/chat/completions", field(k, "key"), chatBody); w.Code != 200 || w.Header().Get("X-Ratelimit-Limit-Requests") != "200" {
		t.Fatalf("the key after the restart: %d (limit %s) %s", w.Code, w.Header().Get("X-Ratelimit-Limit-Requests"), w.Body)
	}
	keys := dataOf(t, admin(t, e.h, "GET", "/v1/admin/api-keys?account=acct_d", "", 200))
	if len(keys) != 1 || keys[0]["id"] != k["id"] || keys[0]["last_used_at"] != float64(e.clock.Now().Unix()) {
		t.Errorf("the key after the restart: %v, want id %v used now", keys, k["id"])
	}
	if u := admin(t, e.h, "GET", "/v1/admin/usage?account=acct_d", "", 200); u["spend_usd"] != (4*chatCost(t)).String() || u["requests"] != float64(4) {
		t.Errorf("usage after a request more: %v", u)
	}
	if _, _, err := e.accounts.Login(context.Background(), "", "d@example.test", "a durable password"); err != nil {
		t.Errorf("login after the restart: %v", err)
	}
}
