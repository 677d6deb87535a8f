package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/httpapi"
	adminapi "github.com/inferkit/inferkit/httpapi/admin"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// adminKey is the admin key of the tests.
const adminKey = "sk-admin-test-0123456789abcdef"

// accountsEnv is a Handler that authenticates through accounts on store
// (a fresh Memory when nil), with the admin API (package httpapi/admin)
// mounted in front of it as a host mounts it, and the limiter l (a fresh
// ratelimit.Memory when nil); static are the accounts' static keys. Its h
// serves both.
type accountsEnv struct {
	*env
	h        http.Handler
	accounts *account.Accounts
	admin    *adminapi.API
}

func newAccountsEnv(t *testing.T, store account.Store, l ratelimit.Limiter, static ...string) *accountsEnv {
	t.Helper()
	return accountsEnvWith(t, store, l, func(ac *account.Config, _ *httpapi.Config) { ac.StaticKeys = static })
}

// accountsEnvWith is newAccountsEnv with the accounts' and the Handler's
// configurations changed by edit.
func accountsEnvWith(t *testing.T, store account.Store, l ratelimit.Limiter, edit func(*account.Config, *httpapi.Config)) *accountsEnv {
	t.Helper()
	if store == nil {
		store = account.NewMemory()
	}
	if l == nil {
		l = ratelimit.NewMemory()
	}
	ae := &accountsEnv{}
	ae.env = newEnv(t, func(cfg *httpapi.Config, _ *fakeEngine) {
		ac := account.Config{Store: store, Now: cfg.Now, PasswordIterations: 1_000}
		edit(&ac, cfg)
		a, err := account.New(context.Background(), ac)
		if err != nil {
			t.Fatal(err)
		}
		ae.accounts = a
		ae.admin, err = adminapi.New(adminapi.Config{Key: adminKey, Accounts: a, Usage: l, Logger: cfg.Logger, Now: cfg.Now})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Keys, cfg.Accounts, cfg.RefuseKey, cfg.Limiter = nil, a, ae.admin.IsKey, l
	})
	ae.h = ae.admin.Mount(ae.env.h)
	return ae
}

// admin sends an admin request and decodes its answer, failing the test
// unless its status is want.
func admin(t *testing.T, h http.Handler, method, path, body string, want int) map[string]any {
	t.Helper()
	w := do(h, method, path, adminKey, body)
	if w.Code != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, w.Code, want, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	return decode(t, w.Body.Bytes())
}

// adminErr sends an admin request that must fail with status, code and
// param in the OpenAI error shape.
func adminErr(t *testing.T, h http.Handler, method, path, body string, status int, code, param string) string {
	t.Helper()
	w := do(h, method, path, adminKey, body)
	typ, gotCode, gotParam, msg := errorOf(t, w.Body.Bytes())
	wantType := "invalid_request_error"
	if status >= 500 {
		wantType = "api_error"
	}
	if w.Code != status || typ != wantType || gotCode != code || gotParam != param {
		t.Errorf("%s %s %s: %d %s %s %q, want %d %s %s %q: %s", method, path, body, w.Code, typ, gotCode, gotParam, status, wantType, code, param, w.Body)
	}
	return msg
}

// field returns m's field as a string ("<nil>" for null).
func field(m map[string]any, field string) string { return fmt.Sprint(m[field]) }

// obj returns m's field as an object.
func obj(t *testing.T, m map[string]any, field string) map[string]any {
	t.Helper()
	o, ok := m[field].(map[string]any)
	if !ok {
		t.Fatalf("%s is not an object: %v", field, m)
	}
	return o
}

// dataOf returns the objects of a list.
func dataOf(t *testing.T, m map[string]any) []map[string]any {
	t.Helper()
	if m["object"] != "list" {
		t.Fatalf("not a list: %v", m)
	}
	raw, _ := m["data"].([]any)
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i], _ = v.(map[string]any)
	}
	return out
}

// The admin routes are the admin API's, which a Handler does not serve;
// an admin key needs accounts and 16 characters; a Handler has one
// source of keys.
func TestAdminConfig(t *testing.T) {
	keys, _ := httpapi.NewStaticKeys(key)
	accts, err := account.New(context.Background(), account.Config{Store: account.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  httpapi.Config
		want string
	}{
		{"no keys", httpapi.Config{Engine: newFake()}, "Keys and Config.Accounts are nil"},
		{"both", httpapi.Config{Engine: newFake(), Keys: keys, Accounts: accts}, "both"},
	} {
		if _, err := httpapi.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		cfg  adminapi.Config
		want string
	}{
		{"admin without accounts", adminapi.Config{Key: adminKey}, "Config.Accounts is nil"},
		{"short admin key", adminapi.Config{Accounts: accts, Key: "sk-admin-short"}, "shorter than 16"},
	} {
		if _, err := adminapi.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
		if _, err := adminapi.New(tc.cfg); err != nil && strings.Contains(err.Error(), tc.cfg.Key) {
			t.Errorf("%s: the error holds the admin key", tc.name)
		}
	}
	// A Handler alone: no admin API.
	h, err := httpapi.New(httpapi.Config{Engine: newFake(), Accounts: accts})
	if err != nil {
		t.Fatal(err)
	}
	if w := do(h, "GET", "/v1/admin/accounts", adminKey, ""); w.Code != http.StatusNotFound {
		t.Errorf("admin API without an admin key: %d %s", w.Code, w.Body)
	}
}

// Every admin route refuses anything but the admin key with a 401 in
// OpenAI's shape, without reading the body: no key, an API key (a
// created one and a static one), a console session cookie, another
// scheme, a wrong or truncated admin key. The admin key is no API key.
func TestAdminAuthentication(t *testing.T) {
	e := newAccountsEnv(t, nil, nil, key)
	created := admin(t, e.h, "POST", "/v1/admin/api-keys", `{"name":"ci"}`, http.StatusCreated)
	apiKey := field(created, "key")
	routes := []struct{ method, path, body string }{
		{"POST", "/v1/admin/accounts", `{"name":"A"}`},
		{"GET", "/v1/admin/accounts", ""},
		{"GET", "/v1/admin/accounts/default", ""},
		{"POST", "/v1/admin/accounts/default/tier", `{"tier":"unlimited"}`},
		{"POST", "/v1/admin/accounts/default/plan", `{"plan":"team"}`},
		{"POST", "/v1/admin/api-keys", `{"name":"x"}`},
		{"GET", "/v1/admin/api-keys", ""},
		{"DELETE", "/v1/admin/api-keys/" + field(created, "id"), ""},
		{"POST", "/v1/admin/credits", `{"id":"pay_1","amount_usd":"1000"}`},
		{"GET", "/v1/admin/usage", ""},
	}
	for _, rt := range routes {
		for name, hdr := range map[string][2]string{
			"no key":          {},
			"API key":         {"Authorization", "Bearer " + apiKey},
			"static API key":  {"Authorization", "Bearer " + key},
			"console cookie":  {"Cookie", "inferkit_session=" + adminKey},
			"x-api-key":       {"X-Api-Key", adminKey},
			"basic":           {"Authorization", "Basic " + adminKey},
			"wrong admin key": {"Authorization", "Bearer " + adminKey + "x"},
			"truncated":       {"Authorization", "Bearer " + adminKey[:len(adminKey)-1]},
		} {
			r := httptest.NewRequest(rt.method, rt.path, strings.NewReader(rt.body))
			if hdr[0] != "" {
				r.Header.Set(hdr[0], hdr[1])
			}
			w := httptest.NewRecorder()
			e.h.ServeHTTP(w, r)
			if typ, code, _, _ := errorOf(t, w.Body.Bytes()); w.Code != http.StatusUnauthorized || typ != "invalid_request_error" || code != "invalid_api_key" {
				t.Errorf("%s %s with %s: %d %s", rt.method, rt.path, name, w.Code, w.Body)
			}
		}
	}
	// Nothing was done: the key still works, the account is as it was.
	if w := do(e.h, "GET", "/v1/models", apiKey, ""); w.Code != http.StatusOK {
		t.Errorf("the API key after the refusals: %d", w.Code)
	}
	if a := admin(t, e.h, "GET", "/v1/admin/accounts/default", "", 200); field(a, "tier") != "default" || field(a, "credits_usd") != "0" {
		t.Errorf("the account changed: %v", a)
	}
	// The admin key is no API key, on every style's routes.
	for _, rt := range []struct{ method, path, body string }{
		{"GET", "/v1/models", ""},
		{"POST", "/v1/chat/completions", chatBody},
		{"POST", "/v1/messages", messagesBody},
		{"POST", "/v1/responses", responsesBody},
	} {
		if w := do(e.h, rt.method, rt.path, adminKey, rt.body); w.Code != http.StatusUnauthorized {
			t.Errorf("%s %s with the admin key: %d %s", rt.method, rt.path, w.Code, w.Body)
		}
	}
	// A method a path does not take is a 405 naming the others.
	if w := do(e.h, "PUT", "/v1/admin/accounts", adminKey, ""); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD, POST" {
		t.Errorf("PUT: %d Allow %q", w.Code, w.Header().Get("Allow"))
	}
	if logs := e.logs.String(); strings.Contains(logs, adminKey[:20]) || strings.Contains(logs, apiKey) {
		t.Errorf("the logs hold a key:\n%s", logs)
	}
}

func TestAdminAccounts(t *testing.T) {
	e := newAccountsEnv(t, nil, nil)
	a := admin(t, e.h, "POST", "/v1/admin/accounts", `{"name":"Acme","owner":"ops@acme.test","password":"correct horse battery"}`, http.StatusCreated)
	id := field(a, "id")
	plan := obj(t, a, "plan")
	if a["object"] != "account" || !strings.HasPrefix(id, "acct_") || a["name"] != "Acme" || a["owner"] != "ops@acme.test" ||
		a["created_at"] != float64(e.clock.Now().Unix()) || a["credits_usd"] != "0" || a["tier"] != "default" || a["pinned_tier"] != nil ||
		plan["name"] != "free" || plan["state"] != "active" || plan["trial_ends_at"] != nil || plan["price_usd"] != "0" {
		t.Errorf("created: %v", a)
	}
	if _, ok := a["password"]; ok {
		t.Errorf("the password is echoed: %v", a)
	}
	named := admin(t, e.h, "POST", "/v1/admin/accounts", `{"id":"acct_named","name":"Named"}`, http.StatusCreated)
	if named["id"] != "acct_named" || named["owner"] != nil {
		t.Errorf("with an id: %v", named)
	}
	if got := admin(t, e.h, "GET", "/v1/admin/accounts/"+id, "", 200); fmt.Sprint(got) != fmt.Sprint(a) {
		t.Errorf("GET %s = %v, want %v", id, got, a)
	}
	var ids []string
	for _, o := range dataOf(t, admin(t, e.h, "GET", "/v1/admin/accounts", "", 200)) {
		ids = append(ids, field(o, "id"))
	}
	if slices.Sort(ids); len(ids) != 3 || !slices.Contains(ids, id) || !slices.Contains(ids, "acct_named") || !slices.Contains(ids, "default") {
		t.Errorf("list: %v", ids)
	}

	adminErr(t, e.h, "GET", "/v1/admin/accounts/acct_nope", "", 404, "not_found", "")
	adminErr(t, e.h, "POST", "/v1/admin/accounts", `{"id":"acct_named","name":"Again"}`, 409, "already_exists", "id")
	adminErr(t, e.h, "POST", "/v1/admin/accounts", `{"name":"Same owner","owner":"ops@acme.test","password":"another long password"}`, 409, "already_exists", "")
	for _, tc := range []struct{ body, code, param string }{
		{`{}`, "missing_required_parameter", "name"},
		{`{"name":" "}`, "missing_required_parameter", "name"},
		{`{"name":"A","owner":"a@b.test"}`, "missing_required_parameter", "password"},
		{`{"name":"A","password":"long enough password"}`, "missing_required_parameter", "owner"},
		{`{"name":"A","owner":"a@b.test","password":"short"}`, "invalid_value", "password"},
		{`{"name":"A","colour":"red"}`, "unknown_parameter", "colour"},
		{`{"name":7}`, "invalid_type", "name"},
		{`{"name":"A","id":"has space"}`, "invalid_value", "id"},
		{`{"name":"A","id":"` + strings.Repeat("i", 65) + `"}`, "invalid_value", "id"},
		{`{"name":"` + strings.Repeat("n", 101) + `"}`, "invalid_value", "name"},
		{`{"name":"A\u0007"}`, "invalid_value", "name"},
		{`{"name":"A","owner":"not an address","password":"long enough password"}`, "invalid_value", "owner"},
		{`{"name":"A","owner":"a@b.test","password":"long enough password` + strings.Repeat("p", 1024) + `"}`, "invalid_value", "password"},
		{`{"name":`, "invalid_json", ""},
		{`{"name":"A"} {}`, "invalid_json", ""},
	} {
		msg := adminErr(t, e.h, "POST", "/v1/admin/accounts", tc.body, 400, tc.code, tc.param)
		if strings.Contains(msg, "long enough password") {
			t.Errorf("the error repeats the password: %s", msg)
		}
	}
	if strings.Contains(e.logs.String(), "correct horse") {
		t.Error("the logs hold a password")
	}
}

// A key's secret is in its creation's answer only; the key works at once
// and is listed without it, with its last use; revoked, it gets 401 at
// once.
func TestAdminKeys(t *testing.T) {
	e := newAccountsEnv(t, nil, nil, key)
	admin(t, e.h, "POST", "/v1/admin/accounts", `{"id":"acct_a","name":"A"}`, http.StatusCreated)
	k := admin(t, e.h, "POST", "/v1/admin/api-keys", `{"name":"ci","account":"acct_a"}`, http.StatusCreated)
	secret, id := field(k, "key"), field(k, "id")
	if k["object"] != "api_key" || !strings.HasPrefix(secret, account.KeyPrefix) || !strings.HasPrefix(id, "key_") || k["name"] != "ci" ||
		k["account"] != "acct_a" || k["created_at"] != float64(e.clock.Now().Unix()) || k["last_used_at"] != nil ||
		k["hint"] != account.KeyPrefix+secret[len(account.KeyPrefix):][:2]+"…"+secret[len(secret)-4:] {
		t.Errorf("created: %v", k)
	}
	// The default account's keys: the static one, then one made without
	// an account.
	d := admin(t, e.h, "POST", "/v1/admin/api-keys", `{"name":"default's"}`, http.StatusCreated)
	if d["account"] != account.DefaultAccount {
		t.Errorf("a key without an account: %v", d)
	}

	e.clock.Advance(90 * time.Second)
	w := do(e.h, "POST", "/v1/chat/completions", secret, chatBody)
	if w.Code != 200 {
		t.Fatalf("the new key: %d %s", w.Code, w.Body)
	}
	list := dataOf(t, admin(t, e.h, "GET", "/v1/admin/api-keys?account=acct_a", "", 200))
	used := e.clock.Now().Truncate(time.Minute).Unix()
	if len(list) != 1 || list[0]["id"] != id || list[0]["last_used_at"] != float64(used) || list[0]["key"] != nil || list[0]["hint"] != k["hint"] {
		t.Errorf("list of acct_a: %v", list)
	}
	list = dataOf(t, admin(t, e.h, "GET", "/v1/admin/api-keys", "", 200))
	if len(list) != 2 || list[0]["static"] != true || list[0]["created_at"] != nil || list[1]["id"] != d["id"] {
		t.Errorf("list of the default account: %v", list)
	}
	adminErr(t, e.h, "GET", "/v1/admin/api-keys?account=acct_nope", "", 404, "not_found", "account")
	adminErr(t, e.h, "DELETE", "/v1/admin/api-keys/"+field(list[0], "id"), "", 409, "static_key", "")

	del := admin(t, e.h, "DELETE", "/v1/admin/api-keys/"+id, "", 200)
	if del["object"] != "api_key.deleted" || del["id"] != id || del["deleted"] != true {
		t.Errorf("deleted: %v", del)
	}
	if w := do(e.h, "POST", "/v1/chat/completions", secret, chatBody); w.Code != http.StatusUnauthorized {
		t.Errorf("the revoked key: %d %s", w.Code, w.Body)
	}
	adminErr(t, e.h, "DELETE", "/v1/admin/api-keys/"+id, "", 404, "not_found", "")
	if list := dataOf(t, admin(t, e.h, "GET", "/v1/admin/api-keys?account=acct_a", "", 200)); len(list) != 0 {
		t.Errorf("listed after revocation: %v", list)
	}

	for _, tc := range []struct {
		body        string
		status      int
		code, param string
	}{
		{`{}`, 400, "missing_required_parameter", "name"},
		{`{"name":"` + strings.Repeat("n", 101) + `"}`, 400, "invalid_value", "name"},
		{`{"name":"x\u0000"}`, 400, "invalid_value", "name"},
		{`{"name":"x","account":"acct_nope"}`, 404, "not_found", "account"},
		{`{"name":"x","scopes":[]}`, 400, "unknown_parameter", "scopes"},
	} {
		adminErr(t, e.h, "POST", "/v1/admin/api-keys", tc.body, tc.status, tc.code, tc.param)
	}
	// The secrets were shown once each, in their creation's answer.
	if logs := e.logs.String(); strings.Contains(logs, secret) || strings.Contains(logs, field(d, "key")) || strings.Contains(logs, key) {
		t.Errorf("the logs hold a secret:\n%s", logs)
	}
}

// chatCost returns what one chat completion of the fake engine (5 input,
// 2 output tokens) costs on core-2-5-mini.
func chatCost(t *testing.T) ratelimit.Money {
	t.Helper()
	m, _ := policy.Model(policy.Core25Mini)
	in, err1 := ratelimit.ParseMoney(m.Pricing.Prompt)
	out, err2 := ratelimit.ParseMoney(m.Pricing.Completion)
	if err1 != nil || err2 != nil || in == 0 || out == 0 {
		t.Fatalf("prices %+v: %v %v", m.Pricing, err1, err2)
	}
	return 5*in + 2*out
}

// Purchases unlock the tiers at once, through the admin API, for every
// key of the account: each request after a purchase carries its new
// tier's request limit. A payment recorded twice counts once; unlimited
// removes the limits and their headers; unpinning follows the credits
// again.
func TestAdminTierUnlock(t *testing.T) {
	e := newAccountsEnv(t, nil, nil)
	admin(t, e.h, "POST", "/v1/admin/accounts", `{"id":"acct_t","name":"T"}`, http.StatusCreated)
	var secrets []string
	for _, name := range []string{"one", "two"} {
		secrets = append(secrets, field(admin(t, e.h, "POST", "/v1/admin/api-keys", `{"name":"`+name+`","account":"acct_t"}`, http.StatusCreated), "key"))
	}
	limit := func(secret string) string {
		t.Helper()
		w := do(e.h, "POST", "/v1/chat/completions", secret, chatBody)
		if w.Code != 200 {
			t.Fatalf("chat: %d %s", w.Code, w.Body)
		}
		return w.Header().Get("X-Ratelimit-Limit-Requests")
	}
	if got := limit(secrets[0]); got != "20" {
		t.Fatalf("before any purchase: limit %s, want Default's 20", got)
	}
	steps := []struct {
		payment, amount string
		credits, tier   string
		requests        int64
	}{
		{"pay_1", `"5"`, "5", "default", policy.Default.Requests},
		{"pay_2", `"34.99"`, "39.99", "default", policy.Default.Requests},
		{"pay_3", `0.01`, "40", "tier2", policy.Tier2.Requests},
		{"pay_3", `0.01`, "40", "tier2", policy.Tier2.Requests}, // the same payment again
		{"pay_4", `"159.999999999"`, "199.999999999", "tier2", policy.Tier2.Requests},
		{"pay_5", `"0.000000001"`, "200", "tier3", policy.Tier3.Requests},
	}
	for i, s := range steps {
		a := admin(t, e.h, "POST", "/v1/admin/credits", `{"id":"`+s.payment+`","account":"acct_t","amount_usd":`+s.amount+`}`, 200)
		if a["credits_usd"] != s.credits || a["tier"] != s.tier || a["pinned_tier"] != nil {
			t.Errorf("step %d (%s %s): %v", i, s.payment, s.amount, a)
		}
		for _, secret := range secrets {
			if got := limit(secret); got != fmt.Sprint(s.requests) {
				t.Errorf("step %d: a key's limit %s, want %d (%s)", i, got, s.requests, s.tier)
			}
		}
	}
	if got := admin(t, e.h, "GET", "/v1/admin/accounts/acct_t", "", 200); got["credits_usd"] != "200" {
		t.Errorf("credits after a payment recorded twice: %v", got["credits_usd"])
	}

	a := admin(t, e.h, "POST", "/v1/admin/accounts/acct_t/tier", `{"tier":"unlimited"}`, 200)
	if a["tier"] != "unlimited" || a["pinned_tier"] != "unlimited" {
		t.Errorf("pinned: %v", a)
	}
	w := do(e.h, "POST", "/v1/chat/completions", secrets[1], chatBody)
	for name := range w.Header() {
		if strings.HasPrefix(strings.ToLower(name), "x-ratelimit") {
			t.Errorf("unlimited: header %s: %s", name, w.Header().Get(name))
		}
	}
	if w.Code != 200 {
		t.Errorf("unlimited: %d", w.Code)
	}
	a = admin(t, e.h, "POST", "/v1/admin/accounts/acct_t/tier", `{"tier":"TIER2"}`, 200)
	if a["tier"] != "tier2" || a["pinned_tier"] != "tier2" || limit(secrets[0]) != "200" {
		t.Errorf("pinned below the credits: %v", a)
	}
	a = admin(t, e.h, "POST", "/v1/admin/accounts/acct_t/tier", `{"tier":""}`, 200)
	if a["tier"] != "tier3" || a["pinned_tier"] != nil || limit(secrets[0]) != "400" {
		t.Errorf("unpinned: %v", a)
	}

	adminErr(t, e.h, "POST", "/v1/admin/accounts/acct_t/tier", `{}`, 400, "missing_required_parameter", "tier")
	adminErr(t, e.h, "POST", "/v1/admin/accounts/acct_t/tier", `{"tier":"gold"}`, 400, "invalid_value", "tier")
	adminErr(t, e.h, "POST", "/v1/admin/accounts/acct_t/tier", `{"tier":2}`, 400, "invalid_type", "tier")
	adminErr(t, e.h, "POST", "/v1/admin/accounts/acct_nope/tier", `{"tier":"tier2"}`, 404, "not_found", "tier")
}

func TestAdminCredits(t *testing.T) {
	e := newAccountsEnv(t, nil, nil)
	a := admin(t, e.h, "POST", "/v1/admin/credits", `{"id":"pay_1","amount_usd":12.5}`, 200)
	if a["id"] != account.DefaultAccount || a["credits_usd"] != "12.5" {
		t.Errorf("a number to the default account: %v", a)
	}
	a = admin(t, e.h, "POST", "/v1/admin/credits", `{"id":"pay_2","account":"default","amount_usd":"0.10"}`, 200)
	if a["credits_usd"] != "12.6" {
		t.Errorf("a string: %v", a)
	}
	for _, tc := range []struct {
		body        string
		status      int
		code, param string
	}{
		{`{"amount_usd":"1"}`, 400, "missing_required_parameter", "id"},
		{`{"id":"p"}`, 400, "missing_required_parameter", "amount_usd"},
		{`{"id":"p","amount_usd":null}`, 400, "missing_required_parameter", "amount_usd"},
		{`{"id":"p","amount_usd":"0"}`, 400, "invalid_value", "amount_usd"},
		{`{"id":"p","amount_usd":0}`, 400, "invalid_value", "amount_usd"},
		{`{"id":"p","amount_usd":"-5"}`, 400, "invalid_value", "amount_usd"},
		{`{"id":"p","amount_usd":-5}`, 400, "invalid_value", "amount_usd"},
		{`{"id":"p","amount_usd":4e1}`, 400, "invalid_value", "amount_usd"},
		{`{"id":"p","amount_usd":"0.0000000001"}`, 400, "invalid_value", "amount_usd"},
		{`{"id":"p","amount_usd":""}`, 400, "invalid_value", "amount_usd"},
		{`{"id":"p","amount_usd":true}`, 400, "invalid_value", "amount_usd"},
		{`{"id":"p","amount_usd":"40 USD"}`, 400, "invalid_value", "amount_usd"},
		{`{"id":"p","amount_usd":"1","account":"acct_nope"}`, 404, "not_found", "account"},
		{`{"id":"` + strings.Repeat("p", 201) + `","amount_usd":"1"}`, 400, "invalid_value", "id"},
		{`{"id":"p","amount":"1"}`, 400, "unknown_parameter", "amount"},
	} {
		adminErr(t, e.h, "POST", "/v1/admin/credits", tc.body, tc.status, tc.code, tc.param)
	}
	if a := admin(t, e.h, "GET", "/v1/admin/accounts/default", "", 200); a["credits_usd"] != "12.6" {
		t.Errorf("after the refusals: %v", a)
	}
	// One payment credits one account: pay_1 went to the default one.
	admin(t, e.h, "POST", "/v1/admin/accounts", `{"id":"acct_other","name":"other"}`, 201)
	adminErr(t, e.h, "POST", "/v1/admin/credits", `{"id":"pay_1","account":"acct_other","amount_usd":"12.5"}`, 409, "payment_used", "id")
	if a := admin(t, e.h, "GET", "/v1/admin/accounts/acct_other", "", 200); a["credits_usd"] != "0" {
		t.Errorf("a payment id of another account credited: %v", a)
	}
	// Credits past the largest amount: the amount is at fault.
	admin(t, e.h, "POST", "/v1/admin/credits", `{"id":"big_1","amount_usd":"5000000000"}`, 200)
	adminErr(t, e.h, "POST", "/v1/admin/credits", `{"id":"big_2","amount_usd":"5000000000"}`, 400, "invalid_value", "amount_usd")
}

// Trials and subscriptions through the admin API, on the Handler's
// clock: a trial runs 14 days and expires back to Free; one trial per
// plan; a subscription is active at its price.
func TestAdminPlans(t *testing.T) {
	e := newAccountsEnv(t, nil, nil)
	admin(t, e.h, "POST", "/v1/admin/accounts", `{"id":"acct_p","name":"P"}`, http.StatusCreated)
	start := e.clock.Now()
	plan := obj(t, admin(t, e.h, "POST", "/v1/admin/accounts/acct_p/plan", `{"plan":"team","trial":true}`, 200), "plan")
	ends := float64(start.Add(14 * 24 * time.Hour).Unix())
	if plan["name"] != "team" || plan["state"] != "trialing" || plan["trial_ends_at"] != ends || plan["price_usd"] != "49" ||
		fmt.Sprint(plan["features"]) != "[security_scan release_notes]" {
		t.Errorf("trial: %v", plan)
	}
	adminErr(t, e.h, "POST", "/v1/admin/accounts/acct_p/plan", `{"plan":"team","trial":true}`, 409, "trial_used", "trial")

	e.clock.Advance(14*24*time.Hour - time.Second)
	if plan := obj(t, admin(t, e.h, "GET", "/v1/admin/accounts/acct_p", "", 200), "plan"); plan["state"] != "trialing" {
		t.Errorf("a second before the end: %v", plan)
	}
	e.clock.Advance(time.Second)
	plan = obj(t, admin(t, e.h, "GET", "/v1/admin/accounts/acct_p", "", 200), "plan")
	if plan["name"] != "free" || plan["state"] != "expired" || plan["trial_ends_at"] != ends || fmt.Sprint(plan["features"]) != "[]" {
		t.Errorf("expired: %v", plan)
	}

	plan = obj(t, admin(t, e.h, "POST", "/v1/admin/accounts/acct_p/plan", `{"plan":"Growth"}`, 200), "plan")
	if plan["name"] != "growth" || plan["state"] != "active" || plan["trial_ends_at"] != nil || plan["price_usd"] != "199" {
		t.Errorf("subscribed: %v", plan)
	}
	adminErr(t, e.h, "POST", "/v1/admin/accounts/acct_p/plan", `{"plan":"growth","trial":true}`, 409, "already_subscribed", "trial")
	for _, tc := range []struct{ body, code, param string }{
		{`{}`, "missing_required_parameter", "plan"},
		{`{"plan":"platinum"}`, "invalid_value", "plan"},
		{`{"plan":"free","trial":true}`, "invalid_value", "trial"},
		{`{"plan":"team","trial":"yes"}`, "invalid_type", "trial"},
	} {
		adminErr(t, e.h, "POST", "/v1/admin/accounts/acct_p/plan", tc.body, 400, tc.code, tc.param)
	}
	adminErr(t, e.h, "POST", "/v1/admin/accounts/acct_nope/plan", `{"plan":"team"}`, 404, "not_found", "plan")
}

// The month's usage of an account: what its keys' requests spent and
// used, against its tier's cap (null when unlimited), with its credits
// and plan.
func TestAdminUsage(t *testing.T) {
	e := newAccountsEnv(t, nil, nil)
	admin(t, e.h, "POST", "/v1/admin/accounts", `{"id":"acct_u","name":"U"}`, http.StatusCreated)
	admin(t, e.h, "POST", "/v1/admin/credits", `{"id":"pay_1","account":"acct_u","amount_usd":"40"}`, 200)
	admin(t, e.h, "POST", "/v1/admin/accounts/acct_u/plan", `{"plan":"team","trial":true}`, 200)
	var secrets []string
	for _, name := range []string{"one", "two"} {
		secrets = append(secrets, field(admin(t, e.h, "POST", "/v1/admin/api-keys", `{"name":"`+name+`","account":"acct_u"}`, http.StatusCreated), "key"))
	}
	for i := range 5 {
		if w := do(e.h, "POST", "/v1/chat/completions", secrets[i%2], chatBody); w.Code != 200 {
			t.Fatalf("chat: %d %s", w.Code, w.Body)
		}
	}
	u := admin(t, e.h, "GET", "/v1/admin/usage?account=acct_u", "", 200)
	plan := obj(t, u, "plan")
	if u["object"] != "usage" || u["account"] != "acct_u" || u["month"] != "2026-01" || u["spend_usd"] != (5*chatCost(t)).String() || u["held_usd"] != "0" ||
		u["max_monthly_spend_usd"] != "500" || u["requests"] != float64(5) || u["input_tokens"] != float64(25) ||
		u["cached_input_tokens"] != float64(0) || u["output_tokens"] != float64(10) || u["tier"] != "tier2" || u["credits_usd"] != "40" ||
		plan["name"] != "team" || plan["state"] != "trialing" {
		t.Errorf("usage: %v", u)
	}
	// Another account spent nothing; unlimited has no cap.
	admin(t, e.h, "POST", "/v1/admin/accounts/default/tier", `{"tier":"unlimited"}`, 200)
	u = admin(t, e.h, "GET", "/v1/admin/usage", "", 200)
	if u["account"] != "default" || u["spend_usd"] != "0" || u["requests"] != float64(0) || u["max_monthly_spend_usd"] != nil || u["tier"] != "unlimited" {
		t.Errorf("the default account's usage: %v", u)
	}
	adminErr(t, e.h, "GET", "/v1/admin/usage?account=acct_nope", "", 404, "not_found", "account")

	// Without a limiter nothing is metered: it says so.
	accts, _ := account.New(context.Background(), account.Config{Store: account.NewMemory()})
	h, err := adminapi.New(adminapi.Config{Key: adminKey, Accounts: accts})
	if err != nil {
		t.Fatal(err)
	}
	adminErr(t, h.Mount(http.NotFoundHandler()), "GET", "/v1/admin/usage", "", 501, "not_metered", "")
}

// downStore is an account store that fails every call once fail is
// set: a store that cannot answer.
type downStore struct {
	account.Store
	fail atomic.Bool
}

var errAccountsDown = errors.New("store down: sk-must-not-leak")

func (s *downStore) Get(ctx context.Context, key string) ([]byte, error) {
	if s.fail.Load() {
		return nil, errAccountsDown
	}
	return s.Store.Get(ctx, key)
}

func (s *downStore) Update(ctx context.Context, key string, ttl time.Duration, fn func([]byte) ([]byte, error)) error {
	if s.fail.Load() {
		return errAccountsDown
	}
	return s.Store.Update(ctx, key, ttl, fn)
}

func (s *downStore) List(ctx context.Context, prefix string) ([]string, error) {
	if s.fail.Load() {
		return nil, errAccountsDown
	}
	return s.Store.List(ctx, prefix)
}

// An accounts store that cannot answer is a 500 that says nothing of the
// cause, on the API's routes (never a 401: the key may be good) and on
// the admin API's; the cause is logged.
func TestAccountsStoreDown(t *testing.T) {
	store := &downStore{Store: account.NewMemory()}
	e := newAccountsEnv(t, store, nil)
	secret := field(admin(t, e.h, "POST", "/v1/admin/api-keys", `{"name":"k"}`, http.StatusCreated), "key")
	store.fail.Store(true)
	for _, rt := range []struct{ method, path, key, body string }{
		{"POST", "/v1/chat/completions", secret, chatBody},
		{"GET", "/v1/models", secret, ""},
		{"GET", "/v1/admin/accounts", adminKey, ""},
		{"POST", "/v1/admin/api-keys", adminKey, `{"name":"k2"}`},
		{"POST", "/v1/admin/credits", adminKey, `{"id":"p","amount_usd":"5"}`},
		{"GET", "/v1/admin/usage", adminKey, ""},
	} {
		w := do(e.h, rt.method, rt.path, rt.key, rt.body)
		if typ, code, _, msg := errorOf(t, w.Body.Bytes()); w.Code != 500 || typ != "api_error" || code != "server_error" || strings.Contains(msg, "store down") {
			t.Errorf("%s %s: %d %s", rt.method, rt.path, w.Code, w.Body)
		}
	}
	if logs := e.logs.String(); !strings.Contains(logs, "store down") || strings.Contains(logs, secret) {
		t.Errorf("the logs lack the cause, or hold the key:\n%s", logs)
	}
}

// The admin API has no API key to count by: it is never rate-limited,
// and its answers carry no rate-limit headers.
func TestAdminNotRateLimited(t *testing.T) {
	e := newAccountsEnv(t, nil, nil)
	for i := range 2 * policy.Default.Requests {
		w := do(e.h, "GET", "/v1/admin/usage", adminKey, "")
		if w.Code != 200 || w.Header().Get("X-Ratelimit-Limit-Requests") != "" {
			t.Fatalf("admin request %d: %d %v", i+1, w.Code, w.Header())
		}
	}
}
