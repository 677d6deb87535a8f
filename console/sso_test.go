package console_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/console"
	"github.com/inferkit/inferkit/internal/oidctest"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// ssoFixture is a console served over HTTP with one provider, corp, of
// an account on plan, against a local OpenID Connect provider.
type ssoFixture struct {
	t        *testing.T
	url      string
	provider *oidctest.Provider
	accounts *account.Accounts
	account  account.Account
	clock    *clock
}

func newSSOFixture(t *testing.T, plans ratelimit.Plans, plan string) *ssoFixture {
	t.Helper()
	ctx := t.Context()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f := &ssoFixture{t: t, url: srv.URL, clock: &clock{t: time.Now()}}
	callback := srv.URL + "/login/sso/corp/callback"
	f.provider = oidctest.New(t, "inferkit-console", "provider-secret", callback)
	var err error
	f.accounts, err = account.New(ctx, account.Config{Store: account.NewMemory(), Now: f.clock.Now, PasswordIterations: testIterations, Plans: plans})
	if err != nil {
		t.Fatal(err)
	}
	if f.account, err = f.accounts.CreateAccount(ctx, account.NewAccount{Name: "Corp", Owner: owner, Password: password}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.accounts.Subscribe(ctx, f.account.ID, plan); err != nil {
		t.Fatal(err)
	}
	c, err := console.New(console.Config{Accounts: f.accounts, Now: f.clock.Now, InsecureCookies: true, Logger: slog.New(slog.DiscardHandler),
		Quotas: ratelimit.NewMemory(),
		SSO: []console.SSOProvider{{Name: "corp", Issuer: f.provider.URL, ClientID: "inferkit-console", ClientSecret: "provider-secret",
			RedirectURL: callback, Account: f.account.ID, Domains: []string{"Corp.Example"}}}})
	if err != nil {
		t.Fatal(err)
	}
	c.Register(mux)
	return f
}

// jarClient is an HTTP client with cookies that follows redirects, as a
// browser does through the provider and back.
func jarClient(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

// get returns the status and body of GET url by client.
func get(t *testing.T, client *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A person of the account's domain signs in to an Enterprise account's
// console through the provider, and the session is theirs; every way
// the provider's answer can fail to hold is refused.
func TestSSOSignIn(t *testing.T) {
	f := newSSOFixture(t, nil, policy.Enterprise.Name)
	status, body := get(t, jarClient(t), f.url+"/login")
	if status != http.StatusOK || !strings.Contains(body, `href="/login/sso/corp"`) {
		t.Fatalf("sign-in form %d offers no single sign-on:\n%s", status, body)
	}

	f.provider.SignIn(&oidctest.Person{Email: "Grace@corp.example"})
	b := jarClient(t)
	status, body = get(t, b, f.url+"/login/sso/corp")
	if status != http.StatusOK || !strings.Contains(body, "signed in as grace@corp.example") {
		t.Fatalf("single sign-on answered %d:\n%s", status, body)
	}
	status, body = get(t, b, f.url+"/api-keys")
	if status != http.StatusOK || !strings.Contains(body, "grace@corp.example") || !strings.Contains(body, "Enterprise") {
		t.Fatalf("keys page after single sign-on %d:\n%s", status, body)
	}
	if f.provider.Issued() != 1 {
		t.Errorf("%d ID tokens issued, want 1", f.provider.Issued())
	}

	for _, tc := range []struct {
		name   string
		person *oidctest.Person
		tamper func(map[string]any)
		status int
		says   string
	}{
		{"other domain", &oidctest.Person{Email: "eve@evil.example"}, nil, http.StatusForbidden, "not an address of this account"},
		{"unverified address", &oidctest.Person{Email: "mallory@corp.example", Unverified: true}, nil, http.StatusUnauthorized, "no verified e-mail"},
		{"declined", nil, nil, http.StatusUnauthorized, "did not sign you in (access_denied)"},
		{"another nonce", &oidctest.Person{Email: "grace@corp.example"}, func(c map[string]any) { c["nonce"] = "replayed" }, http.StatusUnauthorized, "nonce"},
		{"another audience", &oidctest.Person{Email: "grace@corp.example"}, func(c map[string]any) { c["aud"] = "other-client" }, http.StatusUnauthorized, "ID token is not valid"},
		{"expired", &oidctest.Person{Email: "grace@corp.example"}, func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() }, http.StatusUnauthorized, "ID token is not valid"},
		{"another issuer", &oidctest.Person{Email: "grace@corp.example"}, func(c map[string]any) { c["iss"] = "https://evil.example" }, http.StatusUnauthorized, "ID token is not valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.provider.SignIn(tc.person)
			f.provider.Tamper(tc.tamper)
			defer f.provider.Tamper(nil)
			b := jarClient(t)
			status, body := get(t, b, f.url+"/login/sso/corp")
			if status != tc.status || !strings.Contains(body, tc.says) {
				t.Fatalf("answered %d, want %d saying %q:\n%s", status, tc.status, tc.says, body)
			}
			if resp, err := noRedirect(b).Get(f.url + "/api-keys"); err != nil || resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("the keys page after a refused sign-in: %v %v", resp, err)
			}
		})
	}

	t.Run("state not this browser's", func(t *testing.T) {
		f.provider.SignIn(&oidctest.Person{Email: "grace@corp.example"})
		// The attacker's own flow, whose callback URL the victim's
		// browser is made to open: its state is not in the victim's
		// cookie.
		attacker := noRedirect(jarClient(t))
		resp, err := attacker.Get(f.url + "/login/sso/corp")
		if err != nil {
			t.Fatal(err)
		}
		resp, err = attacker.Get(resp.Header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		callback := resp.Header.Get("Location")
		if !strings.Contains(callback, "code=") {
			t.Fatalf("provider redirect %q", callback)
		}
		status, body := get(t, jarClient(t), callback)
		if status != http.StatusForbidden || !strings.Contains(body, "did not start here") {
			t.Fatalf("a callback without this browser's state answered %d:\n%s", status, body)
		}
	})
}

// noRedirect returns a client like c that does not follow redirects.
func noRedirect(c *http.Client) *http.Client {
	n := *c
	n.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &n
}

// Single sign-on is Enterprise's: an account on any other plan, or on
// a lapsed one, is refused with a 403 that names the feature and the
// plan that has it.
func TestSSORefusedOffEnterprise(t *testing.T) {
	for _, plan := range []string{policy.Free.Name, policy.Team.Name, policy.Growth.Name} {
		t.Run(plan, func(t *testing.T) {
			f := newSSOFixture(t, nil, plan)
			f.provider.SignIn(&oidctest.Person{Email: "grace@corp.example"})
			status, body := get(t, jarClient(t), f.url+"/login/sso/corp")
			if status != http.StatusForbidden || !strings.Contains(body, "Single sign-on (sso) is not in the") || !strings.Contains(body, "the Enterprise plan has it") {
				t.Fatalf("plan %s: %d\n%s", plan, status, body)
			}
		})
	}
}

// Console members are seats: on a plan of one seat, the second person
// to sign in this month is refused with 429, the first signs in again,
// and the next month frees the seat.
func TestSSOSeats(t *testing.T) {
	plans := policy.Plans()
	for i := range plans {
		if plans[i].Name == policy.Enterprise.Name {
			plans[i].Users = 1
		}
	}
	f := newSSOFixture(t, plans, policy.Enterprise.Name)
	signIn := func(email string) (int, string) {
		f.provider.SignIn(&oidctest.Person{Email: email})
		return get(t, jarClient(t), f.url+"/login/sso/corp")
	}
	if status, body := signIn("grace@corp.example"); status != http.StatusOK {
		t.Fatalf("first member: %d\n%s", status, body)
	}
	reset := ratelimit.NextMonth(f.clock.Now()).Format("2006-01-02")
	if status, body := signIn("linus@corp.example"); status != http.StatusTooManyRequests || !strings.Contains(body, "1 seats are all taken this month; they reset on "+reset) {
		t.Fatalf("second member: %d\n%s", status, body)
	}
	if status, body := signIn("grace@corp.example"); status != http.StatusOK {
		t.Fatalf("first member again: %d\n%s", status, body)
	}
	f.clock.Add(ratelimit.NextMonth(f.clock.Now()).Sub(f.clock.Now()) + time.Minute)
	if status, body := signIn("linus@corp.example"); status != http.StatusOK {
		t.Fatalf("second member next month: %d\n%s", status, body)
	}
}
