package console_test

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/console"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
)

// errNoGeneration is what the fake engine answers to everything but
// Models.
var errNoGeneration = errors.New("fake engine: generates nothing")

// fakeEngine serves one model's description and no generation: enough
// for GET /v1/models, which is all these tests call.
type fakeEngine struct{}

func (fakeEngine) Models() []inference.ModelInfo {
	return []inference.ModelInfo{{ID: "tiny", Path: "/models/tiny.gguf", ContextLength: 512}}
}

func (fakeEngine) Prepare(context.Context, inference.Request) (*inference.Prepared, error) {
	return nil, errNoGeneration
}

func (fakeEngine) Run(context.Context, *inference.Prepared) iter.Seq2[inference.Event, error] {
	return func(yield func(inference.Event, error) bool) { yield(inference.Event{}, errNoGeneration) }
}

func (fakeEngine) CountTokens(inference.Request) (int, error) { return 0, errNoGeneration }

// mountAPI registers an httpapi.Handler, whose keys are accounts' API
// keys (httpapi.Config.Accounts), on mux beside the console.
func mountAPI(t *testing.T, mux *http.ServeMux, accounts *account.Accounts, log *slog.Logger) {
	t.Helper()
	h, err := httpapi.New(httpapi.Config{Engine: fakeEngine{}, Accounts: accounts, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	h.Register(mux)
}

// TestConsoleCookieIsNoAPICredential: a request to the API that carries
// only the console's session cookie (and even its CSRF token) is 401;
// the key the console made is 200.
func TestConsoleCookieIsNoAPICredential(t *testing.T) {
	f := newFixture(t, console.Config{})
	mountAPI(t, f.mux, f.accounts, slog.New(slog.NewTextHandler(f.log, nil)))
	a := f.agent()
	token := a.login()
	secret := a.createKey(token, "api")

	models := func(r *http.Request) int {
		w := httptest.NewRecorder()
		f.mux.ServeHTTP(w, r)
		return w.Code
	}
	for _, tc := range []struct {
		name   string
		header http.Header
		want   int
	}{
		{"session cookie", http.Header{"Cookie": {"__Host-console_session=" + a.sessionToken()}}, http.StatusUnauthorized},
		{"session cookie and CSRF token", http.Header{
			"Cookie": {"__Host-console_session=" + a.sessionToken()}, "X-Csrf-Token": {token}}, http.StatusUnauthorized},
		{"session token as a bearer key", http.Header{"Authorization": {"Bearer " + a.sessionToken()}}, http.StatusUnauthorized},
		{"the key", http.Header{"Authorization": {"Bearer " + secret}}, http.StatusOK},
		{"the key in x-api-key", http.Header{"X-Api-Key": {secret}}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "https://console.example/v1/models", nil)
			r.Header = tc.header
			if got := models(r); got != tc.want {
				t.Errorf("GET /v1/models: %d, want %d", got, tc.want)
			}
		})
	}
	// Nor is the cookie a credential for the API's POSTs.
	r := httptest.NewRequest(http.MethodPost, "https://console.example/v1/chat/completions", nil)
	r.Header.Set("Cookie", "__Host-console_session="+url.QueryEscape(a.sessionToken()))
	if got := models(r); got != http.StatusUnauthorized {
		t.Errorf("POST /v1/chat/completions with the cookie: %d, want 401", got)
	}
}
