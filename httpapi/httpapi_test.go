package httpapi_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
)

// routes are every route with a request that succeeds on it, its error
// style and the status of success.
var routes = []struct {
	method, path, body string
	style              formats.Style
	ok                 int
}{
	{"POST", "/v1/web/chat/completions", chatBody, formats.StyleChat, 200},
	{"POST", "/v1/chat/completions", chatBody, formats.StyleChat, 200},
	{"POST", "/v1/messages", messagesBody, formats.StyleMessages, 200},
	{"POST", "/v1/responses", responsesBody, formats.StyleResponses, 200},
	{"GET", "/v1/responses/resp_unknown", "", formats.StyleResponses, 404},
	{"DELETE", "/v1/responses/resp_unknown", "", formats.StyleResponses, 404},
	{"GET", "/v1/models", "", formats.StyleModels, 200},
	{"GET", "/v1/models/core-2-5-mini", "", formats.StyleModels, 200},
}

func TestAuth(t *testing.T) {
	e := newEnv(t, nil)
	for _, rt := range routes {
		for _, tc := range []struct {
			name   string
			header string // Authorization, or x-api-key when prefixed so
			status int
		}{
			{"missing", "", 401},
			{"wrong", "Bearer " + wrongKey, 401},
			{"not bearer", "Basic " + key, 401},
			{"empty bearer", "Bearer ", 401},
			{"right", "Bearer " + key, rt.ok},
			{"right lowercase scheme", "bearer " + key, rt.ok},
			{"other key", "Bearer " + otherKey, rt.ok},
			{"x-api-key", "x-api-key:" + key, rt.ok},
			{"wrong x-api-key", "x-api-key:" + wrongKey, 401},
		} {
			t.Run(rt.method+" "+rt.path+"/"+tc.name, func(t *testing.T) {
				req := httptest.NewRequest(rt.method, rt.path, strings.NewReader(rt.body))
				if k, ok := strings.CutPrefix(tc.header, "x-api-key:"); ok {
					req.Header.Set("x-api-key", k)
				} else if tc.header != "" {
					req.Header.Set("Authorization", tc.header)
				}
				w := httptest.NewRecorder()
				e.h.ServeHTTP(w, req)
				if w.Code != tc.status {
					t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
				}
				if tc.status != 401 {
					return
				}
				typ, code, _, _ := errorOf(t, w.Body.Bytes())
				if rt.style == formats.StyleMessages {
					if typ != "authentication_error" {
						t.Errorf("messages 401 type %q: %s", typ, w.Body)
					}
				} else if typ != "invalid_request_error" || code != "invalid_api_key" {
					t.Errorf("401 type %q code %q: %s", typ, code, w.Body)
				}
			})
		}
	}
	logs := e.logs.String()
	for _, k := range []string{key, otherKey, wrongKey, "sk-test"} {
		if strings.Contains(logs, k) {
			t.Errorf("the logs hold the key %q:\n%s", k, logs)
		}
	}
	if !strings.Contains(logs, "key_id=key_") || !strings.Contains(logs, "invalid API key") {
		t.Errorf("the logs do not name the keys by id, or say nothing of invalid keys:\n%s", logs)
	}
}

func TestBadRequest(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		path, body, param string
	}{
		{"/v1/chat/completions", `{"model":"core-2-5-mini","messages":[{"role":"user","content":"Hi"}],"temperature":3}`, "temperature"},
		{"/v1/web/chat/completions", `{"model":"core-2-5-mini","messages":[{"role":"robot","content":"Hi"}]}`, "messages[0].role"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"Hi"}]}`, "model"},
		{"/v1/messages", `{"model":"core-2-5-mini","messages":[{"role":"user","content":"Hi"}],"top_p":2}`, "top_p"},
		{"/v1/messages", `{"model":"core-2-5-mini","max_tokens":0,"messages":[{"role":"user","content":"Hi"}]}`, "max_tokens"},
		{"/v1/responses", `{"model":"core-2-5-mini","input":"Hi","temperature":-1}`, "temperature"},
		{"/v1/responses", `{"model":"core-2-5-mini"}`, "input"},
		{"/v1/responses", `{"model":"core-2-5-mini","input":"Hi","metadata":{"k":5}}`, "metadata.k"},
		{"/v1/chat/completions", `{"model":`, ""},
		{"/v1/messages", `not json`, ""},
		{"/v1/responses", ``, ""},
	} {
		t.Run(tc.path+" "+tc.param, func(t *testing.T) {
			w := do(e.h, "POST", tc.path, key, tc.body)
			if w.Code != 400 {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			typ, _, param, msg := errorOf(t, w.Body.Bytes())
			if typ != "invalid_request_error" {
				t.Errorf("type %q", typ)
			}
			if strings.HasPrefix(tc.path, "/v1/messages") {
				if tc.param != "" && !strings.Contains(msg, tc.param) {
					t.Errorf("message %q does not name %s", msg, tc.param)
				}
			} else if param != tc.param {
				t.Errorf("param %q, want %q: %s", param, tc.param, w.Body)
			}
		})
	}
	if n := e.eng.calls(); n != 0 {
		t.Errorf("the engine ran %d invalid requests", n)
	}
}

func TestUnknownModel(t *testing.T) {
	e := newEnv(t, nil)
	for _, model := range []string{"nope", "uncatalogued", "judge"} {
		for _, tc := range []struct{ path, body string }{
			{"/v1/chat/completions", chatBody},
			{"/v1/web/chat/completions", streaming(chatBody)},
			{"/v1/messages", messagesBody},
			{"/v1/messages", streaming(messagesBody)},
			{"/v1/responses", responsesBody},
			{"/v1/responses", streaming(responsesBody)},
		} {
			body := withModel(tc.body, model)
			t.Run(model+" "+body, func(t *testing.T) {
				w := do(e.h, "POST", tc.path, key, body)
				if w.Code != 400 || w.Header().Get("Content-Type") != "application/json" {
					t.Fatalf("status %d %s: %s", w.Code, w.Header().Get("Content-Type"), w.Body)
				}
				typ, code, param, msg := errorOf(t, w.Body.Bytes())
				if typ != "invalid_request_error" || !strings.Contains(msg, model) {
					t.Errorf("type %q message %q", typ, msg)
				}
				if tc.path != "/v1/messages" && (code != "model_not_found" || param != "model") {
					t.Errorf("code %q param %q", code, param)
				}
			})
		}
		w := do(e.h, "GET", "/v1/models/"+model, key, "")
		if typ, code, _, _ := errorOf(t, w.Body.Bytes()); w.Code != 404 || typ != "invalid_request_error" || code != "model_not_found" {
			t.Errorf("GET /v1/models/%s: %d %s", model, w.Code, w.Body)
		}
	}
	if n := e.eng.calls(); n != 0 {
		t.Errorf("the engine ran %d requests for unknown models", n)
	}
	// An alias is served, and the response names the model as asked.
	w := do(e.h, "POST", "/v1/chat/completions", key, withModel(chatBody, "mini"))
	if w.Code != 200 || decode(t, w.Body.Bytes())["model"] != "mini" || e.eng.lastRequest(t).Model != "mini" {
		t.Errorf("alias: %d %s", w.Code, w.Body)
	}
}

func TestBodyTooLarge(t *testing.T) {
	e := newEnv(t, func(c *httpapi.Config, _ *fakeEngine) { c.MaxBodyBytes = 256 })
	pad := strings.Repeat("x", 300)
	for _, tc := range []struct{ path, body, typ string }{
		{"/v1/chat/completions", `{"model":"core-2-5-mini","messages":[{"role":"user","content":"` + pad + `"}]}`, "invalid_request_error"},
		{"/v1/messages", `{"model":"core-2-5-mini","messages":[{"role":"user","content":"` + pad + `"}]}`, "request_too_large"},
		{"/v1/responses", `{"model":"core-2-5-mini","input":"` + pad + `"}`, "invalid_request_error"},
	} {
		w := do(e.h, "POST", tc.path, key, tc.body)
		typ, code, _, _ := errorOf(t, w.Body.Bytes())
		if w.Code != 413 || typ != tc.typ || (tc.path != "/v1/messages" && code != "request_too_large") {
			t.Errorf("%s: %d %s", tc.path, w.Code, w.Body)
		}
	}
	// Under the limit is fine.
	if w := do(e.h, "POST", "/v1/chat/completions", key, chatBody); w.Code != 200 {
		t.Errorf("small body: %d %s", w.Code, w.Body)
	}
}

func TestNonStreaming(t *testing.T) {
	e := newEnv(t, nil)
	w := do(e.h, "POST", "/v1/chat/completions", key, chatBody)
	c := decode(t, w.Body.Bytes())
	if w.Code != 200 || c["object"] != "chat.completion" || !strings.Contains(w.Body.String(), `"content":"Hello world"`) ||
		!strings.Contains(w.Body.String(), `"total_tokens":7`) {
		t.Errorf("chat: %d %s", w.Code, w.Body)
	}
	w = do(e.h, "POST", "/v1/messages", key, messagesBody)
	if m := decode(t, w.Body.Bytes()); w.Code != 200 || m["type"] != "message" || m["stop_reason"] != "end_turn" {
		t.Errorf("messages: %d %s", w.Code, w.Body)
	}
	w = do(e.h, "POST", "/v1/responses", key, responsesBody)
	if r := decode(t, w.Body.Bytes()); w.Code != 200 || r["status"] != "completed" || r["output_text"] != "Hello world" {
		t.Errorf("responses: %d %s", w.Code, w.Body)
	}
	if c["created"] != float64(e.clock.Now().Unix()) {
		t.Errorf("created %v does not come from the clock", c["created"])
	}
}

// TestEngineRequest checks what the engine gets: the styles' sampling
// values, the instructions as a system message, and the styles' default
// output limits as caps the engine lowers to fit, while a caller's limit
// is kept as asked.
func TestEngineRequest(t *testing.T) {
	e := newEnv(t, func(_ *httpapi.Config, f *fakeEngine) { f.models[0].ContextLength = 1024 })
	do(e.h, "POST", "/v1/chat/completions", key, chatBody) // default 2048 new tokens
	if r := e.eng.lastRequest(t); r.MaxTokens != 2048 || !r.ClampMaxTokens || *r.Temperature != 0.1 {
		t.Errorf("chat default: MaxTokens %d clamp %v, temperature %v", r.MaxTokens, r.ClampMaxTokens, *r.Temperature)
	}
	do(e.h, "POST", "/v1/chat/completions", key, `{"model":"core-2-5-mini","max_tokens":100,"messages":[{"role":"user","content":"Hi"}]}`)
	if r := e.eng.lastRequest(t); r.MaxTokens != 100 || r.ClampMaxTokens {
		t.Errorf("chat max_tokens 100: MaxTokens %d clamp %v", r.MaxTokens, r.ClampMaxTokens)
	}
	do(e.h, "POST", "/v1/messages", key, `{"model":"core-2-5-mini","system":"Be brief.","messages":[{"role":"user","content":"Hi"}]}`)
	if r := e.eng.lastRequest(t); r.MaxTokens != 512 || !r.ClampMaxTokens || len(r.Messages) != 2 || r.Messages[0].Role != inference.RoleSystem ||
		r.Messages[0].Content[0].Text != "Be brief." {
		t.Errorf("messages: %+v", r)
	}
}

func TestStreaming(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		path, body string
		want       []string
		last       string
	}{
		{"/v1/chat/completions", streaming(chatBody), []string{`"content":"Hello"`, `"content":" world"`, `"finish_reason":"stop"`}, "data: [DONE]"},
		{"/v1/web/chat/completions", strings.Replace(streaming(chatBody), `{`, `{"stream_options":{"include_usage":true},`, 1),
			[]string{`"choices":[],"usage":{"prompt_tokens":5`}, "data: [DONE]"},
		{"/v1/messages", streaming(messagesBody), []string{"event: message_start", `"text":"Hello"`, "event: message_stop"}, "event: ping\ndata: [DONE]"},
		{"/v1/responses", streaming(responsesBody), []string{"event: response.created", `"delta":" world"`, "event: response.completed"}, "data: [DONE]"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			w := do(e.h, "POST", tc.path, key, tc.body)
			if w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream" || w.Header().Get("Cache-Control") != "no-cache" {
				t.Fatalf("status %d, headers %v", w.Code, w.Header())
			}
			if !w.Flushed {
				t.Error("the stream was not flushed")
			}
			body := w.Body.String()
			for _, s := range tc.want {
				if !strings.Contains(body, s) {
					t.Errorf("stream lacks %s:\n%s", s, body)
				}
			}
			if !strings.Contains(lastEvent(body), tc.last) {
				t.Errorf("last event %q, want %s", lastEvent(body), tc.last)
			}
		})
	}
}

// lastEvent returns the last event of an SSE body.
func lastEvent(body string) string {
	events := strings.Split(strings.TrimSpace(body), "\n\n")
	return events[len(events)-1]
}

// finalEvent returns the last event of an SSE body before its [DONE].
func finalEvent(body string) string {
	events := strings.Split(strings.TrimSpace(body), "\n\n")
	if len(events) > 1 && events[len(events)-1] == "data: [DONE]" {
		return events[len(events)-2]
	}
	return events[len(events)-1]
}

func TestStreamErrors(t *testing.T) {
	type tc struct {
		path, body string
		want       string
	}
	cases := []tc{
		{"/v1/chat/completions", streaming(chatBody), `data: {"error":{"message":"the server had an error while processing the request","type":"api_error","param":null,"code":"server_error"}}`},
		{"/v1/messages", streaming(messagesBody), "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"the server had an error while processing the request\",\"error\":{\"type\":\"api_error\""},
		{"/v1/responses", streaming(responsesBody), "event: response.failed\ndata: {\"type\":\"response.failed\""},
	}
	t.Run("after headers", func(t *testing.T) {
		e := newEnv(t, func(_ *httpapi.Config, f *fakeEngine) { f.errAfter = errors.New("boom: secret detail") })
		for _, c := range cases {
			w := do(e.h, "POST", c.path, key, c.body)
			body := w.Body.String()
			if w.Code != 200 || !strings.Contains(body, "Hello") || !strings.HasPrefix(lastEvent(body), c.want) {
				t.Errorf("%s: %d, last event %q\n%s", c.path, w.Code, lastEvent(body), body)
			}
			if strings.Contains(body, "[DONE]") || strings.Contains(body, "secret detail") {
				t.Errorf("%s: the failed stream has [DONE] or leaks the cause:\n%s", c.path, body)
			}
			if c.path == "/v1/responses" && !strings.Contains(lastEvent(body), `"status":"failed"`) {
				t.Errorf("response.failed without status failed: %s", lastEvent(body))
			}
		}
		if logs := e.logs.String(); !strings.Contains(logs, "secret detail") || !strings.Contains(logs, "level=ERROR") {
			t.Errorf("the server error's cause is not logged:\n%s", logs)
		}
	})
	t.Run("before headers", func(t *testing.T) {
		e := newEnv(t, func(_ *httpapi.Config, f *fakeEngine) {
			f.errBefore = fmt.Errorf("queue: %w", inference.ErrOverloaded)
		})
		for _, c := range cases {
			w := do(e.h, "POST", c.path, key, c.body)
			typ, _, _, _ := errorOf(t, w.Body.Bytes())
			want := "rate_limit_error"
			if c.path == "/v1/messages" {
				want = "overloaded_error"
			}
			if w.Code != 429 || w.Header().Get("Retry-After") != "1" || typ != want || w.Header().Get("Content-Type") != "application/json" {
				t.Errorf("%s: %d %v %s", c.path, w.Code, w.Header(), w.Body)
			}
		}
		// Blocking requests likewise.
		w := do(e.h, "POST", "/v1/chat/completions", key, chatBody)
		if w.Code != 429 {
			t.Errorf("blocking: %d %s", w.Code, w.Body)
		}
	})
	t.Run("context length", func(t *testing.T) {
		e := newEnv(t, func(_ *httpapi.Config, f *fakeEngine) { f.errBefore = inference.ErrContextLength })
		w := do(e.h, "POST", "/v1/responses", key, responsesBody)
		if _, code, _, _ := errorOf(t, w.Body.Bytes()); w.Code != 400 || code != "context_length_exceeded" {
			t.Errorf("%d %s", w.Code, w.Body)
		}
	})
}

func TestMounting(t *testing.T) {
	e := newEnv(t, nil)
	t.Run("separately", func(t *testing.T) {
		base, api := http.NewServeMux(), http.NewServeMux()
		e.h.RegisterGeneration(base)
		e.h.RegisterModels(api)
		for _, tc := range []struct {
			mux          *http.ServeMux
			method, path string
			body         string
			status       int
		}{
			{base, "POST", "/v1/chat/completions", chatBody, 200},
			{base, "POST", "/v1/messages", messagesBody, 200},
			{base, "POST", "/v1/responses", responsesBody, 200},
			{base, "GET", "/v1/models", "", 404},
			{api, "GET", "/v1/models", "", 200},
			{api, "GET", "/v1/models/mini", "", 200},
			{api, "POST", "/v1/chat/completions", chatBody, 404},
			{api, "POST", "/v1/responses", responsesBody, 404},
		} {
			if w := do(tc.mux, tc.method, tc.path, key, tc.body); w.Code != tc.status {
				t.Errorf("%s %s: %d, want %d", tc.method, tc.path, w.Code, tc.status)
			}
		}
		// Auth holds on a caller's mux too.
		if w := do(api, "GET", "/v1/models", "", ""); w.Code != 401 {
			t.Errorf("no key on a caller's mux: %d", w.Code)
		}
	})
	t.Run("under a prefix", func(t *testing.T) {
		mux := http.NewServeMux()
		mux.Handle("/llm/", http.StripPrefix("/llm", e.h))
		mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
		srv := httptest.NewServer(mux)
		defer srv.Close()
		for _, tc := range []struct {
			method, path, body string
			status             int
		}{
			{"POST", "/llm/v1/chat/completions", chatBody, 200},
			{"GET", "/llm/v1/models/core-2-5-pro", "", 200},
			{"GET", "/llm/v1/responses/resp_x", "", 404},
			{"GET", "/v1/models", "", 404},
			{"GET", "/health", "", 200},
			{"GET", "/llm/v1/chat/completions", "", 405},
		} {
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer "+key)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Errorf("%s %s: %d, want %d", tc.method, tc.path, res.StatusCode, tc.status)
			}
		}
	})
}

func TestModels(t *testing.T) {
	e := newEnv(t, nil)
	w := do(e.h, "GET", "/v1/models", key, "")
	var list formats.ModelList
	if err := jsonUnmarshal(w.Body.Bytes(), &list); err != nil || w.Code != 200 || list.Object != "list" {
		t.Fatalf("%d %v %s", w.Code, err, w.Body)
	}
	if len(list.Data) != 2 || list.Data[0].ID != "core-2-5-mini" || list.Data[1].ID != "core-2-5-pro" {
		t.Fatalf("listed %+v", list.Data)
	}
	// The engine's 4096 tokens bound core-2-5-mini's 1,000,000; the
	// catalog's 1024 bound core-2-5-pro's engine context.
	if mini, pro := list.Data[0], list.Data[1]; mini.ContextLength != 4096 || mini.MaxOutputLength != 4096 ||
		pro.ContextLength != 1024 || pro.Object != "model" || pro.Pricing.Prompt != "0.000002" {
		t.Errorf("objects %+v", list.Data)
	}
	w = do(e.h, "GET", "/v1/models/mini", key, "")
	var o catalog.Object
	if err := jsonUnmarshal(w.Body.Bytes(), &o); err != nil || w.Code != 200 || o.ID != "core-2-5-mini" || o.ContextLength != 4096 {
		t.Errorf("by alias: %d %s", w.Code, w.Body)
	}

	// With no catalog, the engine's models are listed bare.
	e = newEnv(t, func(c *httpapi.Config, _ *fakeEngine) { c.Models = nil })
	w = do(e.h, "GET", "/v1/models", key, "")
	if err := jsonUnmarshal(w.Body.Bytes(), &list); err != nil || len(list.Data) != 4 || list.Data[3].ID != "judge" || list.Data[3].ContextLength != 512 {
		t.Errorf("engine models: %s", w.Body)
	}
}

func TestNew(t *testing.T) {
	keys, _ := httpapi.NewStaticKeys(key)
	for _, tc := range []struct {
		name string
		cfg  httpapi.Config
		want string
	}{
		{"no engine", httpapi.Config{Keys: keys}, "Engine"},
		{"no keys", httpapi.Config{Engine: newFake()}, "Keys"},
		{"negative limit", httpapi.Config{Engine: newFake(), Keys: keys, MaxBodyBytes: -1}, "MaxBodyBytes"},
		{"not served", httpapi.Config{Engine: newFake(), Keys: keys, Models: []catalog.Model{{ID: "x", Path: "/x.gguf"}}}, "not served"},
		{"duplicate", httpapi.Config{Engine: newFake(), Keys: keys, Models: []catalog.Model{{ID: "judge", Path: "/a"}, {ID: "judge", Path: "/b"}}}, "twice"},
		{"nil middleware", httpapi.Config{Engine: newFake(), Keys: keys, Middleware: []func(http.Handler) http.Handler{nil}}, "Middleware"},
	} {
		if _, err := httpapi.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	for _, keys := range [][]string{nil, {""}, {key, " "}} {
		if _, err := httpapi.NewStaticKeys(keys...); err == nil {
			t.Errorf("NewStaticKeys(%q) accepted", keys)
		}
	}
}

func TestMiddleware(t *testing.T) {
	var order []string
	var seen []string
	var other string // otherKey's id
	limit := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, ok := httpapi.IdentityFrom(r.Context())
			if !ok {
				t.Error("no identity in the middleware's context")
			}
			seen = append(seen, id.KeyID)
			if id.KeyID == other {
				httpapi.WriteError(w, r, formats.RateLimited(30*time.Second, "slow down"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	tag := func(name string) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				order = append(order, name)
				next.ServeHTTP(w, r)
			})
		}
	}
	e := newEnv(t, func(c *httpapi.Config, _ *fakeEngine) {
		c.Middleware = []func(http.Handler) http.Handler{tag("outer"), limit, tag("inner")}
	})
	other = keyID(t, e, otherKey)
	if w := do(e.h, "POST", "/v1/chat/completions", key, chatBody); w.Code != 200 {
		t.Errorf("%d %s", w.Code, w.Body)
	}
	if strings.Join(order, ",") != "outer,inner" {
		t.Errorf("middleware order %v", order)
	}
	w := do(e.h, "POST", "/v1/messages", otherKey, messagesBody)
	if typ, _, _, msg := errorOf(t, w.Body.Bytes()); w.Code != 429 || typ != "rate_limit_error" || msg != "slow down" || w.Header().Get("Retry-After") != "30" {
		t.Errorf("rate limited: %d %v %s", w.Code, w.Header(), w.Body)
	}
	w = do(e.h, "GET", "/v1/models", otherKey, "")
	if _, code, _, _ := errorOf(t, w.Body.Bytes()); w.Code != 429 || code != "rate_limit_exceeded" {
		t.Errorf("rate limited models: %d %s", w.Code, w.Body)
	}
	// Unauthenticated requests never reach the middleware.
	n := len(seen)
	do(e.h, "GET", "/v1/models", wrongKey, "")
	if len(seen) != n {
		t.Error("the middleware ran for a request without a valid key")
	}
}

// keyID returns the KeyID of k in e's key store.
func keyID(t *testing.T, e *env, k string) string {
	t.Helper()
	id, err := e.keys.Authenticate(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	return id.KeyID
}

func TestStaticKeys(t *testing.T) {
	keys, _ := httpapi.NewStaticKeys(key, otherKey)
	a, err1 := keys.Authenticate(context.Background(), key)
	b, err2 := keys.Authenticate(context.Background(), otherKey)
	_, err3 := keys.Authenticate(context.Background(), wrongKey)
	if err1 != nil || err2 != nil || !errors.Is(err3, httpapi.ErrInvalidKey) {
		t.Fatal(err1, err2, err3)
	}
	if a.KeyID == b.KeyID || !strings.HasPrefix(a.KeyID, "key_") || len(a.KeyID) != 20 || strings.Contains(a.KeyID, key) {
		t.Errorf("ids %q %q", a.KeyID, b.KeyID)
	}
	// The id is stable within the store, and derives from a secret of
	// the store: another store gives the same key another id.
	if c, _ := keys.Authenticate(context.Background(), key); c != a {
		t.Errorf("id %q then %q", a.KeyID, c.KeyID)
	}
	again, _ := httpapi.NewStaticKeys(key)
	if c, _ := again.Authenticate(context.Background(), key); c.KeyID == a.KeyID || !strings.HasPrefix(c.KeyID, "key_") {
		t.Errorf("two stores give %q the ids %q and %q: they derive from no secret", key, a.KeyID, c.KeyID)
	}
	// Nor is it the unsalted SHA-256 of the key.
	sum := sha256.Sum256([]byte(key))
	if a.KeyID == "key_"+hex.EncodeToString(sum[:8]) {
		t.Errorf("id %q is the key's plain SHA-256", a.KeyID)
	}
}

// TestClientDisconnect checks that a client going away cancels the
// context the engine runs under, streaming or not.
func TestClientDisconnect(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			e := newEnv(t, func(_ *httpapi.Config, f *fakeEngine) { f.block = true })
			srv := httptest.NewServer(e.h)
			defer srv.Close()
			body := chatBody
			if stream {
				body = streaming(body)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/chat/completions", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			done := make(chan error, 1)
			go func() {
				res, err := http.DefaultClient.Do(req)
				if err == nil {
					// The stream's first chunks arrive before the engine
					// blocks.
					_, err = bufio.NewReader(res.Body).ReadString('\n')
					if err == nil {
						cancel()
					}
					res.Body.Close()
				}
				done <- err
			}()
			var engineCtx context.Context
			select {
			case engineCtx = <-e.eng.ctxs:
			case <-time.After(10 * time.Second):
				t.Fatal("the engine got no request")
			}
			if !stream {
				cancel()
			}
			select {
			case <-engineCtx.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the engine's context was not cancelled when the client went away")
			}
			if err := <-done; stream && err != nil {
				t.Errorf("client: %v", err)
			}
		})
	}
}
