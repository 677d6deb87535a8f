//go:build cgo

package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/inferkit/inferkit/internal/redistest"
	"github.com/inferkit/inferkit/internal/testmodels"
	"github.com/inferkit/inferkit/policy"
)

// npmSDKPackages are the npm packages the TypeScript SDKs' tests load:
// the official OpenAI and Anthropic SDKs and what the Anthropic one
// requires (scripts/fetch-testdata.sh fetches them).
var npmSDKPackages = []string{"openai", "@anthropic-ai/sdk", "@opentelemetry/api", "standardwebhooks", "@stablelib/base64", "fast-sha256"}

// npmSDKs returns node and a folder holding testdata/sdk's scripts beside
// a node_modules of npmSDKPackages, as an application installs them; it
// skips the test where node or a package is missing.
func npmSDKs(t *testing.T) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the TypeScript SDKs' tests need Node.js 20 or newer")
	}
	root := filepath.Join(testmodels.Root(t), ".build", "testdata", "npm")
	dir = t.TempDir()
	for _, p := range npmSDKPackages {
		src := filepath.Join(root, p)
		if _, err := os.Stat(filepath.Join(src, "package.json")); err != nil {
			t.Skipf("the npm package %s is not fetched: run scripts/fetch-testdata.sh (make test does)", p)
		}
		dst := filepath.Join(dir, "node_modules", p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(src, dst); err != nil {
			t.Fatal(err)
		}
	}
	scripts, err := filepath.Glob(filepath.Join("testdata", "sdk", "*.mjs"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts in testdata/sdk (%v)", err)
	}
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(s)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return node, dir
}

// runNode runs script of dir (npmSDKs) with args, BASE_URL and API_KEY
// set to url and key, and decodes the JSON it prints into out.
func runNode(t *testing.T, node, dir, url, key string, out any, script string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Packages resolve their own imports from the links' folder, not
	// from where the links point.
	cmd := exec.CommandContext(ctx, node, append([]string{"--preserve-symlinks", script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BASE_URL="+url, "API_KEY="+key)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("node %s printed %q: %v\n%s", script, b, err, stderr.String())
	}
}

// sdkCall is a request to a route of replayRoutes as first sent, with
// what the server answered: its status and, for an error, its message.
type sdkCall struct {
	Row     string          `json:"-"`
	Path    string          `json:"path"`
	Body    json.RawMessage `json:"body"`
	Status  int             `json:"-"`
	Message string          `json:"-"`
}

// npmResult is what replay.mjs printed for one sdkCall.
type npmResult struct {
	OK      bool            `json:"ok"`
	Status  int             `json:"status"`
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    string          `json:"code"`
	Text    string          `json:"text"`
	Usage   json.RawMessage `json:"usage"`
}

// sdkRecorder is an httpapi middleware that keeps every POST to a
// route of replayRoutes, under the row set last (SetRow), for replay through
// the TypeScript SDKs. It is safe for concurrent use.
type sdkRecorder struct {
	mu    sync.Mutex
	row   string
	calls []sdkCall
}

// SetRow names the calls recorded from now on.
func (r *sdkRecorder) SetRow(row string) {
	r.mu.Lock()
	r.row = row
	r.mu.Unlock()
}

// Calls returns what was recorded.
func (r *sdkRecorder) Calls() []sdkCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sdkCall(nil), r.calls...)
}

// replayRoutes are the routes whose requests replay.mjs sends again.
var replayRoutes = map[string]bool{
	"/v1/chat/completions": true, "/v1/completions": true, "/v1/responses": true, "/v1/messages": true,
	"/v1/embeddings": true, "/v1/rerank": true,
}

// Middleware records the requests to replay that pass through next.
func (r *sdkRecorder) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || !replayRoutes[req.URL.Path] {
			next.ServeHTTP(w, req)
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil || !json.Valid(body) {
			// Not one to replay: the route reads it, and its error, as
			// it came.
			req.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), req.Body))
			next.ServeHTTP(w, req)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, req)
		c := sdkCall{Path: req.URL.Path, Body: body, Status: rec.status}
		if c.Status >= 400 {
			var e struct {
				Error struct{ Message string } `json:"error"`
			}
			json.Unmarshal(rec.body.Bytes(), &e)
			c.Message = e.Error.Message
		}
		r.mu.Lock()
		c.Row = r.row
		r.calls = append(r.calls, c)
		r.mu.Unlock()
	})
}

// statusRecorder keeps a response's status and, for an error, its body.
type statusRecorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	if s.status >= 400 && s.body.Len() < 1<<16 {
		s.body.Write(b)
	}
	return s.ResponseWriter.Write(b)
}

// Flush lets streamed answers through as they come.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// replayThroughNPM sends calls again through the TypeScript SDKs
// (replay.mjs) and checks that each ends as it did when first sent (by a
// Go SDK, or as raw HTTP): an answer the SDK reads to its end where the
// first got one, and the same status and message where it got an error.
func replayThroughNPM(t *testing.T, url string, calls []sdkCall) []npmResult {
	t.Helper()
	node, dir := npmSDKs(t)
	b, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "calls.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var got []npmResult
	runNode(t, node, dir, strings.TrimSuffix(url, "/v1"), key, &got, "replay.mjs", file)
	if len(got) != len(calls) {
		t.Fatalf("replay.mjs answered %d of %d calls", len(got), len(calls))
	}
	for i, c := range calls {
		r := got[i]
		switch {
		case c.Status < 400 && !r.OK:
			t.Errorf("%s: %s %s: first %d, through the TypeScript SDK an error: %d %s", c.Row, c.Path, c.Body, c.Status, r.Status, r.Message)
		case c.Status >= 400 && (r.OK || r.Status != c.Status || r.Message != c.Message):
			t.Errorf("%s: %s %s: first %d %q, through the TypeScript SDK ok=%v %d %q", c.Row, c.Path, c.Body, c.Status, c.Message, r.OK, r.Status, r.Message)
		}
	}
	return got
}

// The OpenAI TypeScript SDK makes a background response, reads it until
// it ends, streams it again after a sequence number, and cancels one at
// work (background.mjs), as TestSDKBackground does with the Go SDK.
func TestTypeScriptSDKBackground(t *testing.T) {
	node, dir := npmSDKs(t)
	e := newEnv(t, nil)
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	var run struct {
		Created, Status, Text, Last string
		First                       int
	}
	runNode(t, node, dir, srv.URL, key, &run, "background.mjs", "run", policy.Core25Mini)
	if run.Created != "queued" || run.Status != "completed" || run.Text != "Hello world" || run.First != 3 || run.Last != "response.completed" {
		t.Errorf("a background response through the SDK: %+v", run)
	}

	e.eng.block = true
	w := do(e.h, "POST", "/v1/responses", key, `{"model":"`+policy.Core25Mini+`","input":"Hi","background":true}`)
	if w.Code != 200 {
		t.Fatalf("POST: %d %s", w.Code, w.Body)
	}
	id, _ := decode(t, w.Body.Bytes())["id"].(string)
	<-e.eng.ctxs
	poll(t, e.h, id, func(r map[string]any) bool { return r["output_text"] == "Hello world" })
	var cancel struct{ Cancelled, Text, Retrieved string }
	runNode(t, node, dir, srv.URL, key, &cancel, "background.mjs", "cancel", id)
	if cancel.Cancelled != "cancelled" || cancel.Text != "Hello world" || cancel.Retrieved != "cancelled" {
		t.Errorf("cancelling through the SDK: %+v", cancel)
	}
}

// On a prepaid account whose balance is spent, the TypeScript SDKs see
// each style's refusal as the Go SDKs do: 429, insufficient_quota (a
// rate_limit_error on messages), the balance named, and no retry.
func TestTypeScriptSDKQuota(t *testing.T) {
	node, dir := npmSDKs(t)
	a := prepaidReplica(t, redistest.Start(t))
	admin(t, a.h, "POST", "/v1/admin/accounts", `{"id":"acct_pp","name":"Prepaid"}`, http.StatusCreated)
	k := field(admin(t, a.h, "POST", "/v1/admin/api-keys", `{"name":"prepaid","account":"acct_pp"}`, http.StatusCreated), "key")
	admin(t, a.h, "POST", "/v1/admin/credits", `{"id":"pay_1","account":"acct_pp","amount_usd":"5"}`, 200)
	for range 25 { // 0.2 USD each
		if w := do(a.h, "POST", "/v1/chat/completions", k, chatBody); w.Code != 200 {
			t.Fatalf("spending the balance: %d %s", w.Code, w.Body)
		}
	}
	srv := httptest.NewServer(a.h)
	defer srv.Close()
	calls := []sdkCall{
		{Path: "/v1/chat/completions", Body: json.RawMessage(chatBody)},
		{Path: "/v1/responses", Body: json.RawMessage(responsesBody)},
		{Path: "/v1/messages", Body: json.RawMessage(messagesBody)},
	}
	b, _ := json.Marshal(calls)
	file := filepath.Join(dir, "calls.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ran := a.eng.calls()
	var got []npmResult
	runNode(t, node, dir, srv.URL, k, &got, "replay.mjs", file)
	for i, want := range []struct{ typ, code string }{
		{"rate_limit_error", "insufficient_quota"}, {"rate_limit_error", "insufficient_quota"}, {"rate_limit_error", ""},
	} {
		r := got[i]
		if r.OK || r.Status != http.StatusTooManyRequests || r.Type != want.typ || r.Code != want.code || !strings.Contains(r.Message, "0 USD left") {
			t.Errorf("%s on a spent balance through the TypeScript SDK: %+v", calls[i].Path, r)
		}
	}
	if a.eng.calls() != ran {
		t.Error("the engine ran a refused request")
	}
}

// Reranking, which neither family of SDKs has a method for, through
// their generic requests: openai-go's Client.Post and the TypeScript
// client's post (replay.mjs) rank the same documents alike, and a
// request without documents is the same 400 through both.
func TestSDKRerank(t *testing.T) {
	url, _, _, _ := rerankServer(t)
	body := map[string]any{"model": "rr", "query": "What is the weather like?", "documents": rerankDocs, "top_n": 2}
	client := openaiSDK(url, key)
	var res rerankResponse
	if err := client.Post(t.Context(), "rerank", body, &res); err != nil || len(res.Results) != 2 {
		t.Fatalf("openai-go Post: %v %+v", err, res)
	}
	var apiErr *openai.Error
	err := client.Post(t.Context(), "rerank", map[string]any{"model": "rr", "query": "q"}, &res)
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Message, "documents") {
		t.Fatalf("openai-go Post without documents: %v", err)
	}
	b, _ := json.Marshal(body)
	got := replayThroughNPM(t, url, []sdkCall{
		{Row: "rerank", Path: "/v1/rerank", Body: b, Status: http.StatusOK},
		{Row: "rerank without documents", Path: "/v1/rerank", Body: json.RawMessage(`{"model":"rr","query":"q"}`), Status: http.StatusBadRequest, Message: apiErr.Message},
	})
	if want := fmt.Sprintf("%d,%d", res.Results[0].Index, res.Results[1].Index); got[0].Text != want {
		t.Errorf("the TypeScript SDK ranks %s, openai-go %s", got[0].Text, want)
	}
}
