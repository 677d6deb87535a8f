//go:build cgo

package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeAdmin runs the server as an operator would with -admin-key
// and -accounts, twice on one file: no key is generated; the admin API
// makes an account and a key, which calls the API; the console answers
// on the same listener; after a restart the key still works, on the
// tier its account's credits unlocked, and the month's spend is kept.
func TestServeAdmin(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the demo model's directory
	o := options{threads: 1, parallel: 1, ctx: 256, adminKey: testAdminKey, accounts: filepath.Join(t.TempDir(), "accounts.db")}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	// run serves o until use returns.
	run := func(use func(base string)) {
		t.Helper()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var stderr, logs syncBuffer
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- serve(ctx, o, ln, &stderr, slog.New(slog.NewTextHandler(&logs, nil))) }()
		use("http://" + ln.Addr().String())
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("serve: %v\n%s", err, logs.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no shutdown")
		}
		if strings.Contains(stderr.String(), "API key of this run") {
			t.Errorf("a key was generated despite -admin-key: %s", stderr.String())
		}
		if strings.Contains(logs.String(), testAdminKey) {
			t.Errorf("the admin key was logged:\n%s", logs.String())
		}
	}
	do := func(base, method, path, key, body string) (int, http.Header, map[string]any) {
		t.Helper()
		res, b := call(t, client, method, base+path, key, body)
		var v map[string]any
		json.Unmarshal(b, &v)
		return res.StatusCode, res.Header, v
	}
	chat := `{"model":"core-3-flash","max_tokens":4,"messages":[{"role":"user","content":"Hi"}]}`

	var secret string
	var spent any
	run(func(base string) {
		if status, _, v := do(base, "POST", "/v1/admin/accounts", testAdminKey, `{"id":"acct_op","name":"Op","owner":"op@example.test","password":"a long password"}`); status != 201 {
			t.Fatalf("account: %d %v", status, v)
		}
		status, _, k := do(base, "POST", "/v1/admin/api-keys", testAdminKey, `{"name":"app","account":"acct_op"}`)
		secret, _ = k["key"].(string)
		if status != 201 || secret == "" {
			t.Fatalf("key: %d %v", status, k)
		}
		if status, _, v := do(base, "POST", "/v1/admin/credits", testAdminKey, `{"id":"pay_1","account":"acct_op","amount_usd":"40"}`); status != 200 || v["tier"] != "tier2" {
			t.Fatalf("credits: %d %v", status, v)
		}
		if status, h, v := do(base, "POST", "/v1/chat/completions", secret, chat); status != 200 || h.Get("X-Ratelimit-Limit-Requests") != "200" {
			t.Errorf("chat with the new key: %d %v %v", status, h, v)
		}
		if status, _, _ := do(base, "POST", "/v1/chat/completions", testAdminKey, chat); status != 401 {
			t.Errorf("chat with the admin key: %d", status)
		}
		if status, h, _ := do(base, "GET", "/", "", ""); status != 303 || h.Get("Location") != "/api-keys" {
			t.Errorf("the console's root: %d %v", status, h)
		}
		if status, h, _ := do(base, "GET", "/login", "", ""); status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Errorf("the console's sign-in: %d %v", status, h)
		}
		_, _, u := do(base, "GET", "/v1/admin/usage?account=acct_op", testAdminKey, "")
		if spent = u["spend_usd"]; spent == "0" || u["requests"] != float64(1) {
			t.Errorf("usage: %v", u)
		}
	})
	run(func(base string) {
		if status, h, v := do(base, "POST", "/v1/chat/completions", secret, chat); status != 200 || h.Get("X-Ratelimit-Limit-Requests") != "200" {
			t.Errorf("the key after a restart: %d %v %v", status, h, v)
		}
		if _, _, u := do(base, "GET", "/v1/admin/usage?account=acct_op", testAdminKey, ""); u["requests"] != float64(2) || u["spend_usd"] == spent {
			t.Errorf("usage after a restart and a request: %v (spent %v before)", u, spent)
		}
	})
}
