package console

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/ratelimit"
)

// UsageSource reports what an account used in a calendar month (UTC).
// Every ratelimit.Limiter (ratelimit.Memory, redislimit's Limiter)
// implements it. It is called from the requests' goroutines,
// concurrently.
type UsageSource interface {
	// Usage returns the account's usage in the month of now.
	Usage(ctx context.Context, account string, now time.Time) (ratelimit.MonthUsage, error)
}

// Every ratelimit.Limiter reports usage.
var _ UsageSource = ratelimit.Limiter(nil)

// Config configures a Console. Accounts is required; the zero value of
// every other field is useful.
type Config struct {
	// Accounts keeps the accounts, keys and console sessions. Required;
	// the caller owns it and its Store.
	Accounts *account.Accounts
	// Usage reports this month's usage and spend on the keys page. Nil
	// means the page shows none.
	Usage UsageSource
	// Logger receives sign-ins, sign-outs, created and revoked keys (by
	// key id and account, never a secret or a session token) and server
	// errors. Nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock of the pages (the month of the usage, the state of
	// a plan) and of session expiry, which the console checks besides
	// Accounts. Nil means time.Now.
	Now func() time.Time
	// InsecureCookies drops the Secure flag and the __Host- prefix of
	// the console's cookies, for a console served over plain HTTP on a
	// host other than localhost, where browsers would not send a secure
	// cookie back. Off by default: serve the console over HTTPS.
	InsecureCookies bool
	// Client names the client of a sign-in, for Accounts.Login, which
	// shares the password checks fairly between clients. Nil means the
	// request's address (its RemoteAddr; an IPv6 address by its /64,
	// which one host usually holds whole). Behind a reverse proxy every
	// request comes from the proxy's address: name the client the proxy
	// reports (its X-Forwarded-For, as that proxy sets it) instead.
	Client func(r *http.Request) string
	// SSO are the OpenID Connect providers of the accounts whose
	// people sign in by single sign-on (Enterprise), each offered on
	// the sign-in form. Nil means none.
	SSO []SSOProvider
	// SSOClient makes the requests to the providers' endpoints
	// (discovery, token, keys). Nil means a client with a 10-second
	// timeout.
	SSOClient *http.Client
	// Quotas, when set, counts each person who signs in by single
	// sign-on among the seats (users) of the account's plan this month,
	// as package codereview counts the people who ask for reviews: past
	// the plan's seats, a sign-in of someone new is refused with 429.
	// Nil counts no seats.
	Quotas ratelimit.Quotas
	// CodeReview, when set, serves the code-review pages: analytics
	// (plans with policy.FeatureAnalytics) and LLM observability (plans
	// with policy.FeatureLLMObservability). Nil means no such pages.
	CodeReview CodeReviewSource
}

// Console serves the account owner's web console (see the package doc).
// Create it with New; the zero value is not usable. A Console is safe for
// concurrent use. It starts no goroutine and has nothing to close.
type Console struct {
	accounts *account.Accounts
	usage    UsageSource
	log      *slog.Logger
	now      func() time.Time
	secure   bool
	// sessionCookie and loginCookie name the session's cookie and the
	// sign-in form's CSRF cookie.
	sessionCookie, loginCookie string
	pages                      map[string]*template.Template
	script                     template.JS
	style                      template.CSS
	csp                        string
	cop                        *http.CrossOriginProtection
	client                     func(r *http.Request) string
	// ssoCookie names the cookie of a single sign-on under way.
	ssoCookie  string
	sso        map[string]*sso
	ssoNames   []string // in Config.SSO's order
	quotas     ratelimit.Quotas
	codeReview CodeReviewSource
}

//go:embed templates/*.html static/copy.js static/style.css
var files embed.FS

// maxFormBytes caps the body of a form: a name, a password, a token.
const maxFormBytes = 64 << 10

// busyRetryAfter is the Retry-After, in seconds, of a sign-in refused
// with account.ErrBusy.
const busyRetryAfter = 1

// unavailableRetryAfter is the Retry-After, in seconds, of a page that
// failed because the account store could not be reached.
const unavailableRetryAfter = 5

// remoteClient names a request's client by its address: the IP of
// RemoteAddr, an IPv6 address by its /64 prefix.
func remoteClient(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			return p.String()
		}
	}
	return ip.String()
}

// loginTTL is how long a sign-in form's CSRF cookie lasts.
const loginTTL = time.Hour

// New validates cfg and returns a Console.
func New(cfg Config) (*Console, error) {
	if cfg.Accounts == nil {
		return nil, errors.New("console: Config.Accounts is nil")
	}
	c := &Console{
		accounts: cfg.Accounts, usage: cfg.Usage, log: cfg.Logger, now: cfg.Now, secure: !cfg.InsecureCookies,
		sessionCookie: "console_session", loginCookie: "console_login",
		cop: http.NewCrossOriginProtection(), client: cfg.Client,
		ssoCookie: "console_sso", quotas: cfg.Quotas, codeReview: cfg.CodeReview,
	}
	client := cfg.SSOClient
	if client == nil {
		client = &http.Client{Timeout: ssoTimeout}
	}
	var err error
	if c.sso, err = checkSSO(cfg.SSO, client); err != nil {
		return nil, err
	}
	for _, p := range cfg.SSO {
		c.ssoNames = append(c.ssoNames, p.Name)
	}
	if c.client == nil {
		c.client = remoteClient
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.secure {
		c.sessionCookie, c.loginCookie, c.ssoCookie = "__Host-"+c.sessionCookie, "__Host-"+c.loginCookie, "__Host-"+c.ssoCookie
	}
	script, err := files.ReadFile("static/copy.js")
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	style, err := files.ReadFile("static/style.css")
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	c.script, c.style = template.JS(script), template.CSS(style)
	c.csp = "default-src 'none'; script-src " + hashSource(script) + "; style-src " + hashSource(style) +
		"; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
	c.pages = map[string]*template.Template{}
	for _, page := range []string{"login.html", "keys.html", "error.html", "signed-in.html", "analytics.html", "observability.html"} {
		t, err := template.ParseFS(files, "templates/layout.html", "templates/"+page)
		if err != nil {
			return nil, fmt.Errorf("console: %w", err)
		}
		c.pages[page] = t
	}
	c.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.log.LogAttrs(r.Context(), slog.LevelWarn, "console: cross-origin request refused",
			slog.String("method", r.Method), slog.String("path", r.URL.Path))
		c.fail(w, r, http.StatusForbidden, "This form did not come from this site.")
	}))
	return c, nil
}

// hashSource returns the CSP source that allows an inline element whose
// text is b.
func hashSource(b []byte) string {
	sum := sha256.Sum256(b)
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// Register registers the console's routes on mux (see the package doc).
// GET / matches only the path "/" ("GET /{$}"), so that the console and
// an httpapi.Handler share a mux. Like mux.Handle, it panics if a pattern
// conflicts with one already registered.
func (c *Console) Register(mux *http.ServeMux) {
	mux.Handle("GET /{$}", c.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/api-keys", http.StatusSeeOther)
	})))
	mux.Handle("GET /login", c.wrap(http.HandlerFunc(c.loginForm)))
	mux.Handle("POST /login", c.wrap(http.HandlerFunc(c.login)))
	mux.Handle("POST /logout", c.wrap(c.signedIn(c.logout)))
	mux.Handle("GET /api-keys", c.wrap(c.signedIn(c.keys)))
	mux.Handle("POST /api-keys", c.wrap(c.signedIn(c.createKey)))
	mux.Handle("POST /api-keys/{id}/revoke", c.wrap(c.signedIn(c.revokeKey)))
	mux.Handle("GET /login/sso/{name}", c.wrap(http.HandlerFunc(c.ssoStart)))
	mux.Handle("GET /login/sso/{name}/callback", c.wrap(http.HandlerFunc(c.ssoCallback)))
	if c.codeReview != nil {
		mux.Handle("GET /code-review/analytics", c.wrap(c.signedIn(c.analytics)))
		mux.Handle("GET /code-review/observability", c.wrap(c.signedIn(c.observability)))
	}
}

// wrap sets the security headers of every response, refuses cross-origin
// POSTs and caps request bodies.
func (c *Console) wrap(next http.Handler) http.Handler {
	protected := c.cop.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", c.csp)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		protected.ServeHTTP(w, r)
	})
}

// session is a signed-in request's session and its token.
type session struct {
	account.Session
	token string
}

// signedIn runs next for requests with a live session, after checking
// the CSRF token of a POST; it redirects the others to /login.
func (c *Console) signedIn(next func(http.ResponseWriter, *http.Request, session)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ck, err := r.Cookie(c.sessionCookie)
		if err != nil || ck.Value == "" {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		s, err := c.accounts.Session(r.Context(), ck.Value)
		switch {
		case errors.Is(err, account.ErrNotFound) || (err == nil && !c.now().Before(s.Expires)):
			http.SetCookie(w, c.cookie(c.sessionCookie, "", time.Time{}))
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		case err != nil:
			c.serverError(w, r, err)
			return
		}
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err != nil {
				c.fail(w, r, http.StatusBadRequest, "The form could not be read.")
				return
			}
			if !sameToken(r.PostForm.Get("csrf"), s.CSRF) {
				c.log.LogAttrs(r.Context(), slog.LevelWarn, "console: CSRF token missing or wrong",
					slog.String("account", s.Account), slog.String("path", r.URL.Path))
				c.fail(w, r, http.StatusForbidden, "This form has expired or did not come from this site: reload the page and try again.")
				return
			}
		}
		next(w, r, session{Session: s, token: ck.Value})
	})
}

// sameToken compares a form's token with the expected one in constant
// time; an empty token never matches.
func sameToken(got, want string) bool {
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// cookie returns one of the console's cookies: a zero expires deletes it.
func (c *Console) cookie(name, value string, expires time.Time) *http.Cookie {
	ck := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: c.secure, SameSite: http.SameSiteStrictMode}
	if expires.IsZero() {
		ck.MaxAge = -1
	} else {
		ck.Expires = expires.UTC()
	}
	return ck
}

// loginForm serves the sign-in form with a fresh login CSRF token, or
// sends an owner already signed in to the keys.
func (c *Console) loginForm(w http.ResponseWriter, r *http.Request) {
	if ck, err := r.Cookie(c.sessionCookie); err == nil && ck.Value != "" {
		if s, err := c.accounts.Session(r.Context(), ck.Value); err == nil && c.now().Before(s.Expires) {
			http.Redirect(w, r, "/api-keys", http.StatusSeeOther)
			return
		}
	}
	c.renderLogin(w, r, http.StatusOK, "", "")
}

// renderLogin serves the sign-in form with a fresh login CSRF token in
// its hidden field and in a cookie.
func (c *Console) renderLogin(w http.ResponseWriter, r *http.Request, status int, owner, message string) {
	token := rand.Text()
	http.SetCookie(w, c.cookie(c.loginCookie, token, c.now().Add(loginTTL)))
	c.render(w, r, status, "login.html", loginPage{page: c.page("Sign in"), CSRF: token, Owner: owner, Error: message, SSO: c.ssoNames})
}

// login checks the login CSRF token and the owner's password, starts a
// session and sends the owner to the keys.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		c.fail(w, r, http.StatusBadRequest, "The form could not be read.")
		return
	}
	owner := r.PostForm.Get("owner")
	ck, err := r.Cookie(c.loginCookie)
	if err != nil || !sameToken(r.PostForm.Get("csrf"), ck.Value) {
		c.log.LogAttrs(r.Context(), slog.LevelWarn, "console: sign-in CSRF token missing or wrong")
		c.renderLogin(w, r, http.StatusForbidden, owner, "The sign-in form expired or did not come from this site: please sign in again.")
		return
	}
	token, s, err := c.accounts.Login(r.Context(), c.client(r), owner, r.PostForm.Get("password"))
	switch {
	case errors.Is(err, account.ErrInvalidLogin) || errors.Is(err, account.ErrNotFound):
		c.log.LogAttrs(r.Context(), slog.LevelInfo, "console: sign-in refused")
		c.renderLogin(w, r, http.StatusUnauthorized, owner, "Wrong e-mail address or password.")
		return
	case errors.Is(err, account.ErrLoginLocked):
		c.log.LogAttrs(r.Context(), slog.LevelWarn, "console: sign-in locked after repeated failures")
		w.Header().Set("Retry-After", strconv.Itoa(int(account.LoginWindow.Seconds())))
		c.renderLogin(w, r, http.StatusTooManyRequests, owner,
			fmt.Sprintf("Too many failed sign-ins: try again in %d minutes.", int(account.LoginWindow.Minutes())))
		return
	case errors.Is(err, account.ErrBusy):
		// Too many sign-ins at once (from this client, or waiting too
		// long for a turn): no password was checked, and the attempt
		// does not count towards the lock.
		c.log.LogAttrs(r.Context(), slog.LevelWarn, "console: sign-in refused: too many at once")
		w.Header().Set("Retry-After", strconv.Itoa(busyRetryAfter))
		c.renderLogin(w, r, http.StatusServiceUnavailable, owner, "Too many sign-ins at once: please try again in a moment.")
		return
	case err != nil:
		c.serverError(w, r, err)
		return
	}
	c.log.LogAttrs(r.Context(), slog.LevelInfo, "console: signed in", slog.String("account", s.Account))
	http.SetCookie(w, c.cookie(c.loginCookie, "", time.Time{}))
	http.SetCookie(w, c.cookie(c.sessionCookie, token, s.Expires))
	http.Redirect(w, r, "/api-keys", http.StatusSeeOther)
}

// logout ends the session in the store and deletes its cookie.
func (c *Console) logout(w http.ResponseWriter, r *http.Request, s session) {
	if err := c.accounts.Logout(r.Context(), s.token); err != nil && !errors.Is(err, account.ErrNotFound) {
		c.serverError(w, r, err)
		return
	}
	c.log.LogAttrs(r.Context(), slog.LevelInfo, "console: signed out", slog.String("account", s.Account))
	http.SetCookie(w, c.cookie(c.sessionCookie, "", time.Time{}))
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// keys serves the keys page.
func (c *Console) keys(w http.ResponseWriter, r *http.Request, s session) {
	c.renderKeys(w, r, http.StatusOK, s, nil, "")
}

// createKey makes a key and serves the keys page with its secret, once.
func (c *Console) createKey(w http.ResponseWriter, r *http.Request, s session) {
	name := r.PostForm.Get("name")
	k, secret, err := c.accounts.CreateKey(r.Context(), s.Account, name)
	switch {
	case errors.Is(err, account.ErrInvalid):
		c.renderKeys(w, r, http.StatusBadRequest, s, nil, "A key's name is 1 to 100 characters.")
		return
	case err != nil:
		c.serverError(w, r, err)
		return
	}
	c.log.LogAttrs(r.Context(), slog.LevelInfo, "console: key created",
		slog.String("account", s.Account), slog.String("key_id", k.ID))
	c.renderKeys(w, r, http.StatusOK, s, &newKey{Name: k.Name, Secret: secret}, "")
}

// revokeKey revokes one of the account's keys and sends the owner back
// to the keys.
func (c *Console) revokeKey(w http.ResponseWriter, r *http.Request, s session) {
	id := r.PathValue("id")
	err := c.accounts.RevokeKey(r.Context(), s.Account, id)
	switch {
	case errors.Is(err, account.ErrNotFound):
		c.renderKeys(w, r, http.StatusNotFound, s, nil, "No such key: it may have been revoked already.")
		return
	case err != nil:
		c.serverError(w, r, err)
		return
	}
	c.log.LogAttrs(r.Context(), slog.LevelInfo, "console: key revoked",
		slog.String("account", s.Account), slog.String("key_id", id))
	http.Redirect(w, r, "/api-keys", http.StatusSeeOther)
}

// renderKeys serves the keys page of the session's account.
func (c *Console) renderKeys(w http.ResponseWriter, r *http.Request, status int, s session, nk *newKey, message string) {
	ctx := r.Context()
	now := c.now()
	a, err := c.accounts.Account(ctx, s.Account)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	keys, err := c.accounts.Keys(ctx, s.Account)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	p := keysPage{page: c.page("API keys"), CSRF: s.CSRF, Account: viewAccount(a, c.accounts.Billing(), now), NewKey: nk, Error: message}
	p.Account.Member = s.Member
	for _, k := range keys {
		p.Keys = append(p.Keys, viewKey(k))
	}
	if c.usage != nil {
		u, err := c.usage.Usage(ctx, s.Account, now)
		if err != nil {
			c.log.LogAttrs(ctx, slog.LevelError, "console: usage unavailable",
				slog.String("account", s.Account), slog.Any("error", err))
			p.UsageUnavailable = true
		} else {
			v := viewUsage(u, a.Tier(), now)
			p.Usage = &v
		}
	}
	c.render(w, r, status, "keys.html", p)
}

// fail serves an error page.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, status int, message string) {
	c.render(w, r, status, "error.html", errorPage{page: c.page(http.StatusText(status)), Status: status, Message: message})
}

// serverError logs err and serves a 500 page that does not repeat it.
func (c *Console) serverError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, account.ErrUnavailable) {
		// The store is out of reach (Redis down): say so, and when to
		// try again.
		c.log.LogAttrs(r.Context(), slog.LevelWarn, "console: the account store is unavailable",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("error", err))
		w.Header().Set("Retry-After", strconv.Itoa(unavailableRetryAfter))
		c.fail(w, r, http.StatusServiceUnavailable, "The service is briefly unavailable; please try again in a moment.")
		return
	}
	c.log.LogAttrs(r.Context(), slog.LevelError, "console: server error",
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("error", err))
	c.fail(w, r, http.StatusInternalServerError, "Something went wrong on our side; please try again.")
}

// render executes a page into a buffer, so that a template error is a
// clean 500, and writes it.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var b bytes.Buffer
	if err := c.pages[name].ExecuteTemplate(&b, "layout", data); err != nil {
		c.log.LogAttrs(r.Context(), slog.LevelError, "console: template failed",
			slog.String("page", name), slog.Any("error", err))
		http.Error(w, "console: internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}
