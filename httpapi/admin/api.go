package admin

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/ratelimit"
)

// MinKeyLength is the length of the shortest Config.Key.
const MinKeyLength = 16

// UsageSource reports what an account used in a calendar month (UTC).
// Every ratelimit.Limiter implements it. It is called from the requests'
// goroutines, concurrently.
type UsageSource interface {
	// Usage returns the account's usage in the month of now.
	Usage(ctx context.Context, account string, now time.Time) (ratelimit.MonthUsage, error)
}

// Config configures an API. Key and Accounts are required; the zero
// value of every other field is useful.
type Config struct {
	// Key is the admin key, which every route takes as
	// "Authorization: Bearer <Key>": MinKeyLength characters at least (a
	// random one of 128 bits or more). It is no API key: give API.IsKey
	// to httpapi.Config.RefuseKey.
	Key string
	// Accounts keeps the accounts, keys, credits and plans the API
	// manages. Required; the caller owns it and its Store.
	Accounts *account.Accounts
	// Usage reports the month's usage for GET /v1/admin/usage: the
	// httpapi.Handler's Config.Limiter. Nil means that route answers 501
	// (code not_metered).
	Usage UsageSource
	// Logger receives one line per request and what the API changed (by
	// account and key id, never a secret) and server errors. Nil means
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock of purchases, plans and usage months. Nil means
	// time.Now.
	Now func() time.Time
	// MaxBodyBytes caps a request body, as httpapi.Config.MaxBodyBytes.
	// 0 means httpapi.DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyReadTimeout bounds the time a request body takes to arrive, as
	// httpapi.Config.BodyReadTimeout. 0 means
	// httpapi.DefaultBodyReadTimeout; a negative value means no bound.
	BodyReadTimeout time.Duration
	// Observe, when set, counts each answered request (see
	// httpapi.AccessLog.Observe): httpapi.Handler.CountRequest counts
	// them in the Handler's metrics.
	Observe func(route string, status int, id httpapi.Identity)
}

// API serves the admin API (see the package doc). Create it with New;
// the zero value is not usable. An API is safe for concurrent use. It
// starts no goroutine and has nothing to close.
type API struct {
	secret, want []byte // the key's HMAC under secret (see IsKey)
	accounts     *account.Accounts
	usage        UsageSource
	log          *slog.Logger
	now          func() time.Time
	limit        int64
	bodyTO       time.Duration
	logs         httpapi.AccessLog
	routes       *http.ServeMux // the routes, wrapped
	allow        *http.ServeMux // the routes' paths, for 405s
}

// route is one method+path pattern of the admin API and its handler.
type route struct {
	pattern string
	serve   func(*API, http.ResponseWriter, *http.Request)
}

// routes is the admin API's route table: the one list of its routes,
// which the package doc's list is checked against.
var routes = []route{
	{"POST /v1/admin/accounts", (*API).createAccount},
	{"GET /v1/admin/accounts", (*API).listAccounts},
	{"GET /v1/admin/accounts/{id}", (*API).getAccount},
	{"POST /v1/admin/accounts/{id}/tier", (*API).setTier},
	{"POST /v1/admin/accounts/{id}/plan", (*API).setPlan},
	{"POST /v1/admin/api-keys", (*API).createKey},
	{"GET /v1/admin/api-keys", (*API).listKeys},
	{"DELETE /v1/admin/api-keys/{id}", (*API).revokeKey},
	{"POST /v1/admin/credits", (*API).addCredits},
	{"GET /v1/admin/usage", (*API).monthUsage},
}

// New validates cfg and returns an API.
func New(cfg Config) (*API, error) {
	switch {
	case cfg.Accounts == nil:
		return nil, errors.New("admin: Config.Accounts is nil: the accounts the admin API manages")
	case len(cfg.Key) < MinKeyLength:
		return nil, fmt.Errorf("admin: Config.Key is shorter than %d characters", MinKeyLength)
	case cfg.MaxBodyBytes < 0:
		return nil, fmt.Errorf("admin: Config.MaxBodyBytes is %d", cfg.MaxBodyBytes)
	}
	api := &API{secret: make([]byte, 32), accounts: cfg.Accounts, usage: cfg.Usage, log: cfg.Logger, now: cfg.Now,
		limit: cfg.MaxBodyBytes, bodyTO: cfg.BodyReadTimeout}
	rand.Read(api.secret) // never fails (crypto/rand)
	api.want = api.sum(cfg.Key)
	if api.log == nil {
		api.log = slog.Default()
	}
	if api.now == nil {
		api.now = time.Now
	}
	if api.limit == 0 {
		api.limit = httpapi.DefaultMaxBodyBytes
	}
	if api.bodyTO == 0 {
		api.bodyTO = httpapi.DefaultBodyReadTimeout
	}
	api.logs = httpapi.AccessLog{Logger: api.log, Level: slog.LevelInfo, Now: api.now, Observe: cfg.Observe}
	api.routes = http.NewServeMux()
	api.Register(api.routes)
	patterns := make([]string, len(routes))
	for i, rt := range routes {
		patterns[i] = rt.pattern
	}
	api.allow = httpapi.Allowed(patterns)
	return api, nil
}

// sum is key's HMAC under the API's secret.
func (api *API) sum(key string) []byte {
	m := hmac.New(sha256.New, api.secret)
	m.Write([]byte(key))
	return m.Sum(nil)
}

// IsKey reports whether key is the admin key. Both sides are HMACs under
// a random secret of the process, compared with hmac.Equal, so that
// neither the comparison's time nor a digest says anything of the key.
func (api *API) IsKey(key string) bool { return hmac.Equal(api.sum(key), api.want) }

// Register registers the admin API's routes on mux. Like mux.Handle, it
// panics if a pattern conflicts with one already registered.
func (api *API) Register(mux *http.ServeMux) {
	for _, rt := range routes {
		mux.Handle(rt.pattern, api.wrap(rt))
	}
}

// Mount returns a handler that serves the admin API's routes, answers a
// request to one of their paths with a method none takes with a JSON 405
// (with Allow), and hands every other request to next, unclean paths
// included (such as //v1/admin/accounts, which a ServeMux would
// redirect): mount it in front of an httpapi.Handler, as in
// api.Mount(handler), for JSON errors on every path.
func (api *API) Mount(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.EscapedPath(); p != "" && p[0] == '/' && path.Clean(p) == p {
			if _, pattern := api.routes.Handler(r); pattern != "" {
				api.routes.ServeHTTP(w, r)
				return
			}
			if hd, pattern := api.allow.Handler(r); pattern != "" {
				httpapi.SkipBody(w, r)
				hd.ServeHTTP(w, r)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// wrap puts an admin route behind the access log, the body read
// deadline, the admin key's check and the body limit, in the chat
// style's error shape: no API key, no rate limit, no middleware of the
// API's.
func (api *API) wrap(rt route) http.Handler {
	serve := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rt.serve(api, w, r) })
	return httpapi.ErrorStyle(formats.StyleChat)(api.logs.Stage(rt.pattern)(httpapi.BodyDeadline(api.bodyTO)(
		api.authenticate(httpapi.LimitBody(api.limit)(serve)))))
}

// authenticate refuses a request without the admin key as a bearer with
// a 401 in OpenAI's shape, without reading its body.
func (api *API) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := ""
		if scheme, k, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
			key = strings.TrimSpace(k)
		}
		if key == "" || !api.IsKey(key) {
			api.log.LogAttrs(r.Context(), slog.LevelInfo, "admin: missing or invalid admin key", slog.String("path", r.URL.Path))
			httpapi.SkipBody(w, r)
			httpapi.WriteError(w, r, formats.Unauthorized())
			return
		}
		next.ServeHTTP(w, r)
	})
}

// fail writes err as the route's error response, and logs it
// (httpapi.Fail).
func (api *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	httpapi.Fail(w, r, api.log, err)
}

// writeJSON writes v as a JSON body with status, or fails.
func (api *API) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	if err := httpapi.WriteJSON(w, status, v); err != nil {
		api.fail(w, r, err)
	}
}
