package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/logtest"
	"github.com/inferkit/inferkit/policy"
)

// fakeEngine plays a script: the pieces, then the result, or an error
// before or after them, or waits for the request's context to end.
type fakeEngine struct {
	models     []inference.ModelInfo
	pieces     []string
	result     inference.Result
	errBefore  error // the first and only pair
	errPrepare error // PrepareEmbed's error
	errAfter   error // after the pieces
	block      bool  // after the pieces, wait for ctx to end
	tokens     int   // CountTokens' answer when positive

	mu     sync.Mutex
	reqs   []inference.Request
	embeds []inference.EmbedRequest
	ctxs   chan context.Context
}

func newFake() *fakeEngine {
	return &fakeEngine{
		models: []inference.ModelInfo{
			{ID: "core-2-5-mini", Aliases: []string{"mini"}, Path: "/m/a.gguf", ContextLength: 4096},
			{ID: "core-2-5-pro", Path: "/m/a.gguf", ContextLength: 4096},
			{ID: "uncatalogued", Path: "/m/b.gguf", ContextLength: 4096},
			{ID: "judge", Path: "/m/c.gguf", ContextLength: 512},
		},
		pieces: []string{"Hello", " world"},
		result: inference.Result{Text: "Hello world", FinishReason: inference.FinishStop,
			Usage: inference.Usage{PromptTokens: 5, CompletionTokens: 2}},
		ctxs: make(chan context.Context, 16),
	}
}

func (f *fakeEngine) Models() []inference.ModelInfo { return f.models }

// CountTokens counts one token per word of the request's texts, or
// returns tokens when set.
func (f *fakeEngine) CountTokens(req inference.Request) (int, error) {
	if f.tokens > 0 {
		return f.tokens, nil
	}
	n := len(strings.Fields(req.Prompt))
	for _, m := range req.Messages {
		for _, p := range m.Content {
			n += len(strings.Fields(p.Text))
		}
	}
	return n, nil
}

// Prepare counts the prompt as CountTokens does and checks that it and
// the output fit in the model's context, as the engine does.
func (f *fakeEngine) Prepare(ctx context.Context, req inference.Request) (*inference.Prepared, error) {
	n, _ := f.CountTokens(req)
	limit := 0
	for _, m := range f.models {
		if m.ID == req.Model || slices.Contains(m.Aliases, req.Model) {
			limit = m.ContextLength
		}
	}
	maxOut := req.MaxTokens
	if room := limit - n; maxOut == 0 || req.ClampMaxTokens && maxOut > room {
		maxOut = room
	}
	switch {
	case n >= limit:
		return nil, &inference.FieldError{Path: inference.Field("Messages"), Err: inference.ErrContextLength, Reason: "too long"}
	case n+maxOut > limit:
		return nil, &inference.FieldError{Path: inference.Field("MaxTokens"), Err: inference.ErrContextLength, Reason: "does not fit"}
	}
	return &inference.Prepared{Request: req, InputTokens: n, MaxOutputTokens: maxOut}, nil
}

// Run plays the script for p's request.
func (f *fakeEngine) Run(ctx context.Context, p *inference.Prepared) iter.Seq2[inference.Event, error] {
	req := p.Request
	return func(yield func(inference.Event, error) bool) {
		f.mu.Lock()
		f.reqs = append(f.reqs, req)
		f.mu.Unlock()
		select {
		case f.ctxs <- ctx:
		default:
		}
		if f.errBefore != nil {
			yield(inference.Event{}, f.errBefore)
			return
		}
		for _, p := range f.pieces {
			if !yield(inference.Event{Text: p}, nil) {
				return
			}
		}
		if f.block {
			<-ctx.Done()
			yield(inference.Event{}, ctx.Err())
			return
		}
		if f.errAfter != nil {
			yield(inference.Event{}, f.errAfter)
			return
		}
		res := f.result
		yield(inference.Event{Final: &res}, nil)
	}
}

// PrepareEmbed counts two special tokens and one per word of each text
// (or each token of a token array), as a BERT would, or fails with
// errPrepare.
func (f *fakeEngine) PrepareEmbed(req inference.EmbedRequest) (*inference.PreparedEmbed, error) {
	if f.errPrepare != nil {
		return nil, f.errPrepare
	}
	n := 0
	for _, s := range req.Input {
		n += 2 + len(strings.Fields(s))
	}
	for _, ids := range req.Tokens {
		n += 2 + len(ids)
	}
	return &inference.PreparedEmbed{Request: req, InputTokens: n}, nil
}

// RunEmbed records the request and gives input i the unit vector along
// axis i of the model's Dimensions (or the request's), or fails with
// errBefore.
func (f *fakeEngine) RunEmbed(ctx context.Context, p *inference.PreparedEmbed) (inference.EmbedResult, error) {
	f.mu.Lock()
	f.embeds = append(f.embeds, p.Request)
	f.mu.Unlock()
	if f.errBefore != nil {
		return inference.EmbedResult{}, f.errBefore
	}
	if err := ctx.Err(); err != nil {
		return inference.EmbedResult{}, err
	}
	dims := p.Request.Dimensions
	for _, m := range f.models {
		if m.ID == p.Request.Model && dims == 0 {
			dims = m.Dimensions
		}
	}
	res := inference.EmbedResult{Usage: inference.Usage{PromptTokens: p.InputTokens}}
	for i := range len(p.Request.Input) + len(p.Request.Tokens) {
		v := make([]float32, dims)
		v[i%dims] = 1
		res.Embeddings = append(res.Embeddings, v)
	}
	return res, nil
}

// lastRequest returns the last request the engine got.
func (f *fakeEngine) lastRequest(t *testing.T) inference.Request {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		t.Fatal("the engine got no request")
	}
	return f.reqs[len(f.reqs)-1]
}

// calls returns the number of engine calls.
func (f *fakeEngine) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

const (
	key      = "sk-test-right-key-0123456789"
	otherKey = "sk-test-other-key-9876543210"
	wrongKey = "sk-test-wrong-key-5555555555"
)

// logBuffer collects log output from concurrent handlers.
type logBuffer = logtest.Buffer

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// testCatalog is the catalog of the tests: two chat models of the spec
// (one with an alias, one capped at 1024 tokens of context) and a decision
// model.
func testCatalog() []catalog.Model {
	mini, _ := policy.Model(policy.Core25Mini)
	mini.Path, mini.Aliases = "/m/a.gguf", []string{"mini"}
	pro, _ := policy.Model(policy.Core25Pro)
	pro.Path, pro.ContextLength = "/m/a.gguf", 1024
	return []catalog.Model{mini, pro, {ID: "judge", Path: "/m/c.gguf", Kind: catalog.KindDecision}}
}

// env is a Handler on a fake engine, with its logs and clock.
type env struct {
	h     *httpapi.Handler
	keys  *httpapi.StaticKeys // of key and otherKey
	eng   *fakeEngine
	logs  *logBuffer
	clock *clock
}

// newEnv returns a Handler with the test catalog, the keys key and
// otherKey, a debug logger into a buffer, and a fake clock; edit changes
// the configuration first.
func newEnv(t *testing.T, edit func(*httpapi.Config, *fakeEngine)) *env {
	t.Helper()
	e := &env{eng: newFake(), logs: &logBuffer{}, clock: newClock()}
	keys, err := httpapi.NewStaticKeys(key, otherKey)
	if err != nil {
		t.Fatal(err)
	}
	e.keys = keys
	cfg := httpapi.Config{
		Engine: e.eng,
		Models: testCatalog(),
		Keys:   keys,
		Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:    e.clock.Now,
	}
	if edit != nil {
		edit(&cfg, e.eng)
	}
	if e.h, err = httpapi.New(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.h.Close() }) // its background responses
	return e
}

// do sends one request to h with the API key k (none when empty) and
// returns the recorded response.
func do(h http.Handler, method, path, k, body string) *httptest.ResponseRecorder {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	if k != "" {
		req.Header.Set("Authorization", "Bearer "+k)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// decode unmarshals a JSON body into a map.
func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, b)
	}
	return m
}

// errorOf returns the fields of an error body: the chat shape
// {error:{type,code,param,message}}, or the messages shape
// {type:"error", error:{type, message, error:{type, message}}}, whose
// error and nested error must agree.
func errorOf(t *testing.T, b []byte) (typ, code, param, message string) {
	t.Helper()
	m := decode(t, b)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object: %s", b)
	}
	if inner, ok := e["error"].(map[string]any); ok { // messages
		if m["type"] != "error" || e["type"] != inner["type"] || e["message"] != inner["message"] || e["type"] == "error" {
			t.Errorf("messages error shape: %s", b)
		}
		typ, _ = inner["type"].(string)
		message, _ = inner["message"].(string)
		return typ, "", "", message
	}
	typ, _ = e["type"].(string)
	code, _ = e["code"].(string)
	param, _ = e["param"].(string)
	message, _ = e["message"].(string)
	return typ, code, param, message
}

const (
	chatBody      = `{"model":"core-2-5-mini","messages":[{"role":"user","content":"Hi"}]}`
	messagesBody  = `{"model":"core-2-5-mini","max_tokens":64,"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]}`
	responsesBody = `{"model":"core-2-5-mini","input":"Hi"}`
)

// withModel replaces the model of a request body.
func withModel(body, model string) string {
	return strings.Replace(body, `"core-2-5-mini"`, `"`+model+`"`, 1)
}

// streaming adds "stream":true to a request body.
func streaming(body string) string {
	return strings.Replace(body, `{`, `{"stream":true,`, 1)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
