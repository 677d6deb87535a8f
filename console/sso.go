package console

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// SSOProvider is an OpenID Connect provider through which the people of
// one account sign in to its console: single sign-on, a feature of the
// plans with policy.FeatureSSO (Enterprise). The console runs the
// authorization-code flow with PKCE (S256), a state bound to the
// browser by a cookie and a nonce bound to the ID token, checks the ID
// token's signature (by the provider's published keys), issuer,
// audience and expiry, and admits a verified e-mail address of one of
// Domains.
type SSOProvider struct {
	// Name names the provider in its URLs (/login/sso/NAME) and on the
	// sign-in form: 1 to 32 of a-z, 0-9 and -.
	Name string
	// Issuer is the provider's issuer URL: its discovery document is
	// Issuer/.well-known/openid-configuration, read at the first
	// sign-in (and again after a failure to read it).
	Issuer string
	// ClientID and ClientSecret are the console's registration at the
	// provider.
	ClientID, ClientSecret string
	// RedirectURL is the callback registered at the provider: the
	// console's own URL, https://HOST/login/sso/NAME/callback.
	RedirectURL string
	// Account is the id of the account whose console its people sign
	// in to.
	Account string
	// Domains are the e-mail domains of the account's people, such as
	// example.com: a verified address of another domain is refused.
	// At least one.
	Domains []string
}

// ssoName is what an SSOProvider's Name may be.
var ssoName = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

// ssoTTL is how long a sign-in at a provider may take, from the console's
// redirect to the provider's redirect back.
const ssoTTL = 10 * time.Minute

// ssoTimeout bounds each request to a provider (discovery, token, keys).
const ssoTimeout = 10 * time.Second

// sso is a configured provider: its discovery is read once it works.
type sso struct {
	SSOProvider
	domains []string     // lowercased
	client  *http.Client // of the provider's endpoints

	mu       sync.Mutex
	oauth    *oauth2.Config
	verifier *oidc.IDTokenVerifier
}

// checkSSO validates the providers of a Config; client is the HTTP
// client of their endpoints.
func checkSSO(ps []SSOProvider, client *http.Client) (map[string]*sso, error) {
	out := map[string]*sso{}
	for i, p := range ps {
		field := fmt.Sprintf("console: Config.SSO[%d]", i)
		if !ssoName.MatchString(p.Name) {
			return nil, fmt.Errorf("%s.Name is %q: want 1 to 32 of a-z, 0-9 and -", field, p.Name)
		}
		if out[p.Name] != nil {
			return nil, fmt.Errorf("%s.Name %q is taken by another provider", field, p.Name)
		}
		if u, err := url.Parse(p.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("%s.Issuer is %q: want an http or https URL", field, p.Issuer)
		}
		want := "/login/sso/" + p.Name + "/callback"
		if u, err := url.Parse(p.RedirectURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Path != want {
			return nil, fmt.Errorf("%s.RedirectURL is %q: want the console's URL https://HOST%s", field, p.RedirectURL, want)
		}
		switch {
		case p.ClientID == "":
			return nil, fmt.Errorf("%s.ClientID is empty", field)
		case p.Account == "":
			return nil, fmt.Errorf("%s.Account is empty", field)
		case len(p.Domains) == 0:
			return nil, fmt.Errorf("%s.Domains is empty: name the e-mail domains of the account's people", field)
		}
		s := &sso{SSOProvider: p, client: client}
		for _, d := range p.Domains {
			d = strings.ToLower(strings.TrimSpace(d))
			if d == "" || strings.ContainsAny(d, "@/ ") {
				return nil, fmt.Errorf("%s.Domains has %q: want a domain such as example.com", field, d)
			}
			s.domains = append(s.domains, d)
		}
		out[p.Name] = s
	}
	return out, nil
}

// discover reads the provider's discovery document the first time it
// can, and returns its OAuth 2 configuration and ID token verifier.
func (s *sso) discover(ctx context.Context) (*oauth2.Config, *oidc.IDTokenVerifier, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.oauth != nil {
		return s.oauth, s.verifier, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ssoTimeout)
	defer cancel()
	p, err := oidc.NewProvider(ctx, s.Issuer)
	if err != nil {
		return nil, nil, err
	}
	s.oauth = &oauth2.Config{ClientID: s.ClientID, ClientSecret: s.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: s.RedirectURL, Scopes: []string{oidc.ScopeOpenID, "email"}}
	// The key set outlives the request that discovered it.
	s.verifier = p.VerifierContext(oidc.ClientContext(context.WithoutCancel(ctx), s.client), &oidc.Config{ClientID: s.ClientID})
	return s.oauth, s.verifier, nil
}

// clientContext returns ctx with the HTTP client of the provider's
// endpoints, which package oidc and oauth2 take from it.
func (s *sso) clientContext(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, s.client)
}

// ssoFlow is a sign-in under way, kept in the browser's flow cookie: the
// provider, the state the provider must send back, the ID token's nonce
// and the PKCE verifier.
type ssoFlow struct {
	Provider string `json:"p"`
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
}

// ssoStart serves GET /login/sso/{name}: it sends the browser to the
// provider, with a fresh state, nonce and PKCE challenge, and keeps them
// in the flow cookie.
func (c *Console) ssoStart(w http.ResponseWriter, r *http.Request) {
	s := c.sso[r.PathValue("name")]
	if s == nil {
		c.fail(w, r, http.StatusNotFound, "No such sign-in provider.")
		return
	}
	cfg, _, err := s.discover(s.clientContext(r.Context()))
	if err != nil {
		c.providerDown(w, r, s, err)
		return
	}
	f := ssoFlow{Provider: s.Name, State: rand.Text(), Nonce: rand.Text(), Verifier: oauth2.GenerateVerifier()}
	b, _ := json.Marshal(f)
	// Lax, not Strict: the provider's redirect back is a cross-site
	// navigation, on which a Strict cookie is not sent.
	ck := c.cookie(c.ssoCookie, base64.RawURLEncoding.EncodeToString(b), c.now().Add(ssoTTL))
	ck.SameSite = http.SameSiteLaxMode
	ck.Expires, ck.MaxAge = time.Time{}, int(ssoTTL.Seconds()) // whatever the browser's clock says
	http.SetCookie(w, ck)
	http.Redirect(w, r, cfg.AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), http.StatusFound)
}

// ssoCallback serves GET /login/sso/{name}/callback, where the provider
// sends the browser back: it checks the state against the flow cookie,
// exchanges the code (with the PKCE verifier) for an ID token, verifies
// it and its nonce, and signs in its verified e-mail address when its
// domain is the account's, the account's plan has single sign-on, and a
// seat of the plan is free.
func (c *Console) ssoCallback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	s := c.sso[r.PathValue("name")]
	if s == nil {
		c.fail(w, r, http.StatusNotFound, "No such sign-in provider.")
		return
	}
	var f ssoFlow
	ck, err := r.Cookie(c.ssoCookie)
	if err == nil {
		var b []byte
		if b, err = base64.RawURLEncoding.DecodeString(ck.Value); err == nil {
			err = json.Unmarshal(b, &f)
		}
	}
	flowGone := c.cookie(c.ssoCookie, "", time.Time{})
	flowGone.SameSite = http.SameSiteLaxMode
	http.SetCookie(w, flowGone) // a flow's state works once
	q := r.URL.Query()
	if err != nil || f.Provider != s.Name || !sameToken(q.Get("state"), f.State) {
		c.log.LogAttrs(ctx, slog.LevelWarn, "console: single sign-on state missing or wrong", slog.String("provider", s.Name))
		c.fail(w, r, http.StatusForbidden, "This sign-in expired or did not start here: please sign in again.")
		return
	}
	if e := q.Get("error"); e != "" {
		c.log.LogAttrs(ctx, slog.LevelInfo, "console: the provider refused a sign-in",
			slog.String("provider", s.Name), slog.String("error", clip(e, 64)))
		c.fail(w, r, http.StatusUnauthorized, fmt.Sprintf("%s did not sign you in (%s).", s.Name, clip(e, 64)))
		return
	}
	cfg, verifier, err := s.discover(s.clientContext(ctx))
	if err != nil {
		c.providerDown(w, r, s, err)
		return
	}
	pctx, cancel := context.WithTimeout(s.clientContext(ctx), ssoTimeout)
	defer cancel()
	tok, err := cfg.Exchange(pctx, q.Get("code"), oauth2.VerifierOption(f.Verifier))
	if err != nil {
		c.refuseSSO(w, r, s, "the code exchange failed", err)
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		c.refuseSSO(w, r, s, "the provider sent no ID token", nil)
		return
	}
	idt, err := verifier.Verify(pctx, raw)
	if err != nil {
		c.refuseSSO(w, r, s, "the ID token is not valid", err)
		return
	}
	if !sameToken(idt.Nonce, f.Nonce) {
		c.refuseSSO(w, r, s, "the ID token's nonce is not this sign-in's", nil)
		return
	}
	var claims struct {
		Email    string `json:"email"`
		Verified bool   `json:"email_verified"`
	}
	if err := idt.Claims(&claims); err != nil {
		c.refuseSSO(w, r, s, "the ID token's claims cannot be read", err)
		return
	}
	email := strings.ToLower(claims.Email)
	at := strings.LastIndexByte(email, '@')
	switch {
	case !claims.Verified || at < 1 || len(email) > 320:
		c.refuseSSO(w, r, s, "the ID token has no verified e-mail address", nil)
		return
	case !slices.Contains(s.domains, email[at+1:]):
		c.log.LogAttrs(ctx, slog.LevelWarn, "console: single sign-on from another domain refused",
			slog.String("provider", s.Name), slog.String("domain", clip(email[at+1:], 64)))
		c.fail(w, r, http.StatusForbidden, fmt.Sprintf("%s is not an address of this account's domains.", clip(email, 320)))
		return
	}
	now := c.now()
	a, err := c.accounts.Account(ctx, s.Account)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	plan, _ := a.PlanAt(now)
	if !plan.Has(policy.FeatureSSO) {
		c.log.LogAttrs(ctx, slog.LevelInfo, "console: single sign-on refused by the plan",
			slog.String("account", a.ID), slog.String("plan", plan.Name))
		c.fail(w, r, http.StatusForbidden, featureRefusal(policy.FeatureSSO, plan, c.accounts.Plans()))
		return
	}
	if c.quotas != nil {
		// A console member is a seat of the plan, as a person who asks
		// for reviews is.
		_, err := c.accounts.UseQuota(ctx, c.quotas, ratelimit.QuotaRequest{Account: a.ID, User: email}, now)
		var qe *ratelimit.Error
		switch {
		case errors.As(err, &qe) && errors.Is(err, ratelimit.ErrQuotaExhausted):
			c.fail(w, r, http.StatusTooManyRequests, fmt.Sprintf("The %s plan's %d seats are all taken this month; they reset on %s.",
				title(plan.Name), qe.Max, day(ratelimit.NextMonth(now))))
			return
		case err != nil:
			c.serverError(w, r, err)
			return
		}
	}
	token, sess, err := c.accounts.StartSession(ctx, a.ID, email)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	c.log.LogAttrs(ctx, slog.LevelInfo, "console: signed in by single sign-on",
		slog.String("account", a.ID), slog.String("provider", s.Name))
	http.SetCookie(w, c.cookie(c.loginCookie, "", time.Time{}))
	http.SetCookie(w, c.cookie(c.sessionCookie, token, sess.Expires))
	// A page, not a redirect: the browser came here from the provider,
	// and a redirect would go on as that cross-site navigation, on
	// which the Strict session cookie is not sent.
	c.render(w, r, http.StatusOK, "signed-in.html", signedInPage{page: c.page("Signed in"), Member: email})
}

// providerDown answers a sign-in whose provider cannot be reached.
func (c *Console) providerDown(w http.ResponseWriter, r *http.Request, s *sso, err error) {
	c.log.LogAttrs(r.Context(), slog.LevelWarn, "console: the sign-in provider cannot be reached",
		slog.String("provider", s.Name), slog.Any("error", err))
	w.Header().Set("Retry-After", fmt.Sprint(unavailableRetryAfter))
	c.fail(w, r, http.StatusServiceUnavailable, s.Name+" cannot be reached right now; please try again in a moment.")
}

// refuseSSO answers a sign-in whose provider's answer does not hold.
func (c *Console) refuseSSO(w http.ResponseWriter, r *http.Request, s *sso, why string, err error) {
	attrs := []slog.Attr{slog.String("provider", s.Name), slog.String("reason", why)}
	if err != nil {
		attrs = append(attrs, slog.Any("error", err))
	}
	c.log.LogAttrs(r.Context(), slog.LevelWarn, "console: single sign-on refused", attrs...)
	c.fail(w, r, http.StatusUnauthorized, fmt.Sprintf("The sign-in through %s failed: %s. Please sign in again.", s.Name, why))
}

// featureRefusal says that plan lacks feature f, and which of plans
// (the cheapest first) has it.
func featureRefusal(f ratelimit.Feature, plan ratelimit.Plan, plans ratelimit.Plans) string {
	name := map[ratelimit.Feature]string{policy.FeatureSSO: "Single sign-on", policy.FeatureLLMObservability: "LLM observability",
		policy.FeatureAnalytics: "Analytics"}[f]
	if name == "" {
		name = strings.ReplaceAll(string(f), "_", " ")
	}
	msg := fmt.Sprintf("%s (%s) is not in the %s plan", name, f, title(plan.Name))
	for _, p := range plans {
		if p.Has(f) {
			return msg + fmt.Sprintf("; the %s plan has it.", title(p.Name))
		}
	}
	return msg + "."
}

// clip cuts s to n bytes at most, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
