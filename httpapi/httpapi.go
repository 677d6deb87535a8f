package httpapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/cache"
	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/ratelimit"
	"go.opentelemetry.io/otel/trace"
)

// DefaultMaxBodyBytes is the request body limit when Config.MaxBodyBytes
// is 0: 4 MiB.
const DefaultMaxBodyBytes = 4 << 20

// DefaultBodyReadTimeout is the time a request body has to arrive when
// Config.BodyReadTimeout is 0: 30 seconds.
const DefaultBodyReadTimeout = 30 * time.Second

// Engine is what a Handler needs of an inference engine.
// [*inference.Engine] implements it; tests use a fake. Its methods are
// called concurrently.
//
// Every generation request follows one path: the wire format is parsed
// and checked (package formats), the engine prepares the request once
// (Prepare: every field checked, the prompt rendered and tokenized), the
// rate limits admit it on the prepared counts, and Run decodes the
// prepared tokens.
type Engine interface {
	// Prepare checks req and renders and tokenizes its prompt, decoding
	// nothing: its counts are what rate limits reserve and what the
	// messages stream's message_start reports. It stops waiting (for a
	// model that loads again, say) when ctx is done.
	Prepare(ctx context.Context, req inference.Request) (*inference.Prepared, error)
	// Run runs a prepared request and yields its output: pieces, then
	// one event with Final set; an error, if any, is the last pair.
	// Stopping the iteration early or cancelling ctx ends the generation.
	Run(ctx context.Context, p *inference.Prepared) iter.Seq2[inference.Event, error]
	// Models describes the models the engine serves.
	Models() []inference.ModelInfo
	// CountTokens returns the number of tokens of req's prompt: how
	// rate limits count what a generation cut short had written.
	CountTokens(req inference.Request) (int, error)
}

// Config configures a Handler. Engine is required, and one of Keys and
// Accounts; the zero value of every other field is useful.
type Config struct {
	// Engine runs the models. Required.
	Engine Engine
	// Models is the catalog: the entries whose ids and aliases requests
	// may name and that GET /v1/models lists. Every chat and embedding
	// entry must be served by Engine, an embedding entry by an embedding
	// model of an Engine that implements Embedder. Nil means one bare
	// entry (id, aliases, path) per model of Engine, of kind embedding
	// for its embedding models and chat for the rest.
	Models []catalog.Model
	// Keys authenticates the bearer key of every request: see
	// NewStaticKeys. Required unless Accounts is set, and refused with
	// it: a Handler has one source of keys.
	Keys KeyStore
	// Accounts, when set, authenticates the bearer key of every request
	// instead of Keys: an Identity's KeyID is the account key's id, its
	// Account the account's id and its Tier the account's tier
	// (account.Account.Tier), as stored when the request arrives, so
	// that a revoked key is refused and a purchase that unlocks a tier
	// counts from the next request on. Keys given in configuration are
	// account.Config.StaticKeys. A store that cannot answer is a 500. The
	// caller owns it, and closes its Store after shutting the HTTP
	// server down.
	Accounts *account.Accounts
	// RefuseKey, when set, reports keys that are no API keys, whatever
	// Keys or Accounts hold: such a key is refused with a 401, as a
	// missing one. A host that serves the admin API (package
	// httpapi/admin) beside the Handler gives its admin.API.IsKey, so
	// that the admin key is never an API key. It is called from the
	// requests' goroutines, concurrently.
	RefuseKey func(key string) bool
	// MaxBodyBytes caps a request body; a larger one is refused with 413.
	// 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyReadTimeout bounds the time a request body takes to arrive,
	// from the moment a route starts serving the request: a body still
	// incomplete then is answered 408 (code request_timeout) and its
	// connection closed. It is a read deadline on the connection, set
	// through http.ResponseController and lifted once the body has been
	// read, so that it never cuts a long stream; it runs on the wall
	// clock, not on Now. The http.Server's ReadHeaderTimeout and
	// IdleTimeout bound the rest of a connection's reads; its ReadTimeout
	// and WriteTimeout, which would cut long bodies and long streams, are
	// best left unset. 0 means DefaultBodyReadTimeout; a negative value
	// means no bound.
	BodyReadTimeout time.Duration
	// Logger receives one line per request (method, path, status,
	// duration, key id, never the key) and server errors. Nil means
	// slog.Default().
	Logger *slog.Logger
	// Store keeps responses for GET and DELETE /v1/responses/{id} and
	// previous_response_id, under the KeyID of the key that made them.
	// The caller owns it and closes it, if it needs closing, after
	// shutting the HTTP server down. Nil means a cache.MemoryStore with
	// its defaults and the clock Now, whose contents are lost with the
	// process; cache.OpenBolt keeps them in a file.
	Store cache.Store
	// Now is the clock of created timestamps (and of the default Store).
	// Nil means time.Now.
	Now func() time.Time
	// Limiter enforces per-key rate limits, monthly spend caps and their
	// headers on every route (see ratelimit.go), at the Tier of each
	// key's Identity. Nil means no limits and no rate-limit headers; the
	// caller owns it. ratelimit.NewMemory is exact within one process,
	// redislimit shares the limits of several replicas. Under prepaid
	// billing of Accounts it is required, and the Handler draws each
	// request's cost from its account's balance through it (see
	// account.Accounts.Limiter).
	Limiter ratelimit.Limiter
	// RemoteImages lets requests name images by http or https URL, which
	// the Handler fetches within its bounds. Nil refuses image URLs with
	// a 400 that asks for a data: URL.
	RemoteImages *RemoteImages
	// Middleware wraps every route, the first outermost, inside the
	// authentication and the body limit: IdentityFrom(r.Context()) holds
	// the caller's key, and WriteError writes the route's error shape. A
	// place for rate limits.
	Middleware []func(http.Handler) http.Handler
	// Metrics, when set, receives the Handler's metrics (see
	// metricsNamespace in metrics.go for the list), registered once in
	// New as one collector, and GET /metrics serves everything it
	// gathers, in the Prometheus text format (see RegisterOperations).
	// Nil means no metrics and no /metrics route. Give each Handler a
	// registry of its own (prometheus.NewRegistry, never the package's
	// default registry): New fails on a registry that already holds a
	// Handler's metrics. The caller may register other collectors on it,
	// such as the Go runtime's, for /metrics to serve as well. The queue
	// depth and sequence gauges need an Engine with a method
	// Stats() []inference.ModelStats, as *inference.Engine has; without
	// one they are absent.
	Metrics *prometheus.Registry
	// BackgroundJobs bounds the background responses (background true)
	// that run at once on the Handler, of every key together; a request
	// past it is refused with 429. The events of as many ended ones are
	// kept, for 5 minutes, for streams that resume them. 0 means
	// DefaultBackgroundJobs. See background.go.
	BackgroundJobs int
	// BackgroundJobsPerAccount bounds the background responses of one
	// account (of one key, for keys without accounts) that run at once on
	// the Handler; past it a request is refused with 429. 0 means
	// DefaultBackgroundJobsPerAccount.
	BackgroundJobsPerAccount int
	// BackgroundLease is how long the record of a running background
	// response stays the Handler's without being renewed, on Now: the
	// Handler renews it, with the output so far, every third of it (on
	// the wall clock), and a Handler that finds it lapsed stores the
	// response as failed. 0 means DefaultBackgroundLease; it may not be
	// less than 30 ms.
	BackgroundLease time.Duration
	// MCPAllow are the URL prefixes of the MCP servers that requests may
	// name (responses' mcp tools, messages' mcp_servers), such as
	// "https://mcp.example.com/": a server whose URL starts with none of
	// them is refused with a 400 naming it, before any connection. The
	// engine then connects to them on the requests' behalf: list only
	// servers you trust with the requests' traffic. Nil refuses every
	// MCP server.
	MCPAllow []string
	// TracerProvider, when set, receives a server span for every request
	// of a route, named for the route ("POST /v1/chat/completions"),
	// with OpenTelemetry's HTTP attributes and the caller's key id,
	// continuing the trace of the request's W3C traceparent header; below
	// it, the rate limiter's admission (inferkit.admission). Give the
	// engine the same provider (inference.Config.TracerProvider) for its
	// spans to follow below, down to the decode. Nil means no spans, at
	// no cost.
	TracerProvider trace.TracerProvider
	// Ready reports whether the Handler can serve generations, for GET
	// /readyz: nil when it can, else why not (answered 503). A host that
	// loads its models in the background, or that drains before it shuts
	// down, says so here. Nil means always ready: an *inference.Engine
	// has loaded every model by the time New returns it. It is called
	// from the requests' goroutines, concurrently.
	Ready func() error
}

// Handler serves the Inference API. Create it with New; the zero value is
// not usable. A Handler is safe for concurrent use. It starts goroutines
// only for background responses, which Close ends: call it after
// shutting the HTTP server down. The caller owns the Engine and the
// Store, and closes them after that.
type Handler struct {
	engine Engine
	models []catalog.Model
	keys   KeyStore
	limit  int64
	bodyTO time.Duration
	log    *slog.Logger
	store  cache.Store
	now    func() time.Time
	mw     []func(http.Handler) http.Handler
	limits ratelimit.Limiter
	opts   formats.Options
	mux    *http.ServeMux // the routes, then unrouted for every other path
	allow  *http.ServeMux // the routes' paths, for unrouted's 405s
	other  http.Handler   // unrouted, logged
	images *imageFetcher  // nil: image URLs are refused
	// evaluators holds a *decision.Evaluator per decision model id, made
	// on its first request: it keeps the model's labels, and bounds its
	// video decoding.
	evaluators sync.Map

	// jobs are the background responses, lease their records' lease
	// (Config.BackgroundLease) and instance the Handler's name in them.
	jobs     *jobs
	lease    time.Duration
	instance string

	ready func() error // Config.Ready
	// tracer makes the Handler's spans (trace.go); nil without
	// Config.TracerProvider.
	tracer trace.Tracer
	// mcpAllow is Config.MCPAllow.
	mcpAllow []string
	// accounts is Config.Accounts; nil without them.
	accounts *account.Accounts
	// logs is the access log of the routes, and auth their
	// authentication (Authenticate of keys).
	logs AccessLog
	auth func(http.Handler) http.Handler
	// registry is Config.Metrics, and metrics the collector registered on
	// it; both nil without metrics.
	registry *prometheus.Registry
	metrics  *metrics
}

// route is one method+path pattern, the error style of its responses,
// its handler, and how rate limits count its requests.
type route struct {
	pattern string
	style   formats.Style
	serve   http.HandlerFunc
	meter   metering
}

// New validates cfg and returns a Handler serving its routes.
func New(cfg Config) (*Handler, error) {
	if cfg.Engine == nil {
		return nil, errors.New("httpapi: Config.Engine is nil")
	}
	switch {
	case cfg.Keys == nil && cfg.Accounts == nil:
		return nil, errors.New("httpapi: Config.Keys and Config.Accounts are nil: give one")
	case cfg.Keys != nil && cfg.Accounts != nil:
		return nil, errors.New("httpapi: Config.Keys and Config.Accounts are both set: give one (configured keys of accounts are account.Config.StaticKeys)")
	}
	if cfg.BackgroundJobs < 0 || cfg.BackgroundJobsPerAccount < 0 {
		return nil, fmt.Errorf("httpapi: Config.BackgroundJobs (%d) or BackgroundJobsPerAccount (%d) is negative",
			cfg.BackgroundJobs, cfg.BackgroundJobsPerAccount)
	}
	if cfg.BackgroundLease != 0 && cfg.BackgroundLease < minBackgroundLease {
		return nil, fmt.Errorf("httpapi: Config.BackgroundLease is %s, less than %s", cfg.BackgroundLease, minBackgroundLease)
	}
	if cfg.MaxBodyBytes < 0 {
		return nil, fmt.Errorf("httpapi: Config.MaxBodyBytes is %d", cfg.MaxBodyBytes)
	}
	for i, m := range cfg.Middleware {
		if m == nil {
			return nil, fmt.Errorf("httpapi: Config.Middleware[%d] is nil", i)
		}
	}
	h := &Handler{
		engine: cfg.Engine, keys: cfg.Keys, limit: cfg.MaxBodyBytes, bodyTO: cfg.BodyReadTimeout, log: cfg.Logger,
		store: cfg.Store, now: cfg.Now, mw: slices.Clone(cfg.Middleware),
		limits: cfg.Limiter, ready: cfg.Ready, registry: cfg.Metrics, accounts: cfg.Accounts,
	}
	if cfg.TracerProvider != nil {
		h.tracer = cfg.TracerProvider.Tracer(tracerName)
	}
	for i, prefix := range cfg.MCPAllow {
		if u, err := url.Parse(prefix); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("httpapi: Config.MCPAllow[%d] %q is not an http or https URL prefix", i, prefix)
		}
	}
	h.mcpAllow = slices.Clone(cfg.MCPAllow)
	if cfg.Accounts != nil {
		h.keys = accountKeys{cfg.Accounts}
		if err := h.prepaid(cfg.Accounts); err != nil {
			return nil, err
		}
	}
	if h.limit == 0 {
		h.limit = DefaultMaxBodyBytes
	}
	h.jobs = &jobs{max: cmp.Or(cfg.BackgroundJobs, DefaultBackgroundJobs), perAccount: cmp.Or(cfg.BackgroundJobsPerAccount, DefaultBackgroundJobsPerAccount),
		running: map[string]*job{}, accounts: map[string]int{}}
	h.lease, h.instance = cmp.Or(cfg.BackgroundLease, DefaultBackgroundLease), newInstance()
	if h.bodyTO == 0 {
		h.bodyTO = DefaultBodyReadTimeout
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.now == nil {
		h.now = time.Now
	}
	infos := cfg.Engine.Models()
	h.models = slices.Clone(cfg.Models)
	if h.models == nil {
		for _, info := range infos {
			m := catalog.Model{ID: info.ID, Aliases: info.Aliases, Path: info.Path}
			switch {
			case info.Embedding:
				m.Kind = catalog.KindEmbedding
			case info.Encoder:
				m.Kind = catalog.KindRerank
			}
			h.models = append(h.models, m)
		}
	}
	if err := catalog.Validate(h.models); err != nil {
		return nil, fmt.Errorf("httpapi: %w", err)
	}
	fileTimes(h.models)
	if err := h.checkPrices(); err != nil {
		return nil, err
	}
	for _, m := range h.models {
		if isChat(m) {
			if _, ok := served(infos, m.ID); !ok {
				return nil, fmt.Errorf("httpapi: catalog model %q is not served by the engine", m.ID)
			}
		}
	}
	if err := h.checkEmbeddingModels(infos); err != nil {
		return nil, err
	}
	if err := h.checkRerankModels(infos); err != nil {
		return nil, err
	}
	if h.store == nil {
		s, err := cache.NewMemoryStore(cache.MemoryConfig{Now: h.now})
		if err != nil {
			return nil, err
		}
		h.store = s
	}
	if cfg.RemoteImages != nil {
		f, err := newImageFetcher(*cfg.RemoteImages)
		if err != nil {
			return nil, err
		}
		h.images = f
	}
	if h.registry != nil {
		h.metrics = newMetrics(h.engine, h.models)
		if err := h.registry.Register(h.metrics); err != nil {
			return nil, fmt.Errorf("httpapi: Config.Metrics: %w", err)
		}
	}
	h.opts = formats.Options{Now: h.now}
	h.logs = AccessLog{Logger: h.log, Level: slog.LevelInfo, Now: h.now, Observe: h.metrics.request}
	h.auth = Authenticate(h.keys, h.log, cfg.RefuseKey)
	h.mux = http.NewServeMux()
	h.Register(h.mux)
	h.RegisterOperations(h.mux)
	h.registerPaths()
	h.other = chain(http.HandlerFunc(h.unrouted), h.logs.Stage("unrouted"), BodyDeadline(h.bodyTO))
	h.mux.Handle("/", h.other)
	return h, nil
}

// generationRoutes are the routes of the spec's base_url.
func (h *Handler) generationRoutes() []route {
	return []route{
		{"POST /v1/web/chat/completions", formats.StyleChat, h.chat, meterTokens},
		{"POST /v1/chat/completions", formats.StyleChat, h.chat, meterTokens},
		{"POST /v1/completions", formats.StyleChat, h.completions, meterTokens},
		{"POST /v1/messages", formats.StyleMessages, h.messages, meterTokens},
		{"POST /v1/messages/count_tokens", formats.StyleMessages, h.countTokens, meterRequest},
		{"POST /v1/responses", formats.StyleResponses, h.responses, meterTokens},
		{"GET /v1/responses/{id}", formats.StyleResponses, h.getResponse, meterRequest},
		{"DELETE /v1/responses/{id}", formats.StyleResponses, h.deleteResponse, meterRequest},
		{"POST /v1/responses/{id}/cancel", formats.StyleResponses, h.cancelResponse, meterRequest},
		{"POST /v1/embeddings", formats.StyleChat, h.embeddings, meterTokens},
		{"POST /v1/rerank", formats.StyleChat, h.rerank, meterTokens},
	}
}

// modelRoutes are the routes of the spec's api_url.
func (h *Handler) modelRoutes() []route {
	return []route{
		{"GET /v1/models", formats.StyleModels, h.listModels, meterRequest},
		{"GET /v1/models/{model_id}", formats.StyleModels, h.getModel, meterRequest},
	}
}

// Register registers every route of the API on mux: RegisterGeneration,
// RegisterModels and RegisterDecisions. Like mux.Handle, it panics if a
// pattern conflicts with one already registered. The operators' routes
// (GET /healthz, GET /readyz, GET /metrics) are not among them, so that
// a host keeps its own: RegisterOperations adds them.
//
// Requests that match none of the routes are mux's to answer: a
// ServeMux answers an unknown path with a plain-text 404, a known path
// with another method with a plain-text 405, and redirects an unclean
// path (such as //v1/models) to its clean form. The Handler itself
// answers all of them with JSON errors (see ServeHTTP): mount it, as in
// mux.Handle("/", h) or mux.Handle("/v1/", h), instead of or besides
// Register, for JSON errors on every path mux hands it.
func (h *Handler) Register(mux *http.ServeMux) {
	h.RegisterGeneration(mux)
	h.RegisterModels(mux)
	h.RegisterDecisions(mux)
}

// RegisterGeneration registers the generation routes of the spec's
// base_url on mux (generationRoutes; the package doc lists them).
func (h *Handler) RegisterGeneration(mux *http.ServeMux) { h.register(mux, h.generationRoutes()) }

// RegisterModels registers the catalog routes of the spec's api_url on
// mux: GET /v1/models and GET /v1/models/{model_id}.
func (h *Handler) RegisterModels(mux *http.ServeMux) { h.register(mux, h.modelRoutes()) }

func (h *Handler) register(mux *http.ServeMux, routes []route) {
	for _, rt := range routes {
		mux.Handle(rt.pattern, h.wrap(rt))
	}
}

// ServeHTTP serves every route, with the API's paths starting at /v1,
// and the operators' routes of RegisterOperations (/healthz, /readyz,
// /metrics): mount it under a prefix with http.StripPrefix. A caller's
// mux that routes those paths elsewhere keeps them. It answers every
// other request
// with a JSON error in the shape of the path's style (messages for
// paths under /v1/messages, System One's under /v1/systemone, chat for
// the rest), without authenticating
// it or reading its body: 405, with an Allow header, for a method that
// a route's path does not take, and 404 for any other path, unclean
// ones included (such as //v1/models, /v1/./models or /v1/models/),
// which are neither redirected nor served.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect && !isClean(r.URL.EscapedPath()) {
		h.other.ServeHTTP(w, r) // where a ServeMux would redirect
		return
	}
	h.mux.ServeHTTP(w, r)
}

// isClean reports whether p is a path that a ServeMux serves without
// redirecting: rooted, without empty, "." or ".." segments, a trailing
// slash aside.
func isClean(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	return c == p || c+"/" == p
}

// registerPaths registers on h.allow the path of every route (see
// Allowed).
func (h *Handler) registerPaths() {
	var patterns []string
	for _, rt := range slices.Concat(h.generationRoutes(), h.modelRoutes(), h.decisionRoutes(), h.operationRoutes()) {
		patterns = append(patterns, rt.pattern)
	}
	h.allow = Allowed(patterns)
}

// Allowed returns a ServeMux that has the path of each of patterns
// (method and path, as a ServeMux's) and answers a request to one of
// them with a 405 in the error shape of the path's style (messages
// under /v1/messages, System One's under /v1/systemone, chat
// elsewhere), naming the methods that the path's patterns take (HEAD
// with GET, as a ServeMux serves it), in an Allow header too. Its
// Handler method tells whether a request's path is one of them: a host
// answers with it the requests whose method no route of the path takes.
func Allowed(patterns []string) *http.ServeMux {
	allow := http.NewServeMux()
	methods := map[string][]string{}
	var paths []string
	for _, pattern := range patterns {
		method, p, _ := strings.Cut(pattern, " ")
		if methods[p] == nil {
			paths = append(paths, p)
		}
		methods[p] = append(methods[p], method)
		if method == http.MethodGet {
			methods[p] = append(methods[p], http.MethodHead) // as a ServeMux serves it
		}
	}
	for _, p := range paths {
		slices.Sort(methods[p])
		allowed := strings.Join(methods[p], ", ")
		allow.Handle(p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allowed)
			formats.WriteError(w, pathStyle(r.URL.Path), &formats.Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
				Message: fmt.Sprintf("%s is not allowed on %s; allowed: %s", r.Method, Clip(r.URL.Path), allowed)})
		}))
	}
	return allow
}

// unrouted answers a request that no route serves: 405 when its path is
// a route's, else 404; it neither authenticates nor reads the body.
func (h *Handler) unrouted(w http.ResponseWriter, r *http.Request) {
	SkipBody(w, r)
	if isClean(r.URL.EscapedPath()) {
		if hd, pattern := h.allow.Handler(r); pattern != "" {
			hd.ServeHTTP(w, r)
			return
		}
	}
	formats.WriteError(w, pathStyle(r.URL.Path), &formats.Error{Status: http.StatusNotFound, Code: "not_found",
		Message: fmt.Sprintf("no route for %s %s", r.Method, Clip(r.URL.Path))})
}

// pathStyle is the error style of requests to path that no route
// serves: messages under /v1/messages, System One's under /v1/systemone,
// chat elsewhere.
func pathStyle(path string) formats.Style {
	switch {
	case path == "/v1/messages" || strings.HasPrefix(path, "/v1/messages/"):
		return formats.StyleMessages
	case path == "/v1/systemone" || strings.HasPrefix(path, "/v1/systemone/"):
		return formats.StyleSystemOne
	}
	return formats.StyleChat
}

// wrap puts a route's handler behind the access log, the body read
// deadline, authentication, the body limit and the configured
// middleware.
func (h *Handler) wrap(rt route) http.Handler {
	next := chain(rt.serve, h.mw...)
	next = h.rateLimit(rt, next)
	next = chain(next, ErrorStyle(rt.style), h.logs.Stage(rt.pattern), BodyDeadline(h.bodyTO), h.auth, LimitBody(h.limit))
	if stage := h.traceStage(rt.pattern); stage != nil {
		next = stage(next)
	}
	return next
}

// chain puts next behind stages, the first outermost.
func chain(next http.Handler, stages ...func(http.Handler) http.Handler) http.Handler {
	for i := len(stages) - 1; i >= 0; i-- {
		next = stages[i](next)
	}
	return next
}

// isChat reports whether m is a chat model.
func isChat(m catalog.Model) bool { return m.Kind == "" || m.Kind == catalog.KindChat }

// served returns the engine's description of the model named name.
func served(infos []inference.ModelInfo, name string) (inference.ModelInfo, bool) {
	for _, info := range infos {
		if info.ID == name || slices.Contains(info.Aliases, name) {
			return info, true
		}
	}
	return inference.ModelInfo{}, false
}

// chatModel returns the catalog entry and the engine's description of the
// chat model named name (an id or an alias).
func (h *Handler) chatModel(name string) (catalog.Model, inference.ModelInfo, bool) {
	m, ok := catalog.Lookup(h.models, name)
	if !ok || !isChat(m) {
		return catalog.Model{}, inference.ModelInfo{}, false
	}
	info, ok := served(h.engine.Models(), m.ID)
	return m, info, ok
}
