package inference_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/search"
)

// fakeUpstream is an OpenAI-compatible server whose answer to each chat
// completion a test sets: the SSE chunks it streams, or an error status.
type fakeUpstream struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	// answer writes the response to a request.
	answer func(w http.ResponseWriter, body map[string]any)
}

func newFakeUpstream(t *testing.T, answer func(w http.ResponseWriter, body map[string]any)) *fakeUpstream {
	f := &fakeUpstream{answer: answer}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer upkey" {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/v1/models":
			io.WriteString(w, `{"object":"list","data":[{"id":"up-model","object":"model"}]}`)
		case "/v1/chat/completions":
			var body map[string]any
			json.NewDecoder(r.Body).Decode(&body)
			f.mu.Lock()
			f.bodies = append(f.bodies, body)
			f.mu.Unlock()
			f.answer(w, body)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// last is the body of the last chat request.
func (f *fakeUpstream) last() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[len(f.bodies)-1]
}

// sse writes chunks as an event stream, then [DONE].
func sse(w http.ResponseWriter, chunks ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range chunks {
		fmt.Fprintf(w, "data: %s\n\n", c)
		w.(http.Flusher).Flush()
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

func remoteEngine(t *testing.T, urls ...string) *inference.Engine {
	t.Helper()
	eng, err := inference.New(inference.Config{
		Models: []catalog.Model{{ID: "gw", Remote: &catalog.Remote{URLs: urls, Model: "up-model", Key: "upkey", ContextLength: 1000}}},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

func TestRemoteStream(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, body map[string]any) {
		sse(w,
			`{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"hmm "}}]}`,
			`{"choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":{"content":[{"token":"Hello","logprob":-0.5,"top_logprobs":[{"token":"Hello","logprob":-0.5},{"token":"Hi","logprob":-1.2}]}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":31,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":16},"completion_tokens_details":{"reasoning_tokens":2}}}`)
	})
	eng := remoteEngine(t, up.URL+"/v1")
	temp, seed := 0.0, int64(7)
	req := inference.Request{Model: "gw", Temperature: &temp, Seed: &seed, MaxTokens: 50, Stop: []string{"END"},
		Logprobs: true, TopLogprobs: 2, Effort: "low",
		Messages:   []inference.Message{inference.Text(inference.RoleSystem, "Be brief."), inference.Text(inference.RoleUser, "Weather in "+inference.Literal("<|im_start|>Paris")+"?")},
		Tools:      []inference.Tool{{Name: "weather", Description: "Gets the weather.", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
		ToolChoice: inference.ToolChoice{Mode: inference.ToolRequired, Single: true},
		Format:     &inference.Format{Schema: []byte(`{"type":"object"}`)},
	}
	p, err := eng.Prepare(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if p.InputTokens <= 0 || p.MaxOutputTokens != 50 {
		t.Fatalf("prepared %d inputs, %d outputs", p.InputTokens, p.MaxOutputTokens)
	}
	var text, reasoning strings.Builder
	var final *inference.Result
	var calls []inference.ToolCall
	for ev, err := range eng.Run(context.Background(), p) {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(ev.Text)
		reasoning.WriteString(ev.Reasoning)
		calls = append(calls, ev.ToolCalls...)
		if ev.Final != nil {
			final = ev.Final
		}
	}
	if final == nil || final.Text != "Hello" || text.String() != "Hello" || reasoning.String() != "hmm " || final.Reasoning != "hmm " {
		t.Fatalf("text %q reasoning %q, final %+v", text.String(), reasoning.String(), final)
	}
	if len(calls) != 1 || calls[0].ID != "call_1" || calls[0].Name != "weather" || calls[0].Arguments != `{"city":"Paris"}` {
		t.Fatalf("calls %+v", calls)
	}
	if final.FinishReason != inference.FinishToolCalls || len(final.ToolCalls) != 1 {
		t.Fatalf("finish %q, calls %+v", final.FinishReason, final.ToolCalls)
	}
	want := inference.Usage{PromptTokens: 31, CompletionTokens: 9, CachedTokens: 16, ReasoningTokens: 2}
	if final.Usage != want {
		t.Fatalf("usage %+v, want %+v", final.Usage, want)
	}
	if len(final.Logprobs) != 1 || final.Logprobs[0].Logprob != -0.5 || len(final.Logprobs[0].Top) != 2 || string(final.Logprobs[0].Top[1].Bytes) != "Hi" {
		t.Fatalf("logprobs %+v", final.Logprobs)
	}

	// What went upstream: every field the request set, the text as data.
	body := up.last()
	wantBody := map[string]any{"model": "up-model", "temperature": 0.0, "seed": 7.0, "max_tokens": 50.0, "stop": []any{"END"},
		"logprobs": true, "top_logprobs": 2.0, "reasoning_effort": "low", "tool_choice": "required", "parallel_tool_calls": false, "stream": true}
	for k, v := range wantBody {
		if fmt.Sprint(body[k]) != fmt.Sprint(v) {
			t.Errorf("upstream %s = %v, want %v", k, body[k], v)
		}
	}
	msgs := body["messages"].([]any)
	if got := msgs[1].(map[string]any)["content"]; got != "Weather in <|im_start|>Paris?" {
		t.Errorf("user content upstream %q", got)
	}
	if rf := body["response_format"].(map[string]any); rf["type"] != "json_schema" {
		t.Errorf("response_format %v", rf)
	}
	if tools := body["tools"].([]any); len(tools) != 1 {
		t.Errorf("tools %v", tools)
	}
}

func TestRemoteRefusesByName(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, body map[string]any) { sse(w) })
	eng := remoteEngine(t, up.URL+"/v1")
	user := []inference.Message{inference.Text(inference.RoleUser, "hi")}
	yes := true
	for _, c := range []struct {
		name  string
		req   inference.Request
		field string
	}{
		{"raw prompt", inference.Request{Prompt: "hi"}, "Prompt"},
		{"grammar", inference.Request{Messages: user, Format: &inference.Format{Grammar: `root ::= "a"`}}, "Format.Grammar"},
		{"thinking budget", inference.Request{Messages: user, ThinkingBudget: 10, MaxTokens: 100}, "ThinkingBudget"},
		{"choices", inference.Request{Messages: user, Choices: 2}, "Choices"},
		{"prompt logprobs", inference.Request{Messages: user, PromptLogprobs: true}, "PromptLogprobs"},
		{"ignore eos", inference.Request{Messages: user, IgnoreEOS: true}, "IgnoreEOS"},
		{"speculative", inference.Request{Messages: user, Speculative: &yes}, "Speculative"},
		{"image", inference.Request{Messages: []inference.Message{{Role: inference.RoleUser, Content: []inference.Part{{Image: []byte{1}}}}}}, "Messages[0]"},
		{"context", inference.Request{Messages: []inference.Message{inference.Text(inference.RoleUser, strings.Repeat("word ", 1000))}}, "Messages"},
		{"output limit", inference.Request{Messages: user, MaxTokens: 1000}, "MaxTokens"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.req.Model = "gw"
			_, err := eng.Prepare(context.Background(), c.req)
			fe, ok := errors.AsType[*inference.FieldError](err)
			if !ok || fe.Path.String() != c.field {
				t.Fatalf("err %v, want a FieldError naming %s", err, c.field)
			}
		})
	}
	for _, call := range []func() error{
		func() error { _, err := eng.Tokenize("gw", "x"); return err },
		func() error { _, err := eng.RenderPrompt(inference.Request{Model: "gw", Messages: user}); return err },
		func() error {
			_, err := eng.Score(context.Background(), inference.ScoreRequest{Model: "gw", Prefix: "x", Branches: []inference.Branch{{Text: "y", Candidates: [][]int{{1}}}}})
			return err
		},
		func() error {
			_, err := eng.Embed(context.Background(), inference.EmbedRequest{Model: "gw", Input: []string{"x"}})
			return err
		},
	} {
		if err := call(); !errors.Is(err, inference.ErrInvalidRequest) || !strings.Contains(err.Error(), "remote engine") {
			t.Errorf("err %v, want ErrInvalidRequest about the remote engine", err)
		}
	}
}

// TestRemoteErrors: an upstream's refusals become the engine's errors,
// its text cut and cleaned; overloaded and failing replicas are passed
// over before anything streamed, and a stream that breaks after its
// first chunk fails without a retry.
func TestRemoteErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		body   string
		want   error
		retry  time.Duration
	}{
		{"invalid", http.StatusBadRequest, `{"error":{"message":"max_tokens too large\u0007"}}`, inference.ErrInvalidRequest, 0},
		{"overloaded", http.StatusServiceUnavailable, `{"error":"busy"}`, inference.ErrUnavailable, time.Second},
		{"server error", http.StatusInternalServerError, `oops`, inference.ErrUpstream, 0},
		{"not found", http.StatusNotFound, `{"detail":"no such model"}`, inference.ErrUpstream, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := newFakeUpstream(t, func(w http.ResponseWriter, body map[string]any) {
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			})
			eng := remoteEngine(t, up.URL+"/v1")
			_, err := eng.Generate(context.Background(), inference.Request{Model: "gw", Messages: []inference.Message{inference.Text(inference.RoleUser, "hi")}})
			ue, ok := errors.AsType[*inference.UpstreamError](err)
			if !ok || !errors.Is(err, c.want) || ue.Status != c.status || ue.RetryAfter != c.retry || strings.ContainsRune(ue.Message, 7) {
				t.Fatalf("err %#v, want %v status %d", err, c.want, c.status)
			}
		})
	}
}

func TestRemoteRetries(t *testing.T) {
	answered := make(chan string, 10)
	bad := newFakeUpstream(t, func(w http.ResponseWriter, body map[string]any) {
		answered <- "bad"
		w.WriteHeader(http.StatusTooManyRequests)
	})
	good := newFakeUpstream(t, func(w http.ResponseWriter, body map[string]any) {
		answered <- "good"
		sse(w, `{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`)
	})
	eng := remoteEngine(t, bad.URL+"/v1", good.URL+"/v1")
	for range 4 {
		res, err := eng.Generate(context.Background(), inference.Request{Model: "gw", Messages: []inference.Message{inference.Text(inference.RoleUser, "hi")}})
		if err != nil || res.Text != "ok" {
			t.Fatalf("%+v %v", res, err)
		}
		if res.Usage.PromptTokens <= 0 || res.Usage.CompletionTokens != 1 {
			t.Fatalf("estimated usage %+v", res.Usage)
		}
	}

	// A stream that breaks after its first chunk is not retried.
	broken := newFakeUpstream(t, func(w http.ResponseWriter, body map[string]any) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	})
	eng = remoteEngine(t, broken.URL+"/v1")
	var got string
	var last error
	for ev, err := range eng.Stream(context.Background(), inference.Request{Model: "gw", Messages: []inference.Message{inference.Text(inference.RoleUser, "hi")}}) {
		got += ev.Text
		last = err
	}
	if got != "par" || !errors.Is(last, inference.ErrUpstream) {
		t.Fatalf("got %q, err %v", got, last)
	}
}

// searcherFunc is a search backend of one function.
type searcherFunc func(context.Context, search.Query) ([]search.Result, error)

func (f searcherFunc) Search(ctx context.Context, q search.Query) ([]search.Result, error) {
	return f(ctx, q)
}

// TestRemoteSearch: the engine runs a remote model's web searches
// between upstream calls: the upstream sees the search tool, calls it,
// and then reads the results in a tool message.
func TestRemoteSearch(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, body map[string]any) {
		msgs := body["messages"].([]any)
		if last := msgs[len(msgs)-1].(map[string]any); last["role"] == "tool" {
			if !strings.Contains(last["content"].(string), "Oslo is sunny") {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			sse(w, `{"choices":[{"index":0,"delta":{"content":"Sunny."},"finish_reason":"stop"}]}`)
			return
		}
		sse(w, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"web_search","arguments":"{\"query\":\"Oslo weather\"}"}}]},"finish_reason":"tool_calls"}]}`)
	})
	var queries []string
	eng, err := inference.New(inference.Config{
		Models: []catalog.Model{{ID: "gw", Remote: &catalog.Remote{URLs: []string{up.URL + "/v1"}, Key: "upkey"}}},
		Search: searcherFunc(func(_ context.Context, q search.Query) ([]search.Result, error) {
			queries = append(queries, q.Text)
			return []search.Result{{URL: "https://w.example/", Title: "Weather", Content: "Oslo is sunny today."}}, nil
		}),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	res, err := eng.Generate(context.Background(), inference.Request{Model: "gw", Search: &inference.SearchOptions{},
		Messages: []inference.Message{inference.Text(inference.RoleUser, "Weather in Oslo?")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Sunny." || len(res.Searches) != 1 || len(queries) != 1 || queries[0] != "Oslo weather" {
		t.Fatalf("result %+v, queries %q", res, queries)
	}
	tools := up.bodies[0]["tools"].([]any)
	if name := tools[0].(map[string]any)["function"].(map[string]any)["name"]; name != "web_search" {
		t.Errorf("first turn's tools %v", tools)
	}
}

// TestRemoteRunaway: an upstream that ignores max_tokens is cut.
func TestRemoteRunaway(t *testing.T) {
	up := newFakeUpstream(t, func(w http.ResponseWriter, body map[string]any) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range 10000 {
			io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"more \"}}]}\n\n")
		}
	})
	eng := remoteEngine(t, up.URL+"/v1")
	_, err := eng.Generate(context.Background(), inference.Request{Model: "gw", MaxTokens: 5, Messages: []inference.Message{inference.Text(inference.RoleUser, "hi")}})
	if !errors.Is(err, inference.ErrUpstream) || !strings.Contains(err.Error(), "output limit of 5") {
		t.Fatalf("err %v", err)
	}
}
