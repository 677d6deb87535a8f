//go:build cgo

package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/formats/chat"
	"github.com/inferkit/inferkit/formats/completions"
	"github.com/inferkit/inferkit/formats/messages"
	fresponses "github.com/inferkit/inferkit/formats/responses"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/mcptest"
	"github.com/inferkit/inferkit/policy"
)

// The generation styles of the parameter table, by its columns.
var tableStyles = []string{"chat", "messages", "responses", "completions"}

// readParamTable reads the table of package formats' doc whose columns
// are styles: each parameter's cell (H, R, HR or -) by style.
func readParamTable(t *testing.T, styles []string) map[string]map[string]string {
	t.Helper()
	b, err := os.ReadFile("../formats/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]map[string]string{}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.TrimPrefix(line, "//\t"))
		switch {
		case strings.HasPrefix(line, "//\tparameter ") && slices.Equal(f[1:], styles):
			in = true
		case in && !strings.HasPrefix(line, "//\t"):
			return table
		case in && len(f) == 1+len(styles):
			table[f[0]] = map[string]string{}
			for i, s := range styles {
				table[f[0]][s] = f[1+i]
			}
		case in:
			t.Fatalf("table line %q has not %d cells", line, 1+len(styles))
		}
	}
	t.Fatalf("no parameter table of %v in formats/doc.go", styles)
	return nil
}

// syncBuffer is a bytes.Buffer safe for the server's and the test's
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// kv is one field a request sets, by its JSON path; del deletes it.
type kv struct {
	key string
	val any
}

// del is the value of a kv that deletes its key.
type del struct{}

// answer is what a check reads of one answer, whatever its style.
type answer struct {
	id, model, text, thinking, finish, raw string
	prompt, completion, cacheWrite         int
	toolCalls, choices                     int
	logprobs, topLogprobs                  int // entries, and alternatives of the first
}

// paramClient sends requests of one style through its official SDK.
type paramClient struct {
	style string
	oa    openai.Client
	an    anthropic.Client
	log   *syncBuffer
}

// base is the request every check starts from: a short greedy answer
// with no thinking, to which a check's fields are set in order.
func (c paramClient) base() []kv {
	const user = "Tell me a story about a cat."
	switch c.style {
	case "chat":
		return []kv{{"model", policy.Core25Mini}, {"messages", []map[string]any{{"role": "user", "content": user}}},
			{"max_tokens", 24}, {"temperature", 0}, {"reasoning_effort", "none"}}
	case "messages":
		return []kv{{"model", policy.Core25Mini}, {"messages", []map[string]any{{"role": "user", "content": user}}},
			{"max_tokens", 24}, {"temperature", 0}, {"thinking", map[string]any{"type": "disabled"}}}
	case "completions":
		return []kv{{"model", policy.Core25Mini}, {"prompt", "Once upon a time"}, {"max_tokens", 24}, {"temperature", 0}}
	}
	return []kv{{"model", policy.Core25Mini}, {"input", user}, {"max_output_tokens", 24}, {"temperature", 0},
		{"reasoning", map[string]any{"effort": "none"}}}
}

// opts turns the base and sets into SDK request options.
func jsonSets[O any](set func(string, any) O, dl func(string) O, kvs []kv) []O {
	var out []O
	for _, f := range kvs {
		if _, ok := f.val.(del); ok {
			out = append(out, dl(f.key))
			continue
		}
		out = append(out, set(f.key, f.val))
	}
	return out
}

// send sends the base request with sets and reads the answer.
func (c paramClient) send(sets ...kv) (answer, error) {
	ctx := context.Background()
	all := append(c.base(), sets...)
	switch c.style {
	case "chat":
		r, err := c.oa.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{}, jsonSets(option.WithJSONSet, option.WithJSONDel, all)...)
		if err != nil {
			return answer{}, err
		}
		a := answer{id: r.ID, model: r.Model, raw: r.RawJSON(), prompt: int(r.Usage.PromptTokens), completion: int(r.Usage.CompletionTokens), choices: len(r.Choices)}
		if len(r.Choices) > 0 {
			ch := r.Choices[0]
			a.text, a.finish, a.toolCalls, a.logprobs = ch.Message.Content, ch.FinishReason, len(ch.Message.ToolCalls), len(ch.Logprobs.Content)
			if a.logprobs > 0 {
				a.topLogprobs = len(ch.Logprobs.Content[0].TopLogprobs)
			}
		}
		return a, nil
	case "completions":
		r, err := c.oa.Completions.New(ctx, openai.CompletionNewParams{}, jsonSets(option.WithJSONSet, option.WithJSONDel, all)...)
		if err != nil {
			return answer{}, err
		}
		a := answer{id: r.ID, model: r.Model, raw: r.RawJSON(), prompt: int(r.Usage.PromptTokens), completion: int(r.Usage.CompletionTokens), choices: len(r.Choices)}
		if len(r.Choices) > 0 {
			ch := r.Choices[0]
			a.text, a.finish, a.logprobs = ch.Text, string(ch.FinishReason), len(ch.Logprobs.Tokens)
			if a.logprobs > 0 {
				a.topLogprobs = len(ch.Logprobs.TopLogprobs[0])
			}
		}
		return a, nil
	case "messages":
		r, err := c.an.Messages.New(ctx, anthropic.MessageNewParams{}, jsonSets(aoption.WithJSONSet, aoption.WithJSONDel, all)...)
		if err != nil {
			return answer{}, err
		}
		u := r.Usage
		a := answer{id: r.ID, model: string(r.Model), raw: r.RawJSON(), finish: string(r.StopReason),
			prompt: int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens), completion: int(u.OutputTokens), cacheWrite: int(u.CacheCreationInputTokens), choices: 1}
		for _, b := range r.Content {
			switch b.Type {
			case "text":
				a.text += b.Text
			case "thinking":
				a.thinking += b.Thinking
			case "tool_use":
				a.toolCalls++
			}
		}
		return a, nil
	}
	r, err := c.oa.Responses.New(ctx, responses.ResponseNewParams{}, jsonSets(option.WithJSONSet, option.WithJSONDel, all)...)
	if err != nil {
		return answer{}, err
	}
	a := answer{id: r.ID, model: string(r.Model), raw: r.RawJSON(), text: r.OutputText(), finish: string(r.Status),
		prompt: int(r.Usage.InputTokens), completion: int(r.Usage.OutputTokens), choices: 1}
	for _, it := range r.Output {
		if it.Type == "function_call" {
			a.toolCalls++
		}
		for _, p := range it.Content {
			if p.Type == "output_text" && len(p.Logprobs) > 0 {
				a.logprobs += len(p.Logprobs)
				a.topLogprobs = len(p.Logprobs[0].TopLogprobs)
			}
		}
	}
	return a, nil
}

// stream sends the base request with sets as a stream and returns the
// text and the prompt tokens that its usage reports (0 when none).
func (c paramClient) stream(sets ...kv) (text string, prompt int, err error) {
	ctx := context.Background()
	all := append(c.base(), append([]kv{{"stream", true}}, sets...)...)
	switch c.style {
	case "chat":
		s := c.oa.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{}, jsonSets(option.WithJSONSet, option.WithJSONDel, all)...)
		for s.Next() {
			ch := s.Current()
			if len(ch.Choices) > 0 {
				text += ch.Choices[0].Delta.Content
			}
			prompt = max(prompt, int(ch.Usage.PromptTokens))
		}
		return text, prompt, s.Err()
	case "completions":
		s := c.oa.Completions.NewStreaming(ctx, openai.CompletionNewParams{}, jsonSets(option.WithJSONSet, option.WithJSONDel, all)...)
		for s.Next() {
			ch := s.Current()
			if len(ch.Choices) > 0 {
				text += ch.Choices[0].Text
			}
			prompt = max(prompt, int(ch.Usage.PromptTokens))
		}
		return text, prompt, s.Err()
	case "messages":
		s := c.an.Messages.NewStreaming(ctx, anthropic.MessageNewParams{}, jsonSets(aoption.WithJSONSet, aoption.WithJSONDel, all)...)
		var m anthropic.Message
		for s.Next() {
			if err := m.Accumulate(s.Current()); err != nil {
				return "", 0, err
			}
		}
		for _, b := range m.Content {
			text += b.Text
		}
		return text, int(m.Usage.InputTokens + m.Usage.CacheReadInputTokens), s.Err()
	}
	s := c.oa.Responses.NewStreaming(ctx, responses.ResponseNewParams{}, jsonSets(option.WithJSONSet, option.WithJSONDel, all)...)
	for s.Next() {
		ev := s.Current()
		if ev.Type == "response.output_text.delta" {
			text += ev.Delta
		}
		if ev.Type == "response.completed" {
			prompt = int(ev.Response.Usage.InputTokens)
		}
	}
	return text, prompt, s.Err()
}

// refused checks that the base request with sets is a 400 that names
// param (or a parameter under it) in the style's error shape.
func (c paramClient) refused(t *testing.T, param string, sets ...kv) {
	t.Helper()
	_, err := c.send(sets...)
	var oe *openai.Error
	var ae *anthropic.Error
	switch {
	case errors.As(err, &oe):
		if oe.StatusCode != 400 || !strings.HasPrefix(oe.Param, param) {
			t.Errorf("%v: status %d, param %q; want 400 naming %s", sets, oe.StatusCode, oe.Param, param)
		}
	case errors.As(err, &ae):
		if ae.StatusCode != 400 || !strings.Contains(ae.RawJSON(), param) || !strings.Contains(ae.RawJSON(), "invalid_request_error") {
			t.Errorf("%v: status %d, %s; want 400 naming %s", sets, ae.StatusCode, ae.RawJSON(), param)
		}
	default:
		t.Errorf("%v: %v, want a 400 naming %s", sets, err, param)
	}
}

// must sends and fails t on an error.
func (c paramClient) must(t *testing.T, sets ...kv) answer {
	t.Helper()
	a, err := c.send(sets...)
	if err != nil {
		t.Fatalf("%v: %v", sets, err)
	}
	return a
}

// paramCheck shows one cell's effect, or its refusal.
type paramCheck func(t *testing.T, c paramClient)

// stopName is each style's name of the stop strings.
func stopName(style string) string {
	if style == "messages" {
		return "stop_sequences"
	}
	return "stop"
}

// Sampling checks, shared by the styles. Hot is a temperature at which
// the tiny model's samples differ from its greedy answer.
const hot = 1.5

// sameAsGreedy checks that sets at a high temperature give the greedy
// answer: what a sampler cut to the top token does.
func sameAsGreedy(sets ...kv) paramCheck {
	return func(t *testing.T, c paramClient) {
		greedy := c.must(t).text
		for seed := range 3 {
			a := c.must(t, append([]kv{{"temperature", 2}, {"seed", seed}}, sets...)...)
			if a.text != greedy {
				t.Errorf("%v, seed %d: %q, want the greedy %q", sets, seed, a.text, greedy)
			}
		}
		// Without sets, the same temperature leaves the greedy answer.
		if differs(t, c, greedy, kv{"temperature", 2}) == 0 {
			t.Errorf("temperature 2 never leaves the greedy answer %q: the check shows nothing", greedy)
		}
	}
}

// differs counts the seeds of 0 to 5 whose answer with sets is not want.
func differs(t *testing.T, c paramClient, want string, sets ...kv) int {
	t.Helper()
	n := 0
	for seed := range 6 {
		if c.must(t, append([]kv{{"seed", seed}}, sets...)...).text != want {
			n++
		}
	}
	return n
}

// changesSampling checks that sets change the answers sampled at a high
// temperature: for some seed of 0 to 5, the answer with sets differs
// from the one without. A penalty works on the tokens already there, so
// it shows on long, sampled answers.
func changesSampling(sets ...kv) paramCheck {
	return func(t *testing.T, c paramClient) {
		long := []kv{{"max_tokens", del{}}, {"max_output_tokens", del{}}, {maxName(c.style), 64}, {"temperature", hot}}
		for seed := range 6 {
			s := append(slices.Clone(long), kv{"seed", seed})
			if c.must(t, s...).text != c.must(t, append(s, sets...)...).text {
				return
			}
		}
		t.Errorf("%v: every seed of 0 to 5 gives the same answers as without", sets)
	}
}

// maxName is each style's name of the output limit.
func maxName(style string) string {
	if style == "responses" {
		return "max_output_tokens"
	}
	return "max_tokens"
}

// grows checks that sets make the prompt longer.
func grows(sets ...kv) paramCheck {
	return func(t *testing.T, c paramClient) {
		base, a := c.must(t), c.must(t, sets...)
		if a.prompt <= base.prompt {
			t.Errorf("%v: %d prompt tokens, %d without", sets, a.prompt, base.prompt)
		}
	}
}

// changesPrompt checks that sets change the prompt's length: a thinking
// switch that the template renders.
func changesPrompt(sets ...kv) paramCheck {
	return func(t *testing.T, c paramClient) {
		base, a := c.must(t), c.must(t, sets...)
		if a.prompt == base.prompt {
			t.Errorf("%v: %d prompt tokens, as without", sets, a.prompt)
		}
	}
}

// refuses checks that sets are refused, naming param.
func refuses(param string, sets ...kv) paramCheck {
	return func(t *testing.T, c paramClient) { c.refused(t, param, sets...) }
}

// both runs checks in turn.
func both(checks ...paramCheck) paramCheck {
	return func(t *testing.T, c paramClient) {
		for _, ch := range checks {
			ch(t, c)
		}
	}
}

// logsEndUser checks that sets put user in the access log.
func logsEndUser(user string, sets ...kv) paramCheck {
	return func(t *testing.T, c paramClient) {
		c.must(t, sets...)
		if !strings.Contains(c.log.String(), "end_user="+user) {
			t.Errorf("%v: the access log has no end_user=%s", sets, user)
		}
	}
}

// echoes checks that the answer's JSON holds text.
func echoes(text string, sets ...kv) paramCheck {
	return func(t *testing.T, c paramClient) {
		if a := c.must(t, sets...); !strings.Contains(a.raw, text) {
			t.Errorf("%v: the answer does not hold %s: %s", sets, text, a.raw)
		}
	}
}

// limits checks that an output limit of 3 ends the answer at 3 tokens.
func limits(field string) paramCheck {
	return func(t *testing.T, c paramClient) {
		a := c.must(t, kv{field, 3})
		if a.completion > 3 || !slices.Contains([]string{"length", "max_tokens", "incomplete"}, a.finish) {
			t.Errorf("%s 3: %d tokens, finish %q", field, a.completion, a.finish)
		}
	}
}

// answersJSON checks that sets make the answer JSON.
func answersJSON(sets ...kv) paramCheck {
	return func(t *testing.T, c paramClient) {
		a := c.must(t, append([]kv{{maxName(c.style), 64}}, sets...)...)
		if !strings.HasPrefix(strings.TrimSpace(a.text), "{") {
			t.Errorf("%v: %q is not JSON", sets, a.text)
		}
	}
}

// callsTools checks that sets make the answer calls tools, n of them
// when n > 0.
func callsTools(n int, sets ...kv) paramCheck {
	return func(t *testing.T, c paramClient) {
		a := c.must(t, append([]kv{{maxName(c.style), toolTokens}}, sets...)...)
		if a.toolCalls == 0 || n > 0 && a.toolCalls != n {
			t.Errorf("%v: %d tool calls, want %d (0: any)", sets, a.toolCalls, n)
		}
	}
}

// weatherTool is the tool of the tool checks, in each style's shape.
func weatherTool(style string) map[string]any {
	schema := map[string]any{"type": "object", "properties": map[string]any{"metric": map[string]any{"type": "boolean"}}, "required": []string{"metric"}}
	switch style {
	case "chat":
		return map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": schema}}
	case "messages":
		return map[string]any{"name": "get_weather", "input_schema": schema}
	}
	return map[string]any{"type": "function", "name": "get_weather", "parameters": schema}
}

// paramChecks has a check for every cell of the table that is not -, by
// parameter and style ("*": every style); mcpURL is an MCP server that
// the server under test allows.
func paramChecks(mcpURL string) map[string]map[string]paramCheck {
	long := "Tell me a story about a cat who lives in a lighthouse by the sea."
	longMsgs := []map[string]any{{"role": "user", "content": long}}
	schema := map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "boolean"}}, "required": []string{"a"}}
	tools := func(style string) kv { return kv{"tools", []map[string]any{weatherTool(style)}} }
	perStyle := func(f func(style string) paramCheck) paramCheck {
		return func(t *testing.T, c paramClient) { f(c.style)(t, c) }
	}
	return map[string]map[string]paramCheck{
		"model": {"*": func(t *testing.T, c paramClient) {
			if a := c.must(t, kv{"model", policy.Core25Pro}); a.model != policy.Core25Pro {
				t.Errorf("model %q answers as %q", policy.Core25Pro, a.model)
			}
		}},
		"messages":     {"*": grows(kv{"messages", longMsgs})},
		"input":        {"responses": grows(kv{"input", long})},
		"system":       {"messages": grows(kv{"system", "Be brief."})},
		"instructions": {"responses": grows(kv{"instructions", "Be brief."})},
		"previous_response_id": {"responses": func(t *testing.T, c paramClient) {
			first := c.must(t)
			if a := c.must(t, kv{"previous_response_id", first.id}); a.prompt <= first.prompt {
				t.Errorf("continuing %s: %d prompt tokens, %d before", first.id, a.prompt, first.prompt)
			}
		}},
		"stream": {"*": func(t *testing.T, c paramClient) {
			text, _, err := c.stream()
			if want := c.must(t).text; err != nil || text != want {
				t.Errorf("streamed %q, %v; want %q", text, err, want)
			}
		}},
		"stream_options": {"*": func(t *testing.T, c paramClient) {
			if _, prompt, err := c.stream(kv{"stream_options", map[string]any{"include_usage": true}}); err != nil || prompt == 0 {
				t.Errorf("include_usage: prompt %d in the stream, %v", prompt, err)
			}
		}},
		"tools": {"*": perStyle(func(s string) paramCheck { return grows(tools(s)) })},
		"tool_choice": {
			"chat": perStyle(func(s string) paramCheck { return callsTools(0, tools(s), kv{"tool_choice", "required"}) }),
			"messages": perStyle(func(s string) paramCheck {
				return callsTools(0, tools(s), kv{"tool_choice", map[string]any{"type": "any"}})
			}),
			"responses": perStyle(func(s string) paramCheck { return callsTools(0, tools(s), kv{"tool_choice", "required"}) }),
		},
		"parallel_tool_calls": {"*": perStyle(func(s string) paramCheck {
			return callsTools(1, tools(s), kv{"tool_choice", "required"}, kv{"parallel_tool_calls", false})
		})},
		"max_new_tokens":        {"chat": limits("max_new_tokens")},
		"max_completion_tokens": {"chat": limits("max_completion_tokens")},
		"max_tokens":            {"*": limits("max_tokens")},
		"max_output_tokens":     {"responses": limits("max_output_tokens")},
		"reasoning":             {"*": changesPrompt(kv{"reasoning", map[string]any{"effort": "high"}}, kv{"reasoning_effort", del{}})},
		"reasoning_effort":      {"chat": changesPrompt(kv{"reasoning_effort", "high"})},
		"thinking":              {"messages": changesPrompt(kv{"thinking", map[string]any{"type": "enabled"}})},
		"thinking.budget_tokens": {"messages": both(
			refuses("thinking.budget_tokens", kv{"thinking", map[string]any{"type": "enabled", "budget_tokens": 24}}),
			func(t *testing.T, c paramClient) {
				// core-2-5-pro is a tiny Qwen3.5, whose prompt opens the thinking.
				short := c.must(t, kv{"model", policy.Core25Pro}, kv{"max_tokens", 64}, kv{"thinking", map[string]any{"type": "enabled", "budget_tokens": 2}})
				long := c.must(t, kv{"model", policy.Core25Pro}, kv{"max_tokens", 64}, kv{"thinking", map[string]any{"type": "enabled", "budget_tokens": 40}})
				if len(short.thinking) >= len(long.thinking) {
					t.Errorf("thinking of budget 2 %q, of budget 40 %q", short.thinking, long.thinking)
				}
			})},
		"response_format":  {"chat": answersJSON(kv{"response_format", map[string]any{"type": "json_object"}})},
		"text":             {"responses": answersJSON(kv{"text", map[string]any{"format": map[string]any{"type": "json_object"}}})},
		"text.format.name": {"responses": answersJSON(kv{"text", map[string]any{"format": map[string]any{"type": "json_schema", "schema": schema}}})},
		"output_config":    {"messages": answersJSON(kv{"output_config", map[string]any{"format": map[string]any{"type": "json_schema", "schema": schema}}})},
		"verbosity":        {"chat": grows(kv{"verbosity", "low"})},
		"temperature": {"*": func(t *testing.T, c paramClient) {
			greedy := c.must(t).text
			if again := c.must(t).text; again != greedy {
				t.Errorf("temperature 0 gives %q, then %q", greedy, again)
			}
			if differs(t, c, greedy, kv{"temperature", hot}) == 0 {
				t.Errorf("temperature %g never leaves the greedy answer %q", hot, greedy)
			}
		}},
		"top_p": {"*": sameAsGreedy(kv{"top_p", 1e-9})},
		"top_k": {"*": sameAsGreedy(kv{"top_k", 1})},
		"min_p": {"*": sameAsGreedy(kv{"min_p", 1})},
		"seed": {"*": func(t *testing.T, c paramClient) {
			a, b := c.must(t, kv{"temperature", hot}, kv{"seed", 7}), c.must(t, kv{"temperature", hot}, kv{"seed", 7})
			if a.text != b.text {
				t.Errorf("seed 7 gives %q, then %q", a.text, b.text)
			}
			if differs(t, c, a.text, kv{"temperature", hot}) == 0 {
				t.Errorf("seeds 0 to 5 all give seed 7's %q", a.text)
			}
		}},
		"stop":               {"*": perStyle(func(s string) paramCheck { return stops(stopName(s)) })},
		"stop_sequences":     {"messages": stops("stop_sequences")},
		"frequency_penalty":  {"*": changesSampling(kv{"frequency_penalty", 2})},
		"presence_penalty":   {"*": changesSampling(kv{"presence_penalty", 2})},
		"repetition_penalty": {"*": changesSampling(kv{"repetition_penalty", 2})},
		"n": {"*": func(t *testing.T, c paramClient) {
			if a := c.must(t, kv{"n", 2}); a.choices != 2 {
				t.Errorf("n 2: %d choices", a.choices)
			}
		}},
		"web_search_options": {"chat": grows(kv{"web_search_options", map[string]any{}})}, // the results read
		// The server's tools go into the prompt; a server the operator
		// did not allow is refused.
		"mcp_servers": {"messages": both(grows(kv{"mcp_servers", []any{map[string]any{"type": "url", "url": mcpURL, "name": "t"}}}),
			refuses("mcp_servers[0].url", kv{"mcp_servers", []any{map[string]any{"type": "url", "url": "http://127.0.0.1:1/mcp", "name": "t"}}}))},
		"logprobs": {
			"chat": func(t *testing.T, c paramClient) {
				if a := c.must(t, kv{"logprobs", true}); a.logprobs == 0 || a.logprobs > a.completion { // the end of turn has none
					t.Errorf("logprobs: %d entries for %d tokens", a.logprobs, a.completion)
				}
			},
			"completions": func(t *testing.T, c paramClient) {
				if a := c.must(t, kv{"logprobs", 2}); a.logprobs == 0 || a.logprobs > a.completion || a.topLogprobs != 2 {
					t.Errorf("logprobs 2: %d entries for %d tokens, %d alternatives", a.logprobs, a.completion, a.topLogprobs)
				}
				c.refused(t, "logprobs", kv{"logprobs", 21})
			},
		},
		"echo": {"completions": func(t *testing.T, c paramClient) {
			if a := c.must(t, kv{"echo", true}); !strings.HasPrefix(a.text, "Once upon a time") || a.text == "Once upon a time" {
				t.Errorf("echo: %q", a.text)
			}
		}},
		"suffix":     {"completions": refuses("suffix", kv{"suffix", "The end."})},
		"logit_bias": {"completions": refuses("logit_bias", kv{"logit_bias", map[string]int{"50256": -100}})},
		"best_of": {"completions": both(func(t *testing.T, c paramClient) {
			if a := c.must(t, kv{"n", 2}, kv{"best_of", 2}); a.choices != 2 {
				t.Errorf("n 2, best_of 2: %d choices", a.choices)
			}
		}, refuses("best_of", kv{"best_of", 3}))},
		"top_logprobs": {"*": func(t *testing.T, c paramClient) {
			sets := []kv{{"top_logprobs", 2}}
			if c.style == "chat" {
				sets = append(sets, kv{"logprobs", true})
			}
			if a := c.must(t, sets...); a.logprobs == 0 || a.topLogprobs != 2 {
				t.Errorf("top_logprobs 2: %d entries, %d alternatives", a.logprobs, a.topLogprobs)
			}
			c.refused(t, "top_logprobs", append(sets, kv{"top_logprobs", 21})...)
		}},
		"include": {"responses": both(func(t *testing.T, c paramClient) {
			if a := c.must(t, kv{"include", []string{"message.output_text.logprobs"}}); a.logprobs == 0 {
				t.Errorf("include logprobs: none")
			}
		}, refuses("include[0]", kv{"include", []string{"message.input_image.image_url"}}))},
		"user":              {"*": logsEndUser("u-42", kv{"user", "u-42"})},
		"safety_identifier": {"responses": both(logsEndUser("s-43", kv{"safety_identifier", "s-43"}), echoes(`"safety_identifier":"s-43"`, kv{"safety_identifier", "s-43"}))},
		"metadata": {
			"chat":      refuses("metadata", kv{"metadata", map[string]string{"k": "v"}}),
			"messages":  logsEndUser("u-44", kv{"metadata", map[string]string{"user_id": "u-44"}}),
			"responses": echoes(`"metadata":{"k":"v"}`, kv{"metadata", map[string]string{"k": "v"}}),
		},
		"store": {
			"chat": refuses("store", kv{"store", true}),
			"responses": func(t *testing.T, c paramClient) {
				for _, store := range []bool{true, false} {
					a := c.must(t, kv{"store", store})
					_, err := c.oa.Responses.Get(context.Background(), a.id, responses.ResponseGetParams{})
					if (err == nil) != store {
						t.Errorf("store %v: GET %s gives %v", store, a.id, err)
					}
				}
			},
		},
		"cache_control": {"messages": both(func(t *testing.T, c paramClient) {
			sys := []map[string]any{{"type": "text", "text": "You are a storyteller.", "cache_control": map[string]any{"type": "ephemeral"}}}
			// a system prompt of its own, so that nothing of it is cached yet
			if a := c.must(t, kv{"system", sys}); a.cacheWrite == 0 || a.cacheWrite >= a.prompt {
				t.Errorf("cache_control on the system: %d of %d prompt tokens written", a.cacheWrite, a.prompt)
			}
		}, refuses("cache_control", kv{"system", []map[string]any{{"type": "text", "text": "S", "cache_control": map[string]any{"type": "ephemeral", "ttl": "1h"}}}}))},
		"truncation": {"responses": both(
			refuses("input", kv{"truncation", "disabled"}, kv{"input", strings.Repeat("cat ", 1500)}),
			refuses("truncation", kv{"truncation", "auto"}))},
		"background": {"responses": both(func(t *testing.T, c paramClient) {
			// answered at once, queued, and run apart from the request
			if a := c.must(t, kv{"background", true}); !strings.Contains(a.raw, `"background":true`) || !strings.Contains(a.raw, `"status":"queued"`) {
				t.Errorf("background: %s", a.raw)
			}
		}, refuses("background", kv{"background", true}, kv{"store", false}))},
		"max_tool_calls": {"responses": func(t *testing.T, c paramClient) {
			search := kv{"tools", []map[string]any{{"type": "web_search"}}}
			offered, none := c.must(t, search), c.must(t, search, kv{"max_tool_calls", 0})
			if none.prompt >= offered.prompt || !strings.Contains(none.raw, `"max_tool_calls":0`) {
				t.Errorf("max_tool_calls 0: %d prompt tokens, %d with the search offered; %s", none.prompt, offered.prompt, none.raw)
			}
			c.refused(t, "max_tool_calls", search, kv{"max_tool_calls", -1})
		}},
		"prompt_cache_key": {"responses": echoes(`"prompt_cache_key":"pk"`, kv{"prompt_cache_key", "pk"})},
		"conversation":     {"responses": refuses("conversation", kv{"conversation", "conv_1"})},
		"prompt": {
			"responses":   refuses("prompt", kv{"prompt", map[string]any{"id": "pmpt_1"}}),
			"completions": grows(kv{"prompt", long}),
		},
	}
}

// stops checks that the answer ends before the stop string, taken from
// the middle of the greedy answer.
func stops(field string) paramCheck {
	return func(t *testing.T, c paramClient) {
		greedy := []rune(c.must(t).text)
		if len(greedy) < 8 {
			t.Fatalf("greedy answer %q too short to stop in", string(greedy))
		}
		stop := string(greedy[5:7])
		want := string(greedy)[:strings.Index(string(greedy), stop)]
		a := c.must(t, kv{field, []string{stop}})
		if a.text != want || !slices.Contains([]string{"stop", "stop_sequence", "completed"}, a.finish) {
			t.Errorf("stop %q: %q (%s), want %q", stop, a.text, a.finish, want)
		}
	}
}

// TestParameterTable runs every cell of the parameter table of package
// formats through the official SDKs on the real engine and a tiny model:
// each honoured cell shows its effect and each refused one its 400. It
// fails for a field of a style's request type without a row, a row
// without a check, or a check without a row.
func TestParameterTable(t *testing.T) {
	table := readParamTable(t, tableStyles)
	for style, rt := range map[string]reflect.Type{
		"chat": reflect.TypeFor[chat.Request](), "messages": reflect.TypeFor[messages.Request](), "responses": reflect.TypeFor[fresponses.Request](),
		"completions": reflect.TypeFor[completions.Request](),
	} {
		for i := range rt.NumField() {
			key, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if cell := table[key][style]; cell == "" || cell == "-" {
				t.Errorf("%s.Request has %s, which the table does not list for %s", style, key, style)
			}
		}
	}
	for _, p := range catalog.SamplingParameters {
		for _, style := range tableStyles {
			name := p
			if p == "stop" {
				name = stopName(style)
			}
			if table[name][style] != "H" {
				t.Errorf("/v1/models lists %s, which %s does not honour (%q)", p, style, table[name][style])
			}
		}
	}

	mini, _ := policy.Model(policy.Core25Mini)
	// The tools' tiny Qwen3 (see toolServer), whose greedy calls end
	// after the first.
	mini.Path = inferencetest.Model(t, inferencetest.Options{Seed: 2, Arch: "qwen3", ChatTemplate: inferencetest.Qwen3Template, ContextLength: 4096})
	pro, _ := policy.Model(policy.Core25Pro)
	pro.Path = inferencetest.Model(t, inferencetest.Options{Seed: 3, Arch: "qwen35", ChatTemplate: inferencetest.Qwen35Template})
	models := []catalog.Model{mini, pro}
	logs := &syncBuffer{}
	// Every generation request of the checks, sent through the Go SDKs,
	// goes through the TypeScript SDKs too at the end.
	rec := &sdkRecorder{}
	mcp := mcptest.Serve(t, mcptest.Options{})
	url := serveEngine(t, inference.Config{Models: models, Parallel: 2, ContextTokens: 2048, Search: pinned(docsIndex(t))},
		httpapi.Config{Models: models, Logger: slog.New(slog.NewTextHandler(logs, nil)), Middleware: []func(http.Handler) http.Handler{rec.Middleware},
			MCPAllow: []string{mcp.URL}}, "")

	checks := paramChecks(mcp.URL)
	for name, cells := range table {
		for _, style := range tableStyles {
			cell := cells[style]
			if cell == "-" {
				continue
			}
			check := checks[name][style]
			if check == nil {
				check = checks[name]["*"]
			}
			t.Run(name+"/"+style+"/"+cell, func(t *testing.T) {
				if check == nil {
					t.Fatalf("no check for %s on %s", name, style)
				}
				rec.SetRow(name + "/" + style)
				check(t, paramClient{style: style, oa: openaiSDK(url, key), an: anthropicSDK(url, key), log: logs})
			})
		}
	}
	for name, cells := range checks {
		for style := range cells {
			if c := table[name]; c == nil || style != "*" && (c[style] == "" || c[style] == "-") {
				t.Errorf("a check for %s on %s, which the table does not list", name, style)
			}
		}
	}
	t.Run("typescript-sdks", func(t *testing.T) {
		calls := rec.Calls()
		rows := map[string]bool{}
		for _, c := range calls {
			rows[c.Row] = true
		}
		replayThroughNPM(t, url, calls)
		t.Logf("%d requests of %d rows through the TypeScript SDKs", len(calls), len(rows))
	})
}
