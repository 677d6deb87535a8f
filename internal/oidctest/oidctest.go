// Package oidctest is an OpenID Connect provider for tests, on a local
// httptest server: its discovery document, an authorization endpoint
// that signs in the person the test chose at once (no form), a token
// endpoint for the authorization-code flow with PKCE (S256) that checks
// the client's secret, the redirect URI and the code verifier, and the
// JSON Web Key Set its RS256 ID tokens are signed with.
//
// It implements what a relying party meets in a real provider's
// authorization-code flow, with no user interface, consent, refresh
// tokens or dynamic registration.
package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Person is who the provider signs in.
type Person struct {
	// Subject is the person's stable id at the provider; "" derives one
	// from Email.
	Subject string
	Email   string
	// Unverified marks the e-mail address as not verified
	// (email_verified false).
	Unverified bool
}

// Provider is a running provider. Its fields are set by New; change
// Claims before a sign-in to tamper with the ID tokens it issues. It is
// safe for concurrent use; the test's Cleanup closes it.
type Provider struct {
	// URL is the issuer: its discovery document is at
	// URL/.well-known/openid-configuration.
	URL                    string
	ClientID, ClientSecret string
	// RedirectURIs are the client's registered redirect URIs: an
	// authorization to any other is refused.
	RedirectURIs []string

	key *rsa.PrivateKey
	mu  sync.Mutex
	// person is who the next authorization signs in; nil refuses it
	// (error=access_denied).
	person *Person
	codes  map[string]grant
	claims func(map[string]any)
	issued int
}

// grant is an authorization code's request.
type grant struct {
	redirect, challenge, nonce string
	person                     Person
	expires                    time.Time
}

// New starts a provider for one client, whose redirect URIs are those
// given; it signs in nobody until SignIn.
func New(t testing.TB, clientID, clientSecret string, redirectURIs ...string) *Provider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{ClientID: clientID, ClientSecret: clientSecret, RedirectURIs: redirectURIs, key: key, codes: map[string]grant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	mux.HandleFunc("GET /keys", p.keys)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// SignIn makes the provider sign in person at the next authorizations;
// nil makes it refuse them, as when a person declines.
func (p *Provider) SignIn(person *Person) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.person = person
}

// Tamper makes the provider pass the claims of each ID token it issues
// through f before signing them: a test's way to issue a token for
// another audience, with another nonce, or expired.
func (p *Provider) Tamper(f func(claims map[string]any)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claims = f
}

// Issued returns the number of ID tokens issued so far.
func (p *Provider) Issued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.issued
}

func (p *Provider) discovery(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                p.URL,
		"authorization_endpoint":                p.URL + "/authorize",
		"token_endpoint":                        p.URL + "/token",
		"jwks_uri":                              p.URL + "/keys",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"scopes_supported":                      []string{"openid", "email"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		"code_challenge_methods_supported":      []string{"S256"},
		"claims_supported":                      []string{"sub", "iss", "aud", "exp", "iat", "nonce", "email", "email_verified"},
	})
}

// authorize checks an authorization request and redirects back with a
// code for the person signed in, or an error.
func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect := q.Get("redirect_uri")
	if q.Get("client_id") != p.ClientID || !slices.Contains(p.RedirectURIs, redirect) {
		// Never redirect to an unregistered URI.
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(redirect)
	reply := back.Query()
	reply.Set("state", q.Get("state"))
	fail := func(code string) {
		reply.Set("error", code)
		back.RawQuery = reply.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	}
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type")
		return
	case !slices.Contains(strings.Fields(q.Get("scope")), "openid"):
		fail("invalid_scope")
		return
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		fail("invalid_request")
		return
	}
	p.mu.Lock()
	person := p.person
	var code string
	if person != nil {
		code = rand.Text()
		p.codes[code] = grant{redirect: redirect, challenge: q.Get("code_challenge"), nonce: q.Get("nonce"), person: *person, expires: time.Now().Add(time.Minute)}
	}
	p.mu.Unlock()
	if person == nil {
		fail("access_denied")
		return
	}
	reply.Set("code", code)
	back.RawQuery = reply.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token exchanges a code, once, for an ID token.
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != p.ClientID || subtle.ConstantTimeCompare([]byte(secret), []byte(p.ClientSecret)) != 1 {
		tokenError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	if r.PostForm.Get("grant_type") != "authorization_code" {
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	p.mu.Lock()
	code := r.PostForm.Get("code")
	g, ok := p.codes[code]
	delete(p.codes, code) // a code works once
	tamper := p.claims
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	if !ok || time.Now().After(g.expires) || g.redirect != r.PostForm.Get("redirect_uri") ||
		base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		tokenError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	now := time.Now()
	claims := map[string]any{
		"iss": p.URL, "sub": g.person.Subject, "aud": p.ClientID, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"email": g.person.Email, "email_verified": !g.person.Unverified,
	}
	if claims["sub"] == "" {
		claims["sub"] = "sub-" + g.person.Email
	}
	if g.nonce != "" {
		claims["nonce"] = g.nonce
	}
	if tamper != nil {
		tamper(claims)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: p.key, KeyID: "k1"}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		tokenError(w, http.StatusInternalServerError, "server_error")
		return
	}
	raw, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		tokenError(w, http.StatusInternalServerError, "server_error")
		return
	}
	p.mu.Lock()
	p.issued++
	p.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"access_token": rand.Text(), "token_type": "Bearer", "expires_in": 300, "id_token": raw})
}

func (p *Provider) keys(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
}

func tokenError(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]string{"error": code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
