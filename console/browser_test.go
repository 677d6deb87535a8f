package console_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/console"
	"github.com/inferkit/inferkit/internal/oidctest"
)

// findChromium returns the path of a Chromium or Chrome binary, or "".
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// button, input and the others find elements as a person does: by their
// visible text or their label.
func button(text string) chromedp.Search {
	return chromedp.Search(fmt.Sprintf(`//button[normalize-space()=%q]`, text))
}

func summary(text string) chromedp.Search {
	return chromedp.Search(fmt.Sprintf(`//summary[normalize-space()=%q]`, text))
}

func input(label string) chromedp.Search {
	return chromedp.Search(fmt.Sprintf(`//input[@id=//label[normalize-space()=%q]/@for]`, label))
}

func rowButton(row, text string) chromedp.Search {
	return chromedp.Search(fmt.Sprintf(`//tr[td[normalize-space()=%q]]//button[normalize-space()=%q]`, row, text))
}

// TestBrowser drives the console in Debian's chromium: sign in, create a
// key, copy it with Copy Key and read it from the clipboard, call the API
// with it (200), revoke it, and call again (401). The console's session
// cookie, read from the browser, is no API credential (401).
func TestBrowser(t *testing.T) {
	path := findChromium()
	if path == "" {
		t.Skip("no chromium, chromium-browser or google-chrome on PATH: `make chromium` installs Debian's chromium")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	accounts, err := account.New(ctx, account.Config{Store: account.NewMemory(), PasswordIterations: testIterations})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := accounts.CreateAccount(ctx, account.NewAccount{Name: "Ada's lab", Owner: owner, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	c, err := console.New(console.Config{Accounts: accounts, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	c.Register(mux)
	mountAPI(t, mux, accounts, log)
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()

	// models calls GET /v1/models from Go with a header, as an API client.
	models := func(header, value string) int {
		t.Helper()
		r, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/models", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set(header, value)
		resp, err := srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	bctx, step := chromium(t, ctx, path)
	// Headless pages are not focused, and the clipboard needs focus and
	// permissions.
	step("set up", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
			return err
		}
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			_, err := cdp.Call(ctx, chromedp.FromContext(ctx).Browser, browser.SetPermission, browser.SetPermissionParams{
				Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: srv.URL,
			})
			if err != nil {
				return fmt.Errorf("grant %s: %w", name, err)
			}
		}
		return nil
	}))

	step("sign in",
		chromedp.Navigate(srv.URL+"/"), // to /api-keys, then to /login
		chromedp.WaitVisible(input("E-mail")),
		chromedp.SendKeys(input("E-mail"), owner),
		chromedp.SendKeys(input("Password"), password),
		chromedp.Click(button("Sign in")),
		chromedp.WaitVisible(summary("Create Key")),
	)
	const name = "ci laptop"
	step("create a key",
		chromedp.Click(summary("Create Key")),
		chromedp.WaitVisible(input("Name")),
		chromedp.SendKeys(input("Name"), name),
		chromedp.Click(button("Create")),
		chromedp.WaitVisible(button("Copy Key")), // the CSP let the script unhide it
		chromedp.Click(button("Copy Key")),
		chromedp.WaitVisible(chromedp.Search(`//*[@role="status"][normalize-space()="Copied."]`)),
	)
	key, err := chromedp.Run(bctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("read the clipboard: %v", err)
	}
	shown, err := chromedp.Run(bctx, chromedp.Value(input("Secret key")))
	if err != nil {
		t.Fatal(err)
	}
	if key == "" || key != shown {
		t.Fatalf("the clipboard holds %d characters, not the %d of the key shown", len(key), len(shown))
	}
	if url, err := chromedp.Run(bctx, chromedp.Location()); err != nil || strings.Contains(url, key) {
		t.Errorf("the page's URL %q holds the key (%v)", url, err)
	}
	if got := models("Authorization", "Bearer "+key); got != http.StatusOK {
		t.Fatalf("GET /v1/models with the copied key: %d, want 200", got)
	}

	// The session cookie: HttpOnly (the page cannot read it), Secure,
	// SameSite=Strict, and worth nothing to the API.
	cookies, err := chromedp.Run(bctx, func(ctx context.Context, tg *chromedp.Target) ([]*network.Cookie, error) {
		res, err := cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{srv.URL}})
		return res.Cookies, err
	})
	if err != nil {
		t.Fatal(err)
	}
	var session *network.Cookie
	for _, ck := range cookies {
		if strings.Contains(ck.Value, key) {
			t.Errorf("cookie %s holds the key", ck.Name)
		}
		if ck.Name == "__Host-console_session" {
			session = ck
		}
	}
	if session == nil {
		t.Fatalf("no session cookie among %d", len(cookies))
	}
	if !session.HTTPOnly || !session.Secure || session.SameSite != network.CookieSameSiteStrict || session.Path != "/" {
		t.Errorf("session cookie: HttpOnly %v, Secure %v, SameSite %v, Path %q", session.HTTPOnly, session.Secure, session.SameSite, session.Path)
	}
	if jar, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.cookie`)); err != nil || strings.Contains(jar, session.Value) {
		t.Errorf("the page's script reads the session cookie (%v)", err)
	}
	if got := models("Cookie", session.Name+"="+session.Value); got != http.StatusUnauthorized {
		t.Errorf("GET /v1/models with only the console cookie: %d, want 401", got)
	}

	step("revoke the key",
		chromedp.Navigate(srv.URL+"/api-keys"),
		chromedp.WaitVisible(rowButton(name, "Revoke")),
		chromedp.Click(rowButton(name, "Revoke")),
		chromedp.WaitVisible(chromedp.Search(`//p[normalize-space()="No keys yet."]`)),
	)
	if got := models("Authorization", "Bearer "+key); got != http.StatusUnauthorized {
		t.Errorf("GET /v1/models with the revoked key: %d, want 401", got)
	}
	if keys, err := accounts.Keys(ctx, acct.ID); err != nil || len(keys) != 0 {
		t.Errorf("keys after revoking: %v, %v", keys, err)
	}

	out := logs.String()
	for what, secret := range map[string]string{"the key": key, "the session token": session.Value, "the password": password} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %s", what)
		}
	}
	if !strings.Contains(out, "console: key revoked") {
		t.Errorf("the log does not record the revocation:\n%s", out)
	}
}

// chromium starts the browser at path for the test, which it lives as
// long as ctx; step runs steps in it, 30 seconds at most, failing the
// test with the step's name.
func chromium(t *testing.T, ctx context.Context, path string) (context.Context, func(name string, steps ...chromedp.Action[chromedp.Void])) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("ignore-certificate-errors", true),
		chromedp.NoSandbox, // root in containers has no sandbox
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(cancelBrowser)

	// The first run starts the browser, which lives as long as its
	// context: bctx, not a step's.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	// Each step has 30 seconds, so that a page that never shows what a
	// step waits for fails the test with the step's name.
	step := func(name string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(bctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return bctx, step
}

// TestBrowserSSO signs in to the console in Debian's chromium through a
// local OpenID Connect provider on another site: the flow cookie (Lax)
// comes back with the provider's cross-site redirect, and the session
// cookie (Strict) is sent once the person continues from the console's
// own page, which shows who signed in.
func TestBrowserSSO(t *testing.T) {
	path := findChromium()
	if path == "" {
		t.Skip("no chromium, chromium-browser or google-chrome on PATH: `make chromium` installs Debian's chromium")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	mux := http.NewServeMux()
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	callback := srv.URL + "/login/sso/corp/callback"
	provider := oidctest.New(t, "console", "provider-secret", callback) // http://, another site than https://
	provider.SignIn(&oidctest.Person{Email: "grace@corp.example"})
	accounts, err := account.New(ctx, account.Config{Store: account.NewMemory(), PasswordIterations: testIterations})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := accounts.CreateAccount(ctx, account.NewAccount{Name: "Corp"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := accounts.Subscribe(ctx, acct.ID, "enterprise"); err != nil {
		t.Fatal(err)
	}
	c, err := console.New(console.Config{Accounts: accounts, Logger: slog.New(slog.DiscardHandler),
		SSO: []console.SSOProvider{{Name: "corp", Issuer: provider.URL, ClientID: "console", ClientSecret: "provider-secret",
			RedirectURL: callback, Account: acct.ID, Domains: []string{"corp.example"}}}})
	if err != nil {
		t.Fatal(err)
	}
	c.Register(mux)
	_, step := chromium(t, ctx, path)
	link := func(text string) chromedp.Search {
		return chromedp.Search(fmt.Sprintf(`//a[normalize-space()=%q]`, text))
	}
	step("sign in through the provider",
		chromedp.Navigate(srv.URL+"/login"),
		chromedp.WaitVisible(link("Sign in with corp")),
		chromedp.Click(link("Sign in with corp")),
		chromedp.WaitVisible(link("Continue to the console")),
		chromedp.Click(link("Continue to the console")),
		chromedp.WaitVisible(button("Sign out")),
		chromedp.WaitVisible(chromedp.Search(`//header//span[normalize-space()="grace@corp.example"]`)),
	)
	if provider.Issued() != 1 {
		t.Errorf("%d ID tokens issued, want 1", provider.Issued())
	}
}
