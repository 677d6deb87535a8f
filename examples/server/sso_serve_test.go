//go:build cgo

package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/internal/oidctest"
)

// TestServeSSO runs the server with -admin-key, -accounts and -sso
// against a local OpenID Connect provider: a person of an Enterprise
// account's domain signs in to its console, a review through the API
// shows on the console's observability page, and the same sign-in on a
// Growth account is refused with a 403 that names the feature.
func TestServeSSO(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the demo model's directory
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	provider := oidctest.New(t, "inferkit", "client-secret", base+"/login/sso/corp/callback")
	file := filepath.Join(t.TempDir(), "sso.json")
	os.WriteFile(file, []byte(`[{"name":"corp","issuer":"`+provider.URL+`","client_id":"inferkit","client_secret_env":"CORP_SECRET",
		"redirect_url":"`+base+`/login/sso/corp/callback","account":"acct_corp","domains":["corp.example"]}]`), 0o600)
	o, err := parseFlags([]string{"-sso", file, "-admin-key", testAdminKey, "-accounts", filepath.Join(t.TempDir(), "accounts.db"),
		"-insecure-cookies", "-threads", "1", "-parallel", "1", "-ctx", "2048"}, func(k string) string {
		return map[string]string{"CORP_SECRET": "client-secret"}[k]
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseFlags([]string{"-sso", file}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "CORP_SECRET") {
		t.Errorf("-sso without its secret's variable: %v", err)
	}
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, o, ln, io.Discard, slog.New(slog.NewTextHandler(&logs, nil))) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v\n%s", err, logs.String())
			}
		case <-time.After(30 * time.Second):
			t.Error("no shutdown")
		}
	}()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 60 * time.Second}
	do := func(method, path, key, body string) (int, string) {
		t.Helper()
		res, b := call(t, browser, method, base+path, key, body)
		return res.StatusCode, string(b)
	}
	if status, out := do("POST", "/v1/admin/accounts", testAdminKey, `{"id":"acct_corp","name":"Corp"}`); status != 201 {
		t.Fatalf("account: %d %s", status, out)
	}
	if status, out := do("POST", "/v1/admin/accounts/acct_corp/plan", testAdminKey, `{"plan":"growth"}`); status != 200 {
		t.Fatalf("plan: %d %s", status, out)
	}
	provider.SignIn(&oidctest.Person{Email: "grace@corp.example"})
	if status, out := do("GET", "/login/sso/corp", "", ""); status != 403 || !strings.Contains(out, "Single sign-on (sso) is not in the Growth plan; the Enterprise plan has it.") {
		t.Fatalf("single sign-on on Growth: %d %s", status, out)
	}
	if status, out := do("POST", "/v1/admin/accounts/acct_corp/plan", testAdminKey, `{"plan":"enterprise"}`); status != 200 {
		t.Fatalf("plan: %d %s", status, out)
	}
	if status, out := do("GET", "/login/sso/corp", "", ""); status != 200 || !strings.Contains(out, "signed in as grace@corp.example") {
		t.Fatalf("single sign-on on Enterprise: %d %s", status, out)
	}
	status, out := do("POST", "/v1/admin/api-keys", testAdminKey, `{"name":"ci","account":"acct_corp"}`)
	key := between(out, `"key":"`, `"`)
	if status != 201 || key == "" {
		t.Fatalf("key: %d %s", status, out)
	}
	diff := `--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n package x\n-var a = 1\n+var a = 2\n`
	if status, out := do("POST", "/v1/code-review/reviews", key, `{"diff":"`+diff+`","user":"grace@corp.example"}`); !reviewed(status, out) {
		t.Fatalf("review: %d %s", status, out)
	}
	status, out = do("GET", "/code-review/observability", "", "")
	if status != 200 || !strings.Contains(out, "grace@corp.example") || !strings.Contains(out, "<td>review</td>") {
		t.Fatalf("observability: %d %s", status, out)
	}
	if status, out := do("GET", "/code-review/analytics", "", ""); status != 200 || !strings.Contains(out, "<td>1</td>") {
		t.Errorf("analytics: %d %s", status, out)
	}
	if status, out := do("GET", "/metrics", "", ""); status != 200 || !strings.Contains(out, `inferkit_code_review_requests_total{kind="review"`) {
		t.Errorf("metrics: %d %s", status, out)
	}
}

// between returns the text of s between the first before and the next
// after, or "".
func between(s, before, after string) string {
	_, rest, ok := strings.Cut(s, before)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, after)
	return v
}
