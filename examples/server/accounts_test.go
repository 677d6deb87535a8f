package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/console"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/httpapi/admin"
	"github.com/inferkit/inferkit/internal/redistest"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

const testAdminKey = "sk-admin-test-0123456789abcdef"

// The flags' keys are static keys of the default account, whose tier
// they pin. With -accounts, the accounts and the limiter's monthly
// counters live in the file: a restart keeps the keys' ids, the pin, a
// created key and the month's spend.
func TestBackendsBolt(t *testing.T) {
	ctx := context.Background()
	o := options{keys: []string{"sk-flag-one", "sk-flag-two:tier2"}, accounts: filepath.Join(t.TempDir(), "accounts.db")}
	logger := slog.New(slog.DiscardHandler)
	b, err := openBackends(ctx, o, logger)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.accounts.Authenticate(ctx, "sk-flag-one")
	if err != nil || p.Account.ID != account.DefaultAccount || p.Account.Tier().Name != "tier2" || !p.Key.Static {
		t.Fatalf("a flag's key: %+v %v", p, err)
	}
	if _, err := b.accounts.Authenticate(ctx, "sk-flag-two:tier2"); err == nil {
		t.Error("the tier's suffix is part of the key")
	}
	_, secret, err := b.accounts.CreateKey(ctx, account.DefaultAccount, "made")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, ok := b.limiter.(*ratelimit.Memory); !ok {
		t.Fatalf("the limiter of -accounts is %T", b.limiter)
	}
	res, err := b.limiter.Reserve(ctx, ratelimit.Request{Key: p.Key.ID, Account: p.Account.ID, Tier: p.Account.Tier(), InputTokens: 10,
		Prices: ratelimit.Prices{Input: ratelimit.Dollar}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.limiter.Settle(ctx, res, ratelimit.Usage{Requests: 1, InputTokens: 10}); err != nil {
		t.Fatal(err)
	}
	if err := b.close(); err != nil {
		t.Fatal(err)
	}

	// Again, with the flags' tier gone: the stored pin stands.
	o.keys = []string{"sk-flag-one"}
	b, err = openBackends(ctx, o, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	again, err := b.accounts.Authenticate(ctx, "sk-flag-one")
	if err != nil || again.Key.ID != p.Key.ID || again.Account.Tier().Name != "tier2" {
		t.Errorf("the flag's key after a restart: %+v %v, want id %s on tier2", again, err, p.Key.ID)
	}
	if _, err := b.accounts.Authenticate(ctx, secret); err != nil {
		t.Errorf("a created key after a restart: %v", err)
	}
	if u, err := b.limiter.Usage(ctx, account.DefaultAccount, now); err != nil || u.Spent != 10*ratelimit.Dollar || u.Requests != 1 {
		t.Errorf("the month's usage after a restart: %+v %v", u, err)
	}
}

// With neither -accounts nor -redis, everything is in memory; -tier
// pins; keys of clashing tiers are refused.
func TestBackendsMemory(t *testing.T) {
	ctx := context.Background()
	b, err := openBackends(ctx, options{keys: []string{"sk-flag"}, tier: "unlimited"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := b.accounts.Authenticate(ctx, "sk-flag"); err != nil || p.Account.Tier() != policy.Unlimited {
		t.Errorf("-tier unlimited: %+v %v", p, err)
	}
	if _, err := openBackends(ctx, options{keys: []string{"sk-flag:tier2"}, tier: "tier3"}, slog.New(slog.DiscardHandler)); err == nil {
		t.Error("keys of two tiers were accepted")
	}
}

// With -redis, two servers share the accounts: a key made through one
// authenticates on the other.
func TestBackendsRedis(t *testing.T) {
	sock := redistest.Start(t)
	ctx := context.Background()
	o := options{keys: []string{"sk-flag"}, redis: "unix://" + sock}
	var bs [2]backends
	for i := range bs {
		b, err := openBackends(ctx, o, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer b.close()
		bs[i] = b
	}
	k, secret, err := bs[0].accounts.CreateKey(ctx, account.DefaultAccount, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := bs[1].accounts.Authenticate(ctx, secret); err != nil || p.Key.ID != k.ID {
		t.Errorf("a key made on one server, on the other: %+v %v", p, err)
	}
	a, err1 := bs[0].accounts.Authenticate(ctx, "sk-flag")
	b, err2 := bs[1].accounts.Authenticate(ctx, "sk-flag")
	if err1 != nil || err2 != nil || a.Key.ID != b.Key.ID {
		t.Errorf("a flag's key has ids %q and %q on two servers (%v, %v)", a.Key.ID, b.Key.ID, err1, err2)
	}
	if bs[0].responses == nil {
		t.Error("no shared store of responses")
	}
}

// The console's pages and the API share one listener: the console
// answers its paths, the API every other, unclean paths and methods the
// console does not take included, in JSON. The admin API takes the
// admin key; the API takes API keys only.
func TestWithConsole(t *testing.T) {
	ctx := context.Background()
	accts, err := account.New(ctx, account.Config{Store: account.NewMemory(), StaticKeys: []string{"sk-test"}})
	if err != nil {
		t.Fatal(err)
	}
	adm, err := admin.New(admin.Config{Key: testAdminKey, Accounts: accts, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{Engine: noEngine{}, Accounts: accts, RefuseKey: adm.IsKey, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	con, err := console.New(console.Config{Accounts: accts, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(withConsole(adm.Mount(api), con), slog.New(slog.DiscardHandler))
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		method, path, key string
		status            int
		kind              string // "json", "html" or a Location
	}{
		{"GET", "/", "", 303, "/api-keys"},
		{"GET", "/login", "", 200, "html"},
		{"GET", "/api-keys", "", 303, "/login"},
		{"GET", "/api-keys", "sk-test", 303, "/login"}, // an API key is no console session
		{"PUT", "/login", "", 404, "json"},
		{"GET", "//login", "", 404, "json"},
		{"GET", "/nope", "", 404, "json"},
		{"GET", "/v1/models", "sk-test", 200, "json"},
		{"GET", "/v1/models", testAdminKey, 401, "json"},
		{"GET", "/v1/admin/accounts", testAdminKey, 200, "json"},
		{"GET", "/v1/admin/accounts", "sk-test", 401, "json"},
		{"GET", "/healthz", "", 200, "json"},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, nil)
		if tc.key != "" {
			req.Header.Set("Authorization", "Bearer "+tc.key)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		ct := res.Header.Get("Content-Type")
		ok := res.StatusCode == tc.status
		switch tc.kind {
		case "json":
			ok = ok && ct == "application/json" && json.Valid(b)
		case "html":
			ok = ok && strings.HasPrefix(ct, "text/html")
		default:
			ok = ok && strings.HasSuffix(res.Header.Get("Location"), tc.kind)
		}
		if !ok {
			t.Errorf("%s %s: %d %s (Location %q), want %d %s: %.200s", tc.method, tc.path, res.StatusCode, ct, res.Header.Get("Location"), tc.status, tc.kind, b)
		}
	}
}

// With -redis, FLUSHALL while a server serves, then a restart: keys made
// after the flush still work, and with -secret-file, a restart on a Redis
// that lost everything keeps the secret (the flag's key keeps its id); a
// Redis that lost only the secret of its keys is refused at start-up
// without -secret-file, with a message that says so.
func TestBackendsRedisLosesData(t *testing.T) {
	sock := redistest.Start(t)
	rdb := redistest.Client(t, sock)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "operator.secret")
	o := options{keys: []string{"sk-flag"}, redis: "unix://" + sock, secretFile: file}
	open := func(o options) (backends, error) {
		return openBackends(ctx, o, slog.New(slog.DiscardHandler))
	}
	b, err := open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	flag, err := b.accounts.Authenticate(ctx, "sk-flag")
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	_, made, err := b.accounts.CreateKey(ctx, account.DefaultAccount, "after the flush")
	if err != nil {
		t.Fatal(err)
	}
	restarted, err := open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer restarted.close()
	if _, err := restarted.accounts.Authenticate(ctx, made); err != nil {
		t.Fatalf("a key made after FLUSHALL, after a restart: %v", err)
	}
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	again, err := open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer again.close()
	if p, err := again.accounts.Authenticate(ctx, "sk-flag"); err != nil || p.Key.ID != flag.Key.ID {
		t.Fatalf("the flag's key after a restart on an empty Redis with -secret-file: %+v, %v", p, err)
	}

	// The secret evicted, its keys kept, no -secret-file: refused.
	if _, _, err := again.accounts.CreateKey(ctx, account.DefaultAccount, "kept"); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(ctx, "inferkit:account:secret").Err(); err != nil {
		t.Fatal(err)
	}
	o.secretFile = ""
	if _, err := open(o); !errors.Is(err, account.ErrSecretLost) || !strings.Contains(err.Error(), "-secret-file") {
		t.Fatalf("start-up on a Redis that lost the secret of its keys: %v, want ErrSecretLost naming -secret-file", err)
	}
}
