package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// limitedEnv is a Handler whose keys are on tier (key) and on Tier2
// (otherKey), limited by a fresh in-memory limiter.
func limitedEnv(t *testing.T, tier ratelimit.Tier, edit func(*httpapi.Config, *fakeEngine)) *env {
	t.Helper()
	return newEnv(t, func(cfg *httpapi.Config, f *fakeEngine) {
		keys, err := httpapi.NewTieredKeys(httpapi.APIKey{Key: key, Tier: tier}, httpapi.APIKey{Key: otherKey, Tier: policy.Tier2})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Keys, cfg.Limiter = keys, ratelimit.NewMemory()
		if edit != nil {
			edit(cfg, f)
		}
	})
}

// header returns an integer header, failing the test when it is absent.
func header(t *testing.T, w *httptest.ResponseRecorder, name string) int64 {
	t.Helper()
	v := w.Header().Get(name)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("header %s = %q: %v (headers %v)", name, v, err, w.Header())
	}
	return n
}

// TestRateLimitEveryRoute: on every route and style, the rate-limit
// headers on each response, and past the request limit a 429 in the
// style's shape with Retry-After.
func TestRateLimitEveryRoute(t *testing.T) {
	routes := []struct {
		name, method, path, body string
		wantType, wantCode       string
	}{
		{"chat", "POST", "/v1/chat/completions", chatBody, "rate_limit_error", "rate_limit_exceeded"},
		{"web chat", "POST", "/v1/web/chat/completions", chatBody, "rate_limit_error", "rate_limit_exceeded"},
		{"chat stream", "POST", "/v1/chat/completions", streaming(chatBody), "rate_limit_error", "rate_limit_exceeded"},
		{"messages", "POST", "/v1/messages", messagesBody, "rate_limit_error", ""},
		{"messages stream", "POST", "/v1/messages", streaming(messagesBody), "rate_limit_error", ""},
		{"responses", "POST", "/v1/responses", responsesBody, "rate_limit_error", "rate_limit_exceeded"},
		{"responses stream", "POST", "/v1/responses", streaming(responsesBody), "rate_limit_error", "rate_limit_exceeded"},
		{"get response", "GET", "/v1/responses/resp_unknown", "", "rate_limit_error", "rate_limit_exceeded"},
		{"delete response", "DELETE", "/v1/responses/resp_unknown", "", "rate_limit_error", "rate_limit_exceeded"},
		{"list models", "GET", "/v1/models", "", "rate_limit_error", "rate_limit_exceeded"},
		{"get model", "GET", "/v1/models/core-2-5-mini", "", "rate_limit_error", "rate_limit_exceeded"},
		{"unknown model", "GET", "/v1/models/nope", "", "rate_limit_error", "rate_limit_exceeded"},
	}
	tier := ratelimit.Tier{Name: "two", Requests: 2, InputTokens: 1_000, OutputTokens: 10_000}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			e := limitedEnv(t, tier, nil)
			for i := range 2 {
				w := do(e.h, rt.method, rt.path, key, rt.body)
				if w.Code == http.StatusTooManyRequests {
					t.Fatalf("request %d: 429 %s", i+1, w.Body)
				}
				if got := header(t, w, "X-Ratelimit-Remaining-Requests"); got != int64(1-i) {
					t.Errorf("request %d: remaining requests %d, want %d", i+1, got, 1-i)
				}
				header(t, w, "X-Ratelimit-Limit-Requests")
				header(t, w, "X-Ratelimit-Limit-Tokens")
				header(t, w, "X-Ratelimit-Remaining-Input-Tokens")
				header(t, w, "X-Ratelimit-Remaining-Output-Tokens")
				if w.Header().Get("X-Ratelimit-Reset-Requests") != "1m0s" {
					t.Errorf("reset = %q, want 1m0s", w.Header().Get("X-Ratelimit-Reset-Requests"))
				}
			}
			e.clock.Advance(15 * time.Second)
			w := do(e.h, rt.method, rt.path, key, rt.body)
			if w.Code != http.StatusTooManyRequests {
				t.Fatalf("third request: %d %s, want 429", w.Code, w.Body)
			}
			if got := w.Header().Get("Retry-After"); got != "45" {
				t.Errorf("Retry-After = %q, want 45", got)
			}
			if got := header(t, w, "X-Ratelimit-Remaining-Requests"); got != 0 {
				t.Errorf("remaining on the 429 = %d", got)
			}
			if w.Header().Get("X-Ratelimit-Reset-Requests") != "45s" {
				t.Errorf("reset on the 429 = %q, want 45s", w.Header().Get("X-Ratelimit-Reset-Requests"))
			}
			typ, code, _, msg := errorOf(t, w.Body.Bytes())
			if typ != rt.wantType || code != rt.wantCode || !strings.Contains(msg, "requests per minute") {
				t.Errorf("429 body: type %q code %q message %q", typ, code, msg)
			}
			// Another key has its own limits.
			if w := do(e.h, rt.method, rt.path, otherKey, rt.body); w.Code == http.StatusTooManyRequests ||
				header(t, w, "X-Ratelimit-Limit-Requests") != policy.Tier2.Requests {
				t.Errorf("other key: %d, limit %s", w.Code, w.Header().Get("X-Ratelimit-Limit-Requests"))
			}
			// The window moves on.
			e.clock.Advance(45 * time.Second)
			if w := do(e.h, rt.method, rt.path, key, rt.body); w.Code == http.StatusTooManyRequests {
				t.Errorf("after the window: 429")
			}
		})
	}
}

func TestRateLimitNoHeadersOn401(t *testing.T) {
	e := limitedEnv(t, policy.Default, nil)
	w := do(e.h, "POST", "/v1/chat/completions", wrongKey, chatBody)
	if w.Code != http.StatusUnauthorized || w.Header().Get("X-Ratelimit-Limit-Requests") != "" {
		t.Fatalf("401: %d, headers %v", w.Code, w.Header())
	}
}

func TestNoLimiterNoHeaders(t *testing.T) {
	e := newEnv(t, nil)
	w := do(e.h, "POST", "/v1/chat/completions", key, chatBody)
	if w.Code != http.StatusOK || w.Header().Get("X-Ratelimit-Limit-Requests") != "" {
		t.Fatalf("%d, headers %v", w.Code, w.Header())
	}
}

// TestRateLimitTokens: the reservation holds the counted prompt and the
// maximum output; the response settles it to the real usage.
func TestRateLimitTokens(t *testing.T) {
	tier := ratelimit.Tier{Name: "t", Requests: 100, InputTokens: 100, OutputTokens: 1_000}
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			e := limitedEnv(t, tier, func(_ *httpapi.Config, f *fakeEngine) { f.tokens = 30 })
			body := `{"model":"core-2-5-mini","max_tokens":600,"messages":[{"role":"user","content":"Hi"}]}`
			if stream {
				body = streaming(body)
			}
			w := do(e.h, "POST", "/v1/chat/completions", key, body)
			if w.Code != http.StatusOK {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			// While running: 30 input and 600 output tokens reserved.
			if in, out := header(t, w, "X-Ratelimit-Remaining-Input-Tokens"), header(t, w, "X-Ratelimit-Remaining-Output-Tokens"); in != 70 || out != 400 {
				t.Errorf("remaining at admission: %d input, %d output; want 70, 400", in, out)
			}
			// Settled to the fake's usage: 5 input, 2 output tokens.
			w = do(e.h, "POST", "/v1/chat/completions", key, body)
			if w.Code != http.StatusOK {
				t.Fatalf("second: %d %s", w.Code, w.Body)
			}
			if in, out := header(t, w, "X-Ratelimit-Remaining-Input-Tokens"), header(t, w, "X-Ratelimit-Remaining-Output-Tokens"); in != 100-5-30 || out != 1_000-2-600 {
				t.Errorf("remaining after a settled request: %d input, %d output; want 65, 398", in, out)
			}
			// The tokens header is the closer of the two to its limit.
			if got := header(t, w, "X-Ratelimit-Limit-Tokens"); got != 1_000 {
				t.Errorf("x-ratelimit-limit-tokens = %d, want the output limit", got)
			}
			// Both settled: 4 output tokens used, so 997 more may not be.
			w = do(e.h, "POST", "/v1/chat/completions", key, strings.Replace(body, "600", "997", 1))
			if w.Code != http.StatusTooManyRequests {
				t.Fatalf("third: %d, want 429 on output tokens", w.Code)
			}
			if _, _, _, msg := errorOf(t, w.Body.Bytes()); !strings.Contains(msg, "output tokens per minute") {
				t.Errorf("message %q", msg)
			}
		})
	}
}

// TestRateLimitTooLarge: a prompt over the per-minute input limit can
// never pass: 429 without Retry-After.
func TestRateLimitTooLarge(t *testing.T) {
	e := limitedEnv(t, ratelimit.Tier{Name: "t", InputTokens: 10}, func(_ *httpapi.Config, f *fakeEngine) { f.tokens = 11 })
	w := do(e.h, "POST", "/v1/messages", key, messagesBody)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "" {
		t.Fatalf("%d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if typ, _, _, msg := errorOf(t, w.Body.Bytes()); typ != "rate_limit_error" || !strings.Contains(msg, "too large") {
		t.Errorf("type %q message %q", typ, msg)
	}
	if e.eng.calls() != 0 {
		t.Error("the engine ran")
	}
}

// TestSpendCap: the catalog's prices charge each request; past the cap,
// insufficient_quota until the month turns, in every style.
func TestSpendCap(t *testing.T) {
	// core-2-5-mini: 0.5 USD per 1M input tokens, 2 per 1M output tokens.
	// 100 prompt tokens and at most 100 output: 0.00025 USD reserved.
	tier := ratelimit.Tier{Name: "capped", MaxMonthlySpend: 500 * ratelimit.MicroDollar}
	for _, rt := range []struct{ path, body, typ, code string }{
		{"/v1/chat/completions", chatBody, "rate_limit_error", "insufficient_quota"},
		{"/v1/messages", messagesBody, "rate_limit_error", ""},
		{"/v1/responses", responsesBody, "rate_limit_error", "insufficient_quota"},
	} {
		t.Run(rt.path, func(t *testing.T) {
			e := limitedEnv(t, tier, func(_ *httpapi.Config, f *fakeEngine) {
				f.tokens = 100
				f.result.Usage = inference.Usage{PromptTokens: 100, CompletionTokens: 100}
			})
			body := strings.Replace(rt.body, `"model"`, `"max_tokens":100,"max_output_tokens":100,"model"`, 1)
			body = strings.Replace(body, `"max_tokens":64,`, ``, 1)
			if strings.Contains(rt.path, "responses") {
				body = strings.Replace(body, `"max_tokens":100,`, ``, 1)
			} else {
				body = strings.Replace(body, `"max_output_tokens":100,`, ``, 1)
			}
			for i := range 2 {
				if w := do(e.h, "POST", rt.path, key, body); w.Code != http.StatusOK {
					t.Fatalf("request %d: %d %s", i+1, w.Code, w.Body)
				}
			}
			w := do(e.h, "POST", rt.path, key, body)
			if w.Code != http.StatusTooManyRequests {
				t.Fatalf("third: %d %s, want 429", w.Code, w.Body)
			}
			typ, code, _, msg := errorOf(t, w.Body.Bytes())
			if typ != rt.typ || code != rt.code || !strings.Contains(msg, "maximum monthly spend of 0.0005 USD") {
				t.Errorf("type %q code %q message %q", typ, code, msg)
			}
			// 2026-01-01T00:00 is the clock: the month turns in 31 days.
			if got := w.Header().Get("Retry-After"); got != strconv.Itoa(31*24*3600) {
				t.Errorf("Retry-After = %q", got)
			}
			// The catalog still answers: it costs nothing.
			if w := do(e.h, "GET", "/v1/models", key, ""); w.Code != http.StatusOK {
				t.Errorf("catalog: %d", w.Code)
			}
			e.clock.Advance(31 * 24 * time.Hour)
			if w := do(e.h, "POST", rt.path, key, body); w.Code != http.StatusOK {
				t.Errorf("next month: %d %s", w.Code, w.Body)
			}
		})
	}
}

// TestMessagesStreamInputTokens: message_start reports the counted prompt,
// with or without limits.
func TestMessagesStreamInputTokens(t *testing.T) {
	for _, limited := range []bool{false, true} {
		edit := func(_ *httpapi.Config, f *fakeEngine) { f.tokens = 42 }
		var e *env
		if limited {
			e = limitedEnv(t, policy.Default, edit)
		} else {
			e = newEnv(t, edit)
		}
		w := do(e.h, "POST", "/v1/messages", key, streaming(messagesBody))
		if !strings.Contains(w.Body.String(), `"usage":{"input_tokens":42,"output_tokens":0`) {
			t.Errorf("limited=%v: message_start without the counted input tokens:\n%s", limited, w.Body)
		}
	}
}

// TestRateLimitBadRequestCounts: a request refused before its model is
// known counts as one request, with headers; over the limit, an invalid
// request is still a 400 (waiting would not help), and a valid one a 429.
func TestRateLimitBadRequestCounts(t *testing.T) {
	e := limitedEnv(t, ratelimit.Tier{Name: "one", Requests: 1}, nil)
	w := do(e.h, "POST", "/v1/chat/completions", key, `{"model":`)
	if w.Code != http.StatusBadRequest || header(t, w, "X-Ratelimit-Remaining-Requests") != 0 {
		t.Fatalf("bad JSON: %d, headers %v", w.Code, w.Header())
	}
	if w := do(e.h, "POST", "/v1/chat/completions", key, withModel(chatBody, "nope")); w.Code != http.StatusBadRequest {
		t.Fatalf("an unknown model over the limit: %d %s, want 400", w.Code, w.Body)
	}
	if w := do(e.h, "POST", "/v1/chat/completions", key, chatBody); w.Code != http.StatusTooManyRequests {
		t.Fatalf("a valid request over the limit: %d %s, want 429", w.Code, w.Body)
	}
}

// TestRateLimitEngineRefusal: a request the engine refuses before any
// work counts as a request, without tokens.
func TestRateLimitEngineRefusal(t *testing.T) {
	tier := ratelimit.Tier{Name: "t", Requests: 10, OutputTokens: 1_000}
	e := limitedEnv(t, tier, func(_ *httpapi.Config, f *fakeEngine) { f.errBefore = inference.ErrOverloaded })
	body := `{"model":"core-2-5-mini","max_tokens":600,"messages":[{"role":"user","content":"Hi"}]}`
	if w := do(e.h, "POST", "/v1/chat/completions", key, body); w.Code != http.StatusTooManyRequests {
		t.Fatalf("overloaded: %d", w.Code)
	}
	e.eng.errBefore = nil
	w := do(e.h, "POST", "/v1/chat/completions", key, body)
	if w.Code != http.StatusOK || header(t, w, "X-Ratelimit-Remaining-Requests") != 8 ||
		header(t, w, "X-Ratelimit-Remaining-Output-Tokens") != 400 {
		t.Fatalf("%d, headers %v", w.Code, w.Header())
	}
}

// cancelEngine ends its request's context before yielding anything: a
// client gone before the engine started.
type cancelEngine struct {
	*fakeEngine
	cancel context.CancelFunc
}

func (c cancelEngine) Run(ctx context.Context, _ *inference.Prepared) iter.Seq2[inference.Event, error] {
	return func(yield func(inference.Event, error) bool) {
		c.cancel()
		yield(inference.Event{}, ctx.Err())
	}
}

// TestRateLimitGoneBeforeFirstToken: a client that leaves before the
// first token is charged its request and prompt, which the engine may
// have processed in full: leaving early is no way around the limits.
func TestRateLimitGoneBeforeFirstToken(t *testing.T) {
	tier := ratelimit.Tier{Name: "t", Requests: 10, InputTokens: 1000}
	for _, body := range []string{chatBody, streaming(chatBody)} {
		ctx, cancel := context.WithCancel(context.Background())
		e := limitedEnv(t, tier, func(cfg *httpapi.Config, f *fakeEngine) { cfg.Engine = cancelEngine{f, cancel} })
		req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body)).WithContext(ctx)
		req.Header.Set("Authorization", "Bearer "+key)
		e.h.ServeHTTP(httptest.NewRecorder(), req)
		w := do(e.h, "GET", "/v1/models", key, "")
		if header(t, w, "X-Ratelimit-Remaining-Requests") != 10-2 || header(t, w, "X-Ratelimit-Remaining-Input-Tokens") >= 1000 {
			t.Errorf("after a request left before its first token: %v, want it counted with its prompt", w.Header())
		}
	}
}

// TestRateLimitClientGoneMidStream: the reservation settles, once, with
// the tokens streamed before the client left, and the account is charged
// exactly their cost.
func TestRateLimitClientGoneMidStream(t *testing.T) {
	tier := ratelimit.Tier{Name: "t", Requests: 10, OutputTokens: 1_000, MaxMonthlySpend: ratelimit.Dollar}
	limiter := ratelimit.NewMemory()
	e := newEnv(t, func(cfg *httpapi.Config, f *fakeEngine) {
		f.block = true
		cfg.Limiter = limiter
		cfg.Keys = accountKeys{key: {KeyID: "key_a", Account: "acme", Tier: tier}}
	})
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	body := streaming(`{"model":"core-2-5-mini","max_tokens":600,"messages":[{"role":"user","content":"Hi"}]}`)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := res.Body.Read(buf); err != nil { // the stream has started
		t.Fatal(err)
	}
	engineCtx := <-e.eng.ctxs
	cancel()
	<-engineCtx.Done()
	res.Body.Close()
	// "Hello", " world": two tokens settle; poll until the handler has.
	deadline := time.Now().Add(5 * time.Second)
	for {
		w := do(e.h, "GET", "/v1/models", key, "")
		if header(t, w, "X-Ratelimit-Remaining-Output-Tokens") == 1_000-2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("remaining output tokens = %s, want 998", w.Header().Get("X-Ratelimit-Remaining-Output-Tokens"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Charged once: the prompt ("Hi", one token) and two output tokens at
	// 0.5 and 2 USD per million, nothing held.
	srv.Close() // waits for the handler to return
	u, err := limiter.Usage(context.Background(), "acme", e.clock.Now())
	want := ratelimit.MonthUsage{Month: "2026-01", Spent: 500 + 2*2_000, Requests: 1, InputTokens: 1, OutputTokens: 2}
	if err != nil || u != want {
		t.Errorf("usage after a client left mid-stream: %+v, %v; want %+v", u, err, want)
	}
}

// TestRateLimitConcurrent: racing requests over HTTP never get more than
// the limit admitted (run with -race).
func TestRateLimitConcurrent(t *testing.T) {
	e := limitedEnv(t, ratelimit.Tier{Name: "ten", Requests: 10}, nil)
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	var (
		wg            sync.WaitGroup
		mu            sync.Mutex
		codes         = map[int]int{}
		bodies, paths = []string{chatBody, messagesBody, responsesBody, ""}, []string{"/v1/chat/completions", "/v1/messages", "/v1/responses", "/v1/models"}
	)
	for i := range 40 {
		wg.Go(func() {
			method := "POST"
			if bodies[i%4] == "" {
				method = "GET"
			}
			req, _ := http.NewRequest(method, srv.URL+paths[i%4], strings.NewReader(bodies[i%4]))
			req.Header.Set("Authorization", "Bearer "+key)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			mu.Lock()
			codes[res.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[http.StatusOK] != 10 || codes[http.StatusTooManyRequests] != 30 {
		t.Fatalf("status counts %v, want 10 × 200 and 30 × 429", codes)
	}
}

// failingLimiter stands for a limiter whose backend is down.
type failingLimiter struct{ ratelimit.Limiter }

func (failingLimiter) Reserve(context.Context, ratelimit.Request, time.Time) (ratelimit.Reservation, error) {
	return ratelimit.Reservation{}, errors.New("redis: connection refused")
}

func TestRateLimiterDown(t *testing.T) {
	e := limitedEnv(t, policy.Default, func(cfg *httpapi.Config, _ *fakeEngine) { cfg.Limiter = failingLimiter{} })
	w := do(e.h, "POST", "/v1/chat/completions", key, chatBody)
	if w.Code != http.StatusInternalServerError || strings.Contains(w.Body.String(), "redis") {
		t.Fatalf("%d %s, want a 500 that leaks nothing", w.Code, w.Body)
	}
}

// probeEngine is the fake engine for chat and embeddings and the scoring
// engine for decisions, counting the calls that run a model.
type probeEngine struct {
	*fakeEngine
	score scoringEngine
	ran   atomic.Int64 // Run, RunEmbed and RunScore calls
}

func (p *probeEngine) Run(ctx context.Context, prep *inference.Prepared) iter.Seq2[inference.Event, error] {
	p.ran.Add(1)
	return p.fakeEngine.Run(ctx, prep)
}

func (p *probeEngine) RunEmbed(ctx context.Context, prep *inference.PreparedEmbed) (inference.EmbedResult, error) {
	p.ran.Add(1)
	return p.fakeEngine.RunEmbed(ctx, prep)
}

func (p *probeEngine) RunScore(ctx context.Context, prep *inference.PreparedScore) (inference.ScoreResult, error) {
	p.ran.Add(1)
	return p.score.RunScore(ctx, prep)
}

func (p *probeEngine) Tokenize(model, text string) ([]int, error) {
	return p.score.Tokenize(model, text)
}

func (p *probeEngine) RenderPrompt(req inference.Request) (string, error) {
	return p.score.RenderPrompt(req)
}

func (p *probeEngine) PrepareScore(req inference.ScoreRequest) (*inference.PreparedScore, error) {
	return p.score.PrepareScore(req)
}

// TestEngineRoutesCountTokens: every route that runs the engine (it
// generates, embeds or decides) is marked in the route table as counting
// tokens, so that its handler reserves them, and no other route is. A new
// route fails here until it has a probe request below.
func TestEngineRoutesCountTokens(t *testing.T) {
	probes := map[string]struct {
		path, body string
		runs       bool // the engine runs a model for it
	}{
		"POST /v1/web/chat/completions":  {"/v1/web/chat/completions", chatBody, true},
		"POST /v1/chat/completions":      {"/v1/chat/completions", chatBody, true},
		"POST /v1/completions":           {"/v1/completions", `{"model":"core-2-5-mini","prompt":["Hi","Ho"],"max_tokens":8}`, true},
		"POST /v1/messages":              {"/v1/messages", messagesBody, true},
		"POST /v1/messages/count_tokens": {"/v1/messages/count_tokens", messagesBody, false},
		"POST /v1/responses":             {"/v1/responses", responsesBody, true},
		"GET /v1/responses/{id}":         {"/v1/responses/resp_unknown", "", false},
		"DELETE /v1/responses/{id}":      {"/v1/responses/resp_unknown", "", false},
		"POST /v1/embeddings":            {"/v1/embeddings", `{"model":"embed","input":"hi"}`, true},
		"GET /v1/models":                 {"/v1/models", "", false},
		"GET /v1/models/{model_id}":      {"/v1/models/core-2-5-mini", "", false},
		"POST /v1/system":                {"/v1/system", strings.Replace(decisionBody, "system-one-340m", "judge", 1), true},
		"POST /v1/systemone":             {"/v1/systemone", strings.Replace(decisionBody, "system-one-340m", "judge", 1), true},
		"GET /v1/system/models":          {"/v1/system/models", "", false},
		"POST /v1/rerank":                {"/v1/rerank", `{"model":"judge","query":"Is it sunny?","documents":["The sky is blue.","Stocks fell."]}`, true},
	}
	var probe *probeEngine
	e := limitedEnv(t, policy.Tier2, func(cfg *httpapi.Config, f *fakeEngine) {
		withEmbeddings(cfg, f)
		probe = &probeEngine{fakeEngine: f}
		cfg.Engine = probe
	})
	routes := httpapi.RouteMeters(e.h)
	if len(routes) == 0 {
		t.Fatal("no routes")
	}
	for pattern, tokens := range routes {
		t.Run(pattern, func(t *testing.T) {
			p, ok := probes[pattern]
			if !ok {
				t.Fatalf("route %s has no probe request: add one to say whether it runs the engine", pattern)
			}
			method, _, _ := strings.Cut(pattern, " ")
			before := probe.ran.Load()
			w := do(e.h, method, p.path, key, p.body)
			ran := probe.ran.Load() != before
			if ran != p.runs {
				t.Fatalf("the engine ran: %v, want %v (%d %s)", ran, p.runs, w.Code, w.Body)
			}
			switch {
			case ran && !tokens:
				t.Errorf("%s runs the engine, but its route does not count tokens: mark it meterTokens", pattern)
			case !ran && tokens:
				t.Errorf("%s runs no engine, but its route counts tokens: its requests would never be counted", pattern)
			}
			if ran && header(t, w, "X-Ratelimit-Remaining-Input-Tokens") >= policy.Tier2.InputTokens {
				t.Errorf("%s ran the engine without reserving its input tokens: %v", pattern, w.Header())
			}
		})
	}
}

// accountKeys is a KeyStore whose keys have identities of their own,
// accounts included.
type accountKeys map[string]httpapi.Identity

func (k accountKeys) Authenticate(_ context.Context, secret string) (httpapi.Identity, error) {
	id, ok := k[secret]
	if !ok {
		return httpapi.Identity{}, httpapi.ErrInvalidKey
	}
	return id, nil
}

// smallRequests makes the fake engine count 5 prompt tokens and report
// using 5 and 2: a chat request with max_tokens 2 (smallChat) is then
// reserved at what it costs, 5 × 0.5 + 2 × 2 USD per million tokens of
// core-2-5-mini, 0.0000065 USD.
func smallRequests(f *fakeEngine) {
	f.tokens = 5
	f.result.Usage = inference.Usage{PromptTokens: 5, CompletionTokens: 2}
}

const (
	smallChat = `{"model":"core-2-5-mini","max_tokens":2,"messages":[{"role":"user","content":"Hi"}]}`
	smallCost = 6_500 * ratelimit.NanoDollar
)

// TestRateLimitAccountSpend: two keys of one account share its monthly
// spend and cap, each with its own per-minute window; the spend headers
// follow the account; at the cap, insufficient_quota says the cap, the
// spend and when the month turns.
func TestRateLimitAccountSpend(t *testing.T) {
	limiter := ratelimit.NewMemory()
	tier := ratelimit.Tier{Name: "capped", Requests: 100, MaxMonthlySpend: 3 * smallCost}
	e := newEnv(t, func(cfg *httpapi.Config, f *fakeEngine) {
		smallRequests(f)
		cfg.Limiter = limiter
		cfg.Keys = accountKeys{
			key:      {KeyID: "key_a", Account: "acme", Tier: tier},
			otherKey: {KeyID: "key_b", Account: "acme", Tier: tier},
		}
	})
	for i, k := range []string{key, otherKey, key} {
		w := do(e.h, "POST", "/v1/chat/completions", k, smallChat)
		if w.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i+1, w.Code, w.Body)
		}
		// The clock is 2026-01-01T00:00Z: the month turns in 31 days.
		want := map[string]string{
			"X-Ratelimit-Limit-Spend-Usd":     "0.0000195",
			"X-Ratelimit-Remaining-Spend-Usd": (3*smallCost - ratelimit.Money(i+1)*smallCost).String(),
			"X-Ratelimit-Reset-Spend":         "744h0m0s",
		}
		for name, v := range want {
			if got := w.Header().Get(name); got != v {
				t.Errorf("request %d: %s = %q, want %q", i+1, name, got, v)
			}
		}
		if i == 2 && header(t, w, "X-Ratelimit-Remaining-Requests") != 98 {
			t.Errorf("the first key's window counts the other key's request: %v", w.Header())
		}
	}
	e.clock.Advance(time.Hour)
	w := do(e.h, "POST", "/v1/chat/completions", otherKey, smallChat)
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("past the account's cap: %d %s", w.Code, w.Body)
	}
	typ, code, _, msg := errorOf(t, w.Body.Bytes())
	for _, part := range []string{"maximum monthly spend of 0.0000195 USD", "0.0000195 USD spent this month", "2026-02-01T00:00:00Z"} {
		if !strings.Contains(msg, part) {
			t.Errorf("message %q lacks %q", msg, part)
		}
	}
	if typ != "rate_limit_error" || code != "insufficient_quota" || w.Header().Get("Retry-After") != strconv.Itoa(31*24*3600-3600) {
		t.Errorf("type %q code %q Retry-After %q", typ, code, w.Header().Get("Retry-After"))
	}
	if w.Header().Get("X-Ratelimit-Remaining-Spend-Usd") != "0" || w.Header().Get("X-Ratelimit-Reset-Spend") != "743h0m0s" {
		t.Errorf("spend headers of the refusal: %v", w.Header())
	}
	u, err := limiter.Usage(context.Background(), "acme", e.clock.Now())
	want := ratelimit.MonthUsage{Month: "2026-01", Spent: 3 * smallCost, Requests: 3, InputTokens: 15, OutputTokens: 6}
	if err != nil || u != want {
		t.Errorf("usage of the account: %+v, %v; want %+v", u, err, want)
	}
	// A tier without a cap has no spend headers.
	if w := do(limitedEnv(t, ratelimit.Tier{Name: "t", Requests: 5}, nil).h, "POST", "/v1/chat/completions", key, chatBody); w.Header().Get("X-Ratelimit-Limit-Spend-Usd") != "" {
		t.Errorf("spend headers without a cap: %v", w.Header())
	}
}

// TestRateLimitUnlimited: a key on policy.Unlimited is never refused
// and gets no rate-limit headers, and its account's spend and usage still
// count.
func TestRateLimitUnlimited(t *testing.T) {
	limiter := ratelimit.NewMemory()
	e := newEnv(t, func(cfg *httpapi.Config, f *fakeEngine) {
		smallRequests(f)
		cfg.Limiter = limiter
		cfg.Keys = accountKeys{key: {KeyID: "key_local", Account: "local", Tier: policy.Unlimited}}
	})
	for i := range 50 {
		w := do(e.h, "POST", "/v1/chat/completions", key, smallChat)
		if w.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i+1, w.Code, w.Body)
		}
		for name := range w.Header() {
			if strings.HasPrefix(name, "X-Ratelimit") || name == "Retry-After" {
				t.Fatalf("request %d: header %s on an unlimited key", i+1, name)
			}
		}
	}
	u, err := limiter.Usage(context.Background(), "local", e.clock.Now())
	if err != nil || u.Spent != 50*smallCost || u.Requests != 50 || u.OutputTokens != 100 {
		t.Errorf("usage of an unlimited account: %+v, %v; want 50 requests at 0.0000065", u, err)
	}
}

// TestCachedInputDiscount: cached prompt tokens cost the catalog's
// input_cache_reads price, or half the input price without one.
func TestCachedInputDiscount(t *testing.T) {
	for _, c := range []struct {
		name       string
		cacheReads string
		cached     int
		want       ratelimit.Money // 40 or 100 input, 60 or 0 cached, 2 output tokens
	}{
		{"no cached tokens", "", 0, 100*500 + 2*2_000},
		{"half the input price", "", 60, 40*500 + 60*250 + 2*2_000},
		{"the catalog's price", "0.0000001", 60, 40*500 + 60*100 + 2*2_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			limiter := ratelimit.NewMemory()
			e := newEnv(t, func(cfg *httpapi.Config, f *fakeEngine) {
				f.result.Usage = inference.Usage{PromptTokens: 100, CachedTokens: c.cached, CompletionTokens: 2}
				cfg.Models[0].Pricing.InputCacheReads = c.cacheReads // core-2-5-mini: 0.5 and 2 USD per million
				cfg.Limiter = limiter
				cfg.Keys = accountKeys{key: {KeyID: "key_a", Tier: policy.Default}}
			})
			if w := do(e.h, "POST", "/v1/chat/completions", key, chatBody); w.Code != http.StatusOK {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			u, err := limiter.Usage(context.Background(), "key_a", e.clock.Now())
			if err != nil || u.Spent != c.want || u.CachedInputTokens != int64(c.cached) {
				t.Errorf("usage %+v, %v; want %s USD spent", u, err, c.want)
			}
		})
	}
}

// flakyLimiter fails the first fails Settle calls, as a limiter whose
// backend blinks, and counts the calls and keeps the last reservation.
type flakyLimiter struct {
	ratelimit.Limiter
	fails   int64
	settles atomic.Int64
	mu      sync.Mutex
	res     ratelimit.Reservation
}

func (l *flakyLimiter) Settle(ctx context.Context, res ratelimit.Reservation, used ratelimit.Usage) error {
	l.mu.Lock()
	l.res = res
	l.mu.Unlock()
	if l.settles.Add(1) <= l.fails {
		return errors.New("redis: connection reset by peer")
	}
	return l.Limiter.Settle(ctx, res, used)
}

// TestRateLimitSettleRetries: a Settle that fails briefly is retried, so
// the request's reserved cost does not stay charged for the month; one
// that keeps failing is given up within the settle budget.
func TestRateLimitSettleRetries(t *testing.T) {
	body := `{"model":"core-2-5-mini","max_tokens":600,"messages":[{"role":"user","content":"Hi"}]}`
	for _, c := range []struct {
		name    string
		fails   int64
		settles int64
		held    bool
	}{
		{"once", 0, 1, false},
		{"blink", 2, 3, false},
		{"down", 100, 4, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			flaky := &flakyLimiter{Limiter: ratelimit.NewMemory(), fails: c.fails}
			e := limitedEnv(t, policy.Default, func(cfg *httpapi.Config, _ *fakeEngine) { cfg.Limiter = flaky })
			start := time.Now()
			if w := do(e.h, "POST", "/v1/chat/completions", key, body); w.Code != http.StatusOK {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the request took %s, past the settle budget", d)
			}
			if got := flaky.settles.Load(); got != c.settles {
				t.Errorf("%d calls of Settle, want %d", got, c.settles)
			}
			u, err := flaky.Usage(context.Background(), flaky.res.Account, flaky.res.At)
			if err != nil {
				t.Fatal(err)
			}
			if held := u.Held != 0; held != c.held || u.Spent == 0 {
				t.Errorf("usage %+v: reserved cost held %v, want %v", u, held, c.held)
			}
		})
	}
}
