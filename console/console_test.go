package console_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/console"
	"github.com/inferkit/inferkit/internal/logtest"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

const (
	owner    = "ada@example.com"
	password = "correct horse battery staple"
	// testIterations keeps password hashing fast under -race.
	testIterations = 1_000
)

// clock is a settable clock, shared by the accounts and the console.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// usage is a UsageSource that answers u or err, and records the calls.
type usage struct {
	u   ratelimit.MonthUsage
	err error

	mu    sync.Mutex
	calls []string // account@now
}

func (s *usage) Usage(ctx context.Context, acct string, now time.Time) (ratelimit.MonthUsage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, acct+"@"+now.UTC().Format(time.RFC3339))
	return s.u, s.err
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer = logtest.Buffer

// fixture is a console on a memory store, with one account that has an
// owner, and the console's log.
type fixture struct {
	t        *testing.T
	clock    *clock
	accounts *account.Accounts
	account  account.Account
	mux      *http.ServeMux
	log      *syncBuffer
}

func newFixture(t *testing.T, cfg console.Config) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: &clock{t: time.Date(2026, 3, 10, 9, 30, 0, 0, time.UTC)}, log: &syncBuffer{}}
	ctx := t.Context()
	var err error
	f.accounts, err = account.New(ctx, account.Config{Store: account.NewMemory(), Now: f.clock.Now, PasswordIterations: testIterations})
	if err != nil {
		t.Fatal(err)
	}
	f.account, err = f.accounts.CreateAccount(ctx, account.NewAccount{Name: "Ada's lab", Owner: owner, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Accounts = f.accounts
	cfg.Now = f.clock.Now
	cfg.Logger = slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := console.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.mux = http.NewServeMux()
	c.Register(f.mux)
	return f
}

// agent is a browser of one: it keeps cookies between requests.
type agent struct {
	f       *fixture
	cookies map[string]*http.Cookie
	header  http.Header // added to every request
}

func (f *fixture) agent() *agent {
	return &agent{f: f, cookies: map[string]*http.Cookie{}, header: http.Header{}}
}

func (a *agent) do(method, path string, form url.Values) *http.Response {
	a.f.t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	r := httptest.NewRequest(method, "https://console.example"+path, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range a.header {
		r.Header[k] = v
	}
	for _, c := range a.cookies {
		r.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	w := httptest.NewRecorder()
	a.f.mux.ServeHTTP(w, r)
	resp := w.Result()
	for _, c := range resp.Cookies() {
		if c.MaxAge < 0 {
			delete(a.cookies, c.Name)
		} else {
			a.cookies[c.Name] = c
		}
	}
	return resp
}

func (a *agent) get(path string) (*http.Response, string) {
	a.f.t.Helper()
	resp := a.do(http.MethodGet, path, nil)
	return resp, body(a.f.t, resp)
}

func (a *agent) post(path string, form url.Values) (*http.Response, string) {
	a.f.t.Helper()
	resp := a.do(http.MethodPost, path, form)
	return resp, body(a.f.t, resp)
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf returns the CSRF token of a page's forms.
func csrf(t *testing.T, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field in page:\n%s", page)
	}
	return html.UnescapeString(m[1])
}

// login signs the agent in and returns the CSRF token of the keys page.
func (a *agent) login() string {
	t := a.f.t
	t.Helper()
	_, page := a.get("/login")
	resp, _ := a.post("/login", url.Values{"csrf": {csrf(t, page)}, "owner": {owner}, "password": {password}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/api-keys" {
		t.Fatalf("login: %d to %q, want 303 to /api-keys", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, page = a.get("/api-keys")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api-keys after login: %d", resp.StatusCode)
	}
	return csrf(t, page)
}

// createKey creates a key through the console and returns its secret.
func (a *agent) createKey(token, name string) string {
	t := a.f.t
	t.Helper()
	resp, page := a.post("/api-keys", url.Values{"csrf": {token}, "name": {name}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create key: %d\n%s", resp.StatusCode, page)
	}
	m := regexp.MustCompile(`id="new-key"[^>]*value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no new key in page:\n%s", page)
	}
	return html.UnescapeString(m[1])
}

func (a *agent) sessionToken() string {
	c, ok := a.cookies["__Host-console_session"]
	if !ok {
		a.f.t.Fatal("no session cookie")
	}
	return c.Value
}

func TestLogin(t *testing.T) {
	for _, tc := range []struct {
		name, owner, password string
		status                int
	}{
		{"wrong password", owner, "wrong horse battery staple", http.StatusUnauthorized},
		{"unknown owner", "eve@example.com", password, http.StatusUnauthorized},
		{"empty", "", "", http.StatusUnauthorized},
		{"right", owner, password, http.StatusSeeOther},
		{"owner in another case", strings.ToUpper(owner), password, http.StatusSeeOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, console.Config{})
			a := f.agent()
			_, page := a.get("/login")
			resp, page := a.post("/login", url.Values{"csrf": {csrf(t, page)}, "owner": {tc.owner}, "password": {tc.password}})
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d\n%s", resp.StatusCode, tc.status, page)
			}
			_, signedIn := a.cookies["__Host-console_session"]
			if signedIn != (tc.status == http.StatusSeeOther) {
				t.Fatalf("session cookie set: %v", signedIn)
			}
			if !signedIn {
				if !strings.Contains(page, "Wrong e-mail address or password") {
					t.Errorf("the page does not say why:\n%s", page)
				}
				if strings.Contains(page, tc.password) && tc.password != "" {
					t.Error("the page repeats the password")
				}
				resp, _ := a.get("/api-keys")
				if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
					t.Errorf("GET /api-keys without a session: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
				}
				return
			}
			if resp.Header.Get("Location") != "/api-keys" {
				t.Errorf("redirect to %q", resp.Header.Get("Location"))
			}
			if _, ok := a.cookies["__Host-console_login"]; ok {
				t.Error("the login CSRF cookie outlives the sign-in")
			}
			s, err := f.accounts.Session(t.Context(), a.sessionToken())
			if err != nil || s.Account != f.account.ID {
				t.Fatalf("session %+v, %v; want one of %s", s, err, f.account.ID)
			}
			resp, page = a.get("/api-keys")
			if resp.StatusCode != http.StatusOK || !strings.Contains(page, owner) {
				t.Fatalf("GET /api-keys: %d\n%s", resp.StatusCode, page)
			}
			if log := f.log.String(); strings.Contains(log, a.sessionToken()) || strings.Contains(log, password) {
				t.Errorf("the log holds the session token or the password:\n%s", log)
			}
		})
	}
}

// TestLoginLocked: after account.MaxLoginFailures wrong passwords the
// form answers 429 with Retry-After, even to the right password.
func TestLoginLocked(t *testing.T) {
	f := newFixture(t, console.Config{})
	a := f.agent()
	try := func(password string) (*http.Response, string) {
		_, page := a.get("/login")
		return a.post("/login", url.Values{"csrf": {csrf(t, page)}, "owner": {owner}, "password": {password}})
	}
	for range account.MaxLoginFailures {
		if resp, _ := try("wrong"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a wrong password: %d", resp.StatusCode)
		}
	}
	resp, page := try(password)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(page, "Too many failed sign-ins") {
		t.Fatalf("the right password when locked: %d, Retry-After %q\n%s", resp.StatusCode, resp.Header.Get("Retry-After"), page)
	}
	if _, ok := a.cookies["__Host-console_session"]; ok {
		t.Fatal("a locked sign-in set a session")
	}
}

// stallStore is an account.Store whose next Get, once armed, tells
// entered and waits until release is closed.
type stallStore struct {
	account.Store
	arm     chan struct{} // a token: the next Get stalls
	entered chan struct{}
	release chan struct{}
}

func (s *stallStore) Get(ctx context.Context, key string) ([]byte, error) {
	select {
	case <-s.arm:
		s.entered <- struct{}{}
		<-s.release
	default:
	}
	return s.Store.Get(ctx, key)
}

// TestLoginBusy: while account.Config.MaxConcurrentLogins sign-ins check
// passwords, one more gets 503 with Retry-After, without a session; and
// it counts no failed sign-in.
func TestLoginBusy(t *testing.T) {
	ctx := t.Context()
	s := &stallStore{Store: account.NewMemory(), arm: make(chan struct{}, 1), entered: make(chan struct{}), release: make(chan struct{})}
	accounts, err := account.New(ctx, account.Config{Store: s, PasswordIterations: testIterations, MaxConcurrentLogins: 1, LoginQueueWait: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := accounts.CreateAccount(ctx, account.NewAccount{Name: "Ada's lab", Owner: owner, Password: password}); err != nil {
		t.Fatal(err)
	}
	c, err := console.New(console.Config{Accounts: accounts, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, accounts: accounts, mux: http.NewServeMux(), log: &syncBuffer{}}
	c.Register(f.mux)
	a := f.agent()
	try := func(password string) (*http.Response, string) {
		_, page := a.get("/login")
		return a.post("/login", url.Values{"csrf": {csrf(t, page)}, "owner": {owner}, "password": {password}})
	}

	// One sign-in, with a wrong password, from another client, holds the
	// only check, stalled reading its owner.
	s.arm <- struct{}{}
	done := make(chan error)
	go func() {
		_, _, err := accounts.Login(ctx, "203.0.113.9", owner, "wrong")
		done <- err
	}()
	<-s.entered
	for range account.MaxLoginFailures + 1 {
		resp, page := try(password)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(page, "Too many sign-ins at once") {
			t.Fatalf("a sign-in while the check is taken: %d, Retry-After %q\n%s", resp.StatusCode, resp.Header.Get("Retry-After"), page)
		}
		if _, ok := a.cookies["__Host-console_session"]; ok {
			t.Fatal("a busy sign-in set a session")
		}
	}
	close(s.release)
	if err := <-done; !errors.Is(err, account.ErrInvalidLogin) {
		t.Fatalf("the stalled sign-in: %v, want ErrInvalidLogin", err)
	}
	// More busy sign-ins than MaxLoginFailures locked nothing.
	if resp, page := try(password); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("a sign-in once the check is free: %d\n%s", resp.StatusCode, page)
	}
}

// TestLoginCSRF: the sign-in form needs the token its GET set in a
// cookie, so that another site cannot sign a browser in to its account.
func TestLoginCSRF(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cookie bool   // send the login cookie
		token  string // "" sends the page's token
	}{
		{"no cookie", false, ""},
		{"no token", true, "-"},
		{"wrong token", true, "AAAAAAAAAAAAAAAAAAAAAAAAAA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, console.Config{})
			a := f.agent()
			_, page := a.get("/login")
			form := url.Values{"owner": {owner}, "password": {password}, "csrf": {csrf(t, page)}}
			switch tc.token {
			case "":
			case "-":
				form.Del("csrf")
			default:
				form.Set("csrf", tc.token)
			}
			if !tc.cookie {
				delete(a.cookies, "__Host-console_login")
			}
			resp, page := a.post("/login", form)
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("status %d, want 403\n%s", resp.StatusCode, page)
			}
			if _, ok := a.cookies["__Host-console_session"]; ok {
				t.Fatal("signed in without a valid login CSRF token")
			}
			// The 403 page is a fresh form that works.
			resp, _ = a.post("/login", url.Values{"owner": {owner}, "password": {password}, "csrf": {csrf(t, page)}})
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("the fresh form: %d, want 303", resp.StatusCode)
			}
		})
	}
}

// TestCSRF: a POST without the session's CSRF token, or with a wrong one,
// is 403 and changes nothing.
func TestCSRF(t *testing.T) {
	f := newFixture(t, console.Config{})
	a := f.agent()
	token := a.login()
	keep := a.createKey(token, "keep")
	keys, err := f.accounts.Keys(t.Context(), f.account.ID)
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %v, %v", keys, err)
	}
	id := keys[0].ID
	for _, tc := range []struct {
		name string
		csrf []string
	}{
		{"missing", nil},
		{"empty", []string{""}},
		{"wrong", []string{"AAAAAAAAAAAAAAAAAAAAAAAAAA"}},
		{"another session's", []string{f.otherCSRF()}},
	} {
		for _, path := range []string{"/api-keys", "/api-keys/" + id + "/revoke", "/logout"} {
			t.Run(tc.name+" "+path, func(t *testing.T) {
				form := url.Values{"name": {"forged"}}
				if tc.csrf != nil {
					form["csrf"] = tc.csrf
				}
				resp, page := a.post(path, form)
				if resp.StatusCode != http.StatusForbidden {
					t.Fatalf("status %d, want 403\n%s", resp.StatusCode, page)
				}
				if _, err := f.accounts.Authenticate(t.Context(), keep); err != nil {
					t.Errorf("the key no longer works: %v", err)
				}
				if keys, _ := f.accounts.Keys(t.Context(), f.account.ID); len(keys) != 1 {
					t.Errorf("%d keys, want 1", len(keys))
				}
				if _, err := f.accounts.Session(t.Context(), a.sessionToken()); err != nil {
					t.Errorf("the session ended: %v", err)
				}
			})
		}
	}
	// The token in the query string does not count: only the form's.
	resp, _ := a.post("/api-keys?csrf="+url.QueryEscape(token), url.Values{"name": {"forged"}})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("token in the URL: %d, want 403", resp.StatusCode)
	}
}

// otherCSRF signs in a second browser and returns its CSRF token.
func (f *fixture) otherCSRF() string {
	return f.agent().login()
}

// TestCrossOrigin: browsers' cross-origin POSTs are refused even with a
// right CSRF token, and same-origin ones go through.
func TestCrossOrigin(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header http.Header
		status int
	}{
		{"cross-site fetch", http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden},
		{"same-site fetch", http.Header{"Sec-Fetch-Site": {"same-site"}}, http.StatusForbidden},
		{"foreign origin", http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"same-origin fetch", http.Header{"Sec-Fetch-Site": {"same-origin"}}, http.StatusOK},
		{"own origin", http.Header{"Origin": {"https://console.example"}}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, console.Config{})
			a := f.agent()
			token := a.login()
			a.header = tc.header
			resp, page := a.post("/api-keys", url.Values{"csrf": {token}, "name": {"laptop"}})
			if resp.StatusCode != tc.status {
				t.Fatalf("create: %d, want %d\n%s", resp.StatusCode, tc.status, page)
			}
			keys, err := f.accounts.Keys(t.Context(), f.account.ID)
			if err != nil || (len(keys) == 1) != (tc.status == http.StatusOK) {
				t.Fatalf("keys %v, %v", keys, err)
			}
			// The sign-in form too.
			b := f.agent()
			b.header = tc.header
			_, loginPage := b.get("/login")
			resp, _ = b.post("/login", url.Values{"csrf": {csrf(t, loginPage)}, "owner": {owner}, "password": {password}})
			want := http.StatusSeeOther
			if tc.status == http.StatusForbidden {
				want = http.StatusForbidden
			}
			if resp.StatusCode != want {
				t.Fatalf("login: %d, want %d", resp.StatusCode, want)
			}
		})
	}
}

func TestCreateKeyShowsSecretOnce(t *testing.T) {
	f := newFixture(t, console.Config{})
	a := f.agent()
	token := a.login()
	resp, page := a.post("/api-keys", url.Values{"csrf": {token}, "name": {"CI <runner>"}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d\n%s", resp.StatusCode, page)
	}
	m := regexp.MustCompile(`id="new-key"[^>]*value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no secret in the page:\n%s", page)
	}
	secret := html.UnescapeString(m[1])
	keys, err := f.accounts.Keys(t.Context(), f.account.ID)
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %v, %v", keys, err)
	}
	// The key is checked by its id, so that its last use stays "never".
	p := account.Principal{Key: keys[0]}
	if p.Key.ID != f.accounts.KeyID(secret) || p.Key.Name != "CI <runner>" {
		t.Errorf("key %+v is not the secret's (%s)", p.Key, f.accounts.KeyID(secret))
	}
	for _, want := range []string{">Copy Key</button>", "CI &lt;runner&gt;", p.Key.Hint} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		t.Errorf("Location %q", loc)
	}
	for _, c := range a.cookies {
		if strings.Contains(c.Value, secret) {
			t.Errorf("cookie %s holds the secret", c.Name)
		}
	}
	log := f.log.String()
	if strings.Contains(log, secret) {
		t.Errorf("the log holds the secret:\n%s", log)
	}
	if !strings.Contains(log, p.Key.ID) {
		t.Errorf("the log does not name the key %s:\n%s", p.Key.ID, log)
	}

	resp, page = a.get("/api-keys")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("list: %d", resp.StatusCode)
	}
	if strings.Contains(page, secret) || strings.Contains(page, "Copy Key") {
		t.Errorf("the list shows the secret again:\n%s", page)
	}
	for _, want := range []string{"CI &lt;runner&gt;", p.Key.Hint, "2026-03-10", "Never", `action="/api-keys/` + p.Key.ID + `/revoke"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the list lacks %q:\n%s", want, page)
		}
	}
	// After the key is used, the list says when.
	f.clock.Add(time.Hour)
	if _, err := f.accounts.Authenticate(t.Context(), secret); err != nil {
		t.Fatalf("the secret shown does not authenticate: %v", err)
	}
	if _, page = a.get("/api-keys"); !strings.Contains(page, "2026-03-10 10:30 UTC") {
		t.Errorf("the list does not show the last use:\n%s", page)
	}
}

func TestCreateKeyInvalidName(t *testing.T) {
	f := newFixture(t, console.Config{})
	a := f.agent()
	token := a.login()
	for _, name := range []string{"", strings.Repeat("n", 101)} {
		resp, page := a.post("/api-keys", url.Values{"csrf": {token}, "name": {name}})
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "1 to 100 characters") {
			t.Errorf("name of %d characters: %d\n%s", len(name), resp.StatusCode, page)
		}
	}
	// A body over the console's cap is refused before it is read whole.
	resp, page := a.post("/api-keys", url.Values{"csrf": {token}, "name": {strings.Repeat("n", 100<<10)}})
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "could not be read") {
		t.Errorf("a body of 100 KiB: %d\n%s", resp.StatusCode, page)
	}
	if keys, _ := f.accounts.Keys(t.Context(), f.account.ID); len(keys) != 0 {
		t.Errorf("%d keys made", len(keys))
	}
}

func TestRevoke(t *testing.T) {
	f := newFixture(t, console.Config{})
	ctx := t.Context()
	a := f.agent()
	token := a.login()
	secret := a.createKey(token, "laptop")
	other := a.createKey(token, "desktop")
	p, err := f.accounts.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}

	// A key of another account is not this owner's to revoke.
	bob, err := f.accounts.CreateAccount(ctx, account.NewAccount{Name: "Bob"})
	if err != nil {
		t.Fatal(err)
	}
	bobKey, bobSecret, err := f.accounts.CreateKey(ctx, bob.ID, "bob's")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{bobKey.ID, "key_0000000000000000"} {
		resp, _ := a.post("/api-keys/"+id+"/revoke", url.Values{"csrf": {token}})
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("revoke %s: %d, want 404", id, resp.StatusCode)
		}
	}
	if _, err := f.accounts.Authenticate(ctx, bobSecret); err != nil {
		t.Errorf("bob's key: %v", err)
	}

	resp, _ := a.post("/api-keys/"+p.Key.ID+"/revoke", url.Values{"csrf": {token}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/api-keys" {
		t.Fatalf("revoke: %d to %q, want 303 to /api-keys", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, err := f.accounts.Authenticate(ctx, secret); !errors.Is(err, account.ErrInvalidKey) {
		t.Errorf("the revoked key authenticates: %v", err)
	}
	if _, err := f.accounts.Authenticate(ctx, other); err != nil {
		t.Errorf("the other key: %v", err)
	}
	_, page := a.get("/api-keys")
	if strings.Contains(page, p.Key.ID) || !strings.Contains(page, "desktop") {
		t.Errorf("the list after revoking:\n%s", page)
	}
	if !strings.Contains(f.log.String(), "key_id="+p.Key.ID) {
		t.Errorf("the log does not name the revoked key:\n%s", f.log.String())
	}
}

func TestSessionExpiry(t *testing.T) {
	f := newFixture(t, console.Config{})
	a := f.agent()
	a.login()
	cookie := a.cookies["__Host-console_session"]
	if want := f.clock.Now().Add(account.SessionTTL); !cookie.Expires.Equal(want) {
		t.Errorf("cookie expires %v, want %v", cookie.Expires, want)
	}
	f.clock.Add(account.SessionTTL - time.Second)
	if resp, _ := a.get("/api-keys"); resp.StatusCode != http.StatusOK {
		t.Fatalf("a second before expiry: %d", resp.StatusCode)
	}
	f.clock.Add(time.Second)
	resp, _ := a.get("/api-keys")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Fatalf("at expiry: %d to %q, want 303 to /login", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, ok := a.cookies["__Host-console_session"]; ok {
		t.Error("the expired session's cookie is kept")
	}
}

func TestLogout(t *testing.T) {
	f := newFixture(t, console.Config{})
	a := f.agent()
	token := a.login()
	session := a.sessionToken()
	resp, _ := a.post("/logout", url.Values{"csrf": {token}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Fatalf("logout: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, ok := a.cookies["__Host-console_session"]; ok {
		t.Error("the cookie is kept")
	}
	if _, err := f.accounts.Session(t.Context(), session); !errors.Is(err, account.ErrNotFound) {
		t.Errorf("the session lives on in the store: %v", err)
	}
	// The old token, replayed, is worthless.
	a.cookies["__Host-console_session"] = &http.Cookie{Name: "__Host-console_session", Value: session}
	if resp, _ := a.get("/api-keys"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the old token: %d, want 303 to /login", resp.StatusCode)
	}
}

func TestRootAndLoginRedirects(t *testing.T) {
	f := newFixture(t, console.Config{})
	a := f.agent()
	resp, _ := a.get("/")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/api-keys" {
		t.Errorf("GET /: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := a.get("/elsewhere"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /elsewhere: %d; the console must not claim every path", resp.StatusCode)
	}
	if resp, _ := a.post("/api-keys", url.Values{"name": {"x"}}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("POST without a session: %d, want 303 to /login", resp.StatusCode)
	}
	a.login()
	resp, _ = a.get("/login")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/api-keys" {
		t.Errorf("GET /login signed in: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestCookieFlags(t *testing.T) {
	for _, tc := range []struct {
		insecure      bool
		session, form string
	}{
		{false, "__Host-console_session", "__Host-console_login"},
		{true, "console_session", "console_login"},
	} {
		f := newFixture(t, console.Config{InsecureCookies: tc.insecure})
		a := f.agent()
		resp, page := a.get("/login")
		form := cookieNamed(t, resp, tc.form)
		resp, _ = a.post("/login", url.Values{"csrf": {csrf(t, page)}, "owner": {owner}, "password": {password}})
		session := cookieNamed(t, resp, tc.session)
		for _, c := range []*http.Cookie{form, session} {
			if !c.HttpOnly || c.Secure == tc.insecure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Domain != "" {
				t.Errorf("insecure %v: cookie %s: HttpOnly %v, Secure %v, SameSite %v, Path %q, Domain %q",
					tc.insecure, c.Name, c.HttpOnly, c.Secure, c.SameSite, c.Path, c.Domain)
			}
		}
	}
}

func cookieNamed(t *testing.T, resp *http.Response, name string) *http.Cookie {
	t.Helper()
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no cookie %s in %v", name, resp.Header["Set-Cookie"])
	return nil
}

// TestHeaders: every page forbids framing, sniffing, referrers and
// caching, and its CSP allows exactly the page's inline script and style.
func TestHeaders(t *testing.T) {
	f := newFixture(t, console.Config{})
	a := f.agent()
	token := a.login()
	pages := map[string]func() (*http.Response, string){
		"login": func() (*http.Response, string) { return f.agent().get("/login") },
		"keys":  func() (*http.Response, string) { return a.get("/api-keys") },
		"new key": func() (*http.Response, string) {
			return a.post("/api-keys", url.Values{"csrf": {token}, "name": {"k"}})
		},
		"403":      func() (*http.Response, string) { return a.post("/api-keys", url.Values{"name": {"k"}}) },
		"redirect": func() (*http.Response, string) { return a.get("/") },
	}
	script := regexp.MustCompile(`(?s)<script>(.*?)</script>`)
	style := regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	for name, get := range pages {
		t.Run(name, func(t *testing.T) {
			resp, page := get()
			for h, want := range map[string]string{
				"X-Frame-Options":        "DENY",
				"X-Content-Type-Options": "nosniff",
				"Referrer-Policy":        "no-referrer",
				"Cache-Control":          "no-store",
			} {
				if got := resp.Header.Get(h); got != want {
					t.Errorf("%s: %q, want %q", h, got, want)
				}
			}
			csp := resp.Header.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "form-action 'self'", "base-uri 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if resp.StatusCode == http.StatusSeeOther {
				return
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			for _, el := range []struct {
				re  *regexp.Regexp
				dir string
			}{{script, "script-src"}, {style, "style-src"}} {
				m := el.re.FindAllStringSubmatch(page, -1)
				if len(m) != 1 {
					t.Fatalf("%d inline %s elements, want 1", len(m), el.dir)
				}
				sum := sha256.Sum256([]byte(m[0][1]))
				want := el.dir + " 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
				if !strings.Contains(csp, want+";") {
					t.Errorf("CSP %q does not allow the page's inline element by hash (%s)", csp, want)
				}
			}
			if regexp.MustCompile(`\son[a-z]+=`).MatchString(page) {
				t.Error("the page has an inline event handler, which the CSP forbids")
			}
		})
	}
}

func TestAccountAndUsage(t *testing.T) {
	ctx := context.Background()
	u := &usage{u: ratelimit.MonthUsage{Month: "2026-03", Spent: 12*ratelimit.Dollar + 50*ratelimit.Cent,
		Requests: 1234, InputTokens: 56_789, CachedInputTokens: 1_000, OutputTokens: 4_321}}
	f := newFixture(t, console.Config{Usage: u})
	a := f.agent()
	a.login()
	u.calls = nil
	_, page := a.get("/api-keys")
	for _, want := range []string{
		"Usage in 2026-03", "$12.50 of $100.00 this month", `value="12"`, "1,234", "56,789", "1,000 cached", "4,321",
		"Resets</dt><dd>2026-04-01 00:00 UTC", "default", "20 requests, 30,000 input tokens, 8,000 output tokens per minute",
		"Credits</dt><dd>$0.00", "Free <span class=\"note\">(active)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if want := []string{f.account.ID + "@2026-03-10T09:30:00Z"}; strings.Join(u.calls, ",") != strings.Join(want, ",") {
		t.Errorf("usage calls %v, want %v", u.calls, want)
	}

	// 40 USD of credits unlock tier2 at once; a trial shows its end.
	if _, err := f.accounts.AddCredits(ctx, account.Purchase{ID: "pay_1", Account: f.account.ID, Amount: 40 * ratelimit.Dollar}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.accounts.StartTrial(ctx, f.account.ID, "team"); err != nil {
		t.Fatal(err)
	}
	_, page = a.get("/api-keys")
	for _, want := range []string{"tier2", "$12.50 of $500.00", "Credits</dt><dd>$40.00", "Team <span class=\"note\">(trialing)", "Trial ends 2026-03-24 09:30 UTC."} {
		if !strings.Contains(page, want) {
			t.Errorf("after credits and a trial, the page lacks %q", want)
		}
	}

	// The trial expires on the clock: back to Free.
	f.clock.Add(15 * 24 * time.Hour)
	a = f.agent()
	a.login()
	_, page = a.get("/api-keys")
	for _, want := range []string{"Free <span class=\"note\">(expired)", "The trial of Team ended 2026-03-24 09:30 UTC."} {
		if !strings.Contains(page, want) {
			t.Errorf("after the trial, the page lacks %q", want)
		}
	}

	// A usage source that fails: the page says so, and logs why.
	u.err = errors.New("redis down")
	_, page = a.get("/api-keys")
	if !strings.Contains(page, "usage is unavailable") || !strings.Contains(f.log.String(), "redis down") {
		t.Errorf("usage failure not shown or logged:\n%s", page)
	}
}

func TestNoUsageSource(t *testing.T) {
	f := newFixture(t, console.Config{})
	a := f.agent()
	a.login()
	_, page := a.get("/api-keys")
	if strings.Contains(page, "Usage") {
		t.Errorf("usage shown without a UsageSource:\n%s", page)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := console.New(console.Config{}); err == nil || !strings.HasPrefix(err.Error(), "console: ") {
		t.Errorf("New without Accounts: %v", err)
	}
}

// TestUsageFromLimiter: a ratelimit.Memory is the console's UsageSource:
// the page shows what the account's settled requests spent and what a
// request in flight holds.
func TestUsageFromLimiter(t *testing.T) {
	lim := ratelimit.NewMemory()
	f := newFixture(t, console.Config{Usage: lim})
	ctx := t.Context()
	prices := ratelimit.Prices{Input: 2 * ratelimit.MicroDollar, Output: 10 * ratelimit.MicroDollar}
	req := ratelimit.Request{Key: "key_1", Account: f.account.ID, Tier: policy.Default, InputTokens: 1_000, MaxOutputTokens: 500, Prices: prices}
	res, err := lim.Reserve(ctx, req, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := lim.Settle(ctx, res, ratelimit.Usage{Requests: 1, InputTokens: 1_000, OutputTokens: 400}); err != nil {
		t.Fatal(err)
	}
	req.InputTokens, req.MaxOutputTokens = 100, 100
	if _, err := lim.Reserve(ctx, req, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	// The Team plan's price, charged at the plan's first use.
	if _, err := f.accounts.Subscribe(ctx, f.account.ID, policy.Team.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := f.accounts.UseQuota(ctx, lim, ratelimit.QuotaRequest{Account: f.account.ID, Reviews: 1}, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	a := f.agent()
	a.login()
	_, page := a.get("/api-keys")
	// Settled: 1,000 × 2 µ$ + 400 × 10 µ$ = $0.006; held: 100 × 2 µ$ +
	// 100 × 10 µ$ = $0.0012; the plan: $49; spent, which counts what is
	// held: $49.0072.
	for _, want := range []string{"Usage in 2026-03", "$49.0072 of $100.00 this month", "$0.0012 held by requests in flight",
		"$49.00 of it the code-review plan's monthly price",
		"Requests</dt><dd>1</dd>", "Input tokens</dt><dd>1,000", "Output tokens</dt><dd>400"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

func TestNextMonth(t *testing.T) {
	// December's usage resets on the first of January.
	f := newFixture(t, console.Config{Usage: &usage{}})
	f.clock.Add(-f.clock.Now().Sub(time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC)))
	a := f.agent()
	a.login()
	_, page := a.get("/api-keys")
	for _, want := range []string{"Usage in 2026-12", "Resets</dt><dd>2027-01-01 00:00 UTC", "$0.00 of $100.00"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
