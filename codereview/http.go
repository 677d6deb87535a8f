package codereview

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/httpapi/inprocess"
	"github.com/inferkit/inferkit/ratelimit"
)

// HTTPGenerator runs generations as chat completions (POST
// /v1/chat/completions, response_format json_schema) of an inferkit API
// in process, with Header's headers (the caller's key): the API
// authenticates, limits and counts each one as any request. Its zero
// value is not usable; it is safe for concurrent use.
type HTTPGenerator struct {
	API    http.Handler
	Header http.Header
}

// APIError is the API's refusal of a generation: its status and body,
// which a Handler answers as they are (a 401, a 429 with its headers).
type APIError struct {
	Status int
	Header http.Header
	Body   []byte
}

func (e *APIError) Error() string {
	var b struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	json.Unmarshal(e.Body, &b)
	return fmt.Sprintf("codereview: the API answered %d: %s", e.Status, b.Error.Message)
}

// maxAnswer bounds an API answer that HTTPGenerator reads.
const maxAnswer = 4 << 20

// Generate implements Generator.
func (g HTTPGenerator) Generate(ctx context.Context, gen Generation) (Generated, error) {
	body := map[string]any{
		"model":       gen.Model,
		"max_tokens":  gen.MaxTokens,
		"temperature": 0,
		"messages":    []map[string]string{{"role": "system", "content": gen.System}, {"role": "user", "content": gen.User}},
	}
	if gen.Schema != nil {
		body["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "review", "schema": gen.Schema, "strict": true}}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return Generated{}, err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/v1/chat/completions", bytes.NewReader(b))
	if err != nil {
		return Generated{}, err
	}
	for k, vs := range g.Header {
		r.Header[k] = vs
	}
	r.Header.Set("Content-Type", "application/json")
	w, err := inprocess.Do(g.API, r, maxAnswer)
	if err != nil {
		return Generated{}, err
	}
	if w.Status != http.StatusOK {
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		json.Unmarshal(w.Body, &e)
		if e.Error.Code == "context_length_exceeded" {
			return Generated{}, ErrTooLong
		}
		return Generated{}, &APIError{Status: w.Status, Header: w.Header, Body: w.Body}
	}
	var c struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(w.Body, &c); err != nil || len(c.Choices) == 0 {
		return Generated{}, errors.New("codereview: the API's answer has no choice")
	}
	if gen.Schema != nil && c.Choices[0].FinishReason == "length" {
		return Generated{}, fmt.Errorf("codereview: the answer ran past %d tokens before its JSON ended", gen.MaxTokens)
	}
	return Generated{Text: c.Choices[0].Message.Content, PromptTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}, nil
}

// HandlerConfig configures a Handler. API is required.
type HandlerConfig struct {
	// API serves the Inference API (an *httpapi.Handler), whose chat
	// completions run the reviews' generations under each caller's key.
	API http.Handler
	// Reviewer's Config, less its Generator.
	Config
	// Accounts, when set, gives each caller's plan (its account's, a
	// trial counting as its plan): a request for a feature outside it
	// (security, rules) is refused with a 403 that names the feature and
	// the plan that has it. Nil means no plans: every feature.
	Accounts *account.Accounts
	// Quotas, with Accounts, counts each review (and its summary) and
	// the people who ask for them (the body's user, else the key) in
	// the plan's monthly quotas; past one, a 429 names it and when it
	// resets. Nil means no quotas.
	Quotas ratelimit.Quotas
	// Model is the model that reviews for requests that name none, and
	// for every request of a plan without bring-your-own-model: with
	// Accounts, a request that names another model needs a plan with
	// it (Enterprise). "" means requests must name their model.
	Model string
	// Repositories are the git repositories that requests may review a
	// range of ({repository, base, head}), by name: their folders on
	// this machine. Nil means none: requests give their diff.
	Repositories map[string]string
	// Now is the clock of created, plans and quotas; nil means time.Now.
	Now func() time.Time
	// Store keeps the reviews (for their comments' feedback and the
	// fine-tuning set), the accounts' analytics and observations, and
	// the repositories' memories: give the accounts' Store (Redis, to
	// share them between replicas; bbolt, to keep them across
	// restarts). Nil means an account.Memory of this process.
	Store account.Store
	// Logger receives the errors of the Store after an answer went
	// out. Nil means slog.Default().
	Logger *slog.Logger
	// Metrics, when set, receives the reviews' LLM observability
	// metrics (inferkit_code_review_*: requests, duration, tokens and
	// comments by kind and model). Nil means none.
	Metrics prometheus.Registerer
}

// Handler serves the review API under /v1/code-review/:
//
//	POST /v1/code-review/reviews        {model, diff, rules, security, summary, user, stream}
//	POST /v1/code-review/summaries      {model, diff, user, stream}
//	POST /v1/code-review/release-notes  {model, diff, user, stream}
//	POST /v1/code-review/documentation  {model, diff, user, stream}
//	POST /v1/code-review/reviews/{id}/feedback  {comment, accepted, note}
//	GET  /v1/code-review/fine-tuning    the accepted comments, JSONL
//	GET  /v1/code-review/settings       the account's {rules, model}
//	PUT  /v1/code-review/settings       {rules, model}: applied to every review
//
// Instead of a diff, a body may name a range of a repository the server
// reads (HandlerConfig.Repositories): {repository, base, head}, the
// changes of head since it left base.
//
// A review answers {id, object "code_review", created, model, summary,
// comments, not_reviewed, files, pieces, usage}; streamed, it sends
// server-sent events: a comment event per comment as its piece is
// reviewed, not_reviewed, summary, and done with the whole review (or
// error). A request without an API key is a 401, an invalid one a 400
// naming its field, before any generation; the API's refusal of a
// generation (a 401, a 429) is answered as the API gave it. A Handler
// is safe for concurrent use; it holds nothing to close.
type Handler struct {
	api      http.Handler
	cfg      Config
	accounts *account.Accounts
	quotas   ratelimit.Quotas
	repos    map[string]string
	model    string // HandlerConfig.Model
	ledger   ledger // the reviews kept for feedback, analytics, observations and memories
	metrics  *metrics
	log      *slog.Logger
	now      func() time.Time
	mux      *http.ServeMux
}

// NewHandler checks cfg and returns its Handler.
func NewHandler(cfg HandlerConfig) (*Handler, error) {
	if cfg.API == nil {
		return nil, errors.New("codereview: HandlerConfig.API is nil")
	}
	probe := cfg.Config
	probe.Generator = HTTPGenerator{API: cfg.API}
	if _, err := New(probe); err != nil {
		return nil, err
	}
	if cfg.Quotas != nil && cfg.Accounts == nil {
		return nil, errors.New("codereview: HandlerConfig.Quotas needs Accounts, whose plans they count")
	}
	h := &Handler{api: cfg.API, cfg: cfg.Config, accounts: cfg.Accounts, quotas: cfg.Quotas, repos: maps.Clone(cfg.Repositories), model: cfg.Model, ledger: ledger{cfg.Store}, log: cfg.Logger, now: cfg.Now, mux: http.NewServeMux()}
	if h.now == nil {
		h.now = time.Now
	}
	if h.ledger.s == nil {
		h.ledger.s = account.NewMemory()
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if cfg.Metrics != nil {
		var err error
		if h.metrics, err = newMetrics(cfg.Metrics); err != nil {
			return nil, fmt.Errorf("codereview: HandlerConfig.Metrics: %w", err)
		}
	}
	h.mux.HandleFunc("POST /v1/code-review/reviews", h.serve(KindReview))
	h.mux.HandleFunc("POST /v1/code-review/summaries", h.serve(KindSummary))
	h.mux.HandleFunc("POST /v1/code-review/release-notes", h.serve(KindReleaseNotes))
	h.mux.HandleFunc("POST /v1/code-review/documentation", h.serve(KindDocumentation))
	h.mux.HandleFunc("POST /v1/code-review/reviews/{id}/feedback", h.feedback)
	h.mux.HandleFunc("GET /v1/code-review/fine-tuning", h.fineTuning)
	h.mux.HandleFunc("GET /v1/code-review/settings", h.settings)
	h.mux.HandleFunc("PUT /v1/code-review/settings", h.setSettings)
	h.mux.HandleFunc("/v1/code-review/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "", fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	})
	return h, nil
}

// ServeHTTP serves the routes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// reviewBody is the body of POST /v1/code-review/reviews.
type reviewBody struct {
	Model string `json:"model"`
	Diff  string `json:"diff"`
	// Repository, Base and Head name a range of a repository of
	// HandlerConfig.Repositories, instead of a Diff.
	Repository string `json:"repository"`
	Base       string `json:"base"`
	Head       string `json:"head"`
	Rules      string `json:"rules"`
	Security   bool   `json:"security"`
	Summary    *bool  `json:"summary"`
	Stream     bool   `json:"stream"`
	// User names the person who asks, for the plan's seats; "" counts
	// the key.
	User string `json:"user"`
}

// keyHeader returns the headers of r that its generations carry: its
// key and trace context; without a key it answers 401 and ok is false.
func keyHeader(w http.ResponseWriter, r *http.Request) (header http.Header, ok bool) {
	header = http.Header{}
	for _, k := range []string{"Authorization", "X-Api-Key", "Traceparent", "Tracestate"} {
		if v := r.Header.Get(k); v != "" {
			header.Set(k, v)
		}
	}
	if header.Get("Authorization") == "" && header.Get("X-Api-Key") == "" {
		writeError(w, http.StatusUnauthorized, "invalid_api_key", "", "an API key is required (Authorization: Bearer KEY)")
		return nil, false
	}
	return header, true
}

// serve returns the handler of a route that asks for kind.
func (h *Handler) serve(kind Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { h.review(w, r, kind) }
}

// review serves a request for kind: POST /v1/code-review/reviews,
// summaries or release-notes.
func (h *Handler) review(w http.ResponseWriter, r *http.Request, kind Kind) {
	done := false // the review ended with a result: its quotas stay taken
	header, ok := keyHeader(w, r)
	if !ok {
		return
	}
	var body reviewBody
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxDiffBytes+64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "the body is not a review request: "+err.Error())
		return
	}
	if body.Repository != "" {
		dir, ok := h.repos[body.Repository]
		switch {
		case body.Diff != "":
			writeError(w, http.StatusBadRequest, "invalid_request_error", "diff", "give a diff or a repository's range, not both")
			return
		case !ok:
			writeError(w, http.StatusBadRequest, "invalid_request_error", "repository", fmt.Sprintf("%q is not a repository this server reads", body.Repository))
			return
		}
		var err error
		if body.Diff, err = rangeDiff(r.Context(), dir, body.Base, body.Head); err != nil {
			var fe *FieldError
			errors.As(err, &fe)
			writeError(w, http.StatusBadRequest, "invalid_request_error", fe.Field, err.Error())
			return
		}
	}
	req := Request{Kind: kind, Model: body.Model, Diff: body.Diff, Rules: body.Rules, Security: body.Security, NoSummary: body.Summary != nil && !*body.Summary}
	now := h.now()
	rv, owner, giveBack, err := h.admit(r.Context(), header, &req, body.User, body.Repository, now)
	if err != nil {
		admitError(w, err, now)
		return
	}
	id, created, began := "cr_"+rand.Text(), now.Unix(), time.Now()
	var res *Result // the result, once there is one
	var runErr error
	defer func() {
		if !done {
			giveBack()
		}
		h.record(r.Context(), id, owner, body.Repository, req, now, began, res, runErr)
	}()
	answer := func(res Result) any {
		return struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Kind    string `json:"kind"`
			Created int64  `json:"created"`
			Model   string `json:"model"`
			Result
		}{id, "code_review", cmp.Or(string(req.Kind), "review"), created, req.Model, res}
	}
	if !body.Stream {
		out, err := rv.Run(r.Context(), req)
		if err != nil {
			runErr = err
			failed(w, err)
			return
		}
		done, res = true, &out
		writeJSON(w, http.StatusOK, answer(out))
		return
	}
	started := false
	flusher := http.NewResponseController(w)
	send := func(event string, v any) bool {
		if !started {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			w.WriteHeader(http.StatusOK)
			started = true
		}
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}
	for ev, err := range rv.Review(r.Context(), req) {
		var ok bool
		switch {
		case err != nil && !started:
			runErr = err
			failed(w, err)
			return
		case err != nil:
			runErr = err
			send("error", map[string]any{"error": map[string]string{"message": err.Error()}})
			return
		case ev.Comment != nil:
			ok = send("comment", ev.Comment)
		case ev.NotReviewed != nil:
			ok = send("not_reviewed", ev.NotReviewed)
		case ev.Final != nil:
			done, res = true, ev.Final
			ok = send("done", answer(*ev.Final))
		default:
			ok = send("summary", map[string]string{"summary": ev.Summary})
		}
		if !ok {
			return
		}
	}
}

// failed answers a review's error: the API's refusal as it gave it,
// else a 500 (or a 502 for an answer the API could not give).
func failed(w http.ResponseWriter, err error) {
	var ae *APIError
	if errors.As(err, &ae) {
		for _, k := range []string{"Retry-After", "WWW-Authenticate"} {
			if v := ae.Header.Get(k); v != "" {
				w.Header().Set(k, v)
			}
		}
		for k, vs := range ae.Header {
			if strings.HasPrefix(http.CanonicalHeaderKey(k), "X-Ratelimit-") {
				w.Header()[k] = vs
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ae.Status)
		w.Write(ae.Body)
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	writeError(w, http.StatusBadGateway, "server_error", "", err.Error())
}

// writeError writes an error in the API's shape.
func writeError(w http.ResponseWriter, status int, typ, param, msg string) {
	e := map[string]any{"message": msg, "type": typ}
	if param != "" {
		e["param"] = param
	}
	writeJSON(w, status, map[string]any{"error": e})
}

// writeJSON writes v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
