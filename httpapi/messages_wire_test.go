package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"

	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/ratelimit"
)

// TestMessagesStreamWire reads a served messages stream as raw SSE: every
// frame has an event line naming its data's type, the closing [DONE]
// included, and message_delta's usage splits the prompt into cache reads
// and the rest, with no cache write without a breakpoint.
func TestMessagesStreamWire(t *testing.T) {
	e := newEnv(t, func(_ *httpapi.Config, f *fakeEngine) {
		f.result.Usage = inference.Usage{PromptTokens: 5, CachedTokens: 2, CompletionTokens: 2}
	})
	w := do(e.h, "POST", "/v1/messages", key, streaming(messagesBody))
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	frames := strings.Split(strings.TrimSuffix(w.Body.String(), "\n\n"), "\n\n")
	for i, f := range frames {
		event, data, ok := strings.Cut(f, "\n")
		if !ok || !strings.HasPrefix(event, "event: ") || !strings.HasPrefix(data, "data: ") || strings.Contains(data, "\n") {
			t.Fatalf("frame %d is not one event line and one data line: %q", i, f)
		}
		event, data = strings.TrimPrefix(event, "event: "), strings.TrimPrefix(data, "data: ")
		if data == "[DONE]" {
			if event != "ping" || i != len(frames)-1 {
				t.Errorf("frame %d: [DONE] as event %q of %d frames", i, event, len(frames))
			}
			continue
		}
		var v struct {
			Type  string
			Usage map[string]int
		}
		if err := json.Unmarshal([]byte(data), &v); err != nil || v.Type != event {
			t.Errorf("frame %d: event %q, data %s", i, event, data)
		}
		if event == "message_delta" {
			if u := v.Usage; u["input_tokens"] != 3 || u["cache_read_input_tokens"] != 2 || u["cache_creation_input_tokens"] != 0 || u["output_tokens"] != 2 {
				t.Errorf("message_delta usage %v", u)
			}
		}
	}
	if !strings.HasSuffix(w.Body.String(), "event: ping\ndata: [DONE]\n\n") {
		t.Errorf("the stream does not end with the named [DONE]:\n%s", w.Body)
	}

	// The Go SDK reads the stream to its end and skips the sentinel.
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	c := anthropic.NewClient(aoption.WithBaseURL(srv.URL), aoption.WithAPIKey(key), aoption.WithMaxRetries(0))
	s := c.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{Model: "core-2-5-mini", MaxTokens: 16,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hi"))}})
	var m anthropic.Message
	for s.Next() {
		if err := m.Accumulate(s.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if u := m.Usage; m.Content[0].Text != "Hello world" || u.InputTokens != 3 || u.CacheReadInputTokens != 2 || u.CacheCreationInputTokens != 0 {
		t.Errorf("accumulated %+v", m)
	}
}

// TestMessagesErrorTypesServed sends requests that fail with each status
// of the messages endpoint through the Go SDK: error.type, which the SDK
// reports, is the documented Anthropic type, never "error".
func TestMessagesErrorTypesServed(t *testing.T) {
	ok := func(_ *httpapi.Config, _ *fakeEngine) {}
	for _, tc := range []struct {
		name   string
		edit   func(*httpapi.Config, *fakeEngine)
		key    string
		params func(*anthropic.MessageNewParams)
		status int
		want   anthropic.ErrorType
	}{
		{"invalid", ok, key, func(p *anthropic.MessageNewParams) { p.Temperature = anthropic.Float(3) }, 400, "invalid_request_error"},
		{"unknown model", ok, key, func(p *anthropic.MessageNewParams) { p.Model = "core-9" }, 400, "invalid_request_error"},
		{"wrong key", ok, wrongKey, nil, 401, "authentication_error"},
		{"too large", func(c *httpapi.Config, _ *fakeEngine) { c.MaxBodyBytes = 64 }, key, nil, 413, "request_too_large"},
		{"rate limited", func(c *httpapi.Config, _ *fakeEngine) {
			keys, _ := httpapi.NewTieredKeys(httpapi.APIKey{Key: key, Tier: ratelimit.Tier{Name: "t", Requests: 100, InputTokens: 1}})
			c.Keys, c.Limiter = keys, ratelimit.NewMemory()
		}, key, nil, 429, "rate_limit_error"},
		{"overloaded", func(_ *httpapi.Config, f *fakeEngine) { f.errBefore = inference.ErrOverloaded }, key, nil, 429, "overloaded_error"},
		{"server", func(_ *httpapi.Config, f *fakeEngine) { f.errBefore = errors.New("boom") }, key, nil, 500, "api_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.edit)
			srv := httptest.NewServer(e.h)
			defer srv.Close()
			c := anthropic.NewClient(aoption.WithBaseURL(srv.URL), aoption.WithAPIKey(tc.key), aoption.WithMaxRetries(0))
			p := anthropic.MessageNewParams{Model: "core-2-5-mini", MaxTokens: 16,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hello there, how are you today?"))}}
			if tc.params != nil {
				tc.params(&p)
			}
			_, err := c.Messages.New(context.Background(), p)
			var ae *anthropic.Error
			if !errors.As(err, &ae) || ae.StatusCode != tc.status || ae.Type() != tc.want {
				t.Fatalf("error %v", err)
			}
			typ, _, _, _ := errorOf(t, []byte(ae.RawJSON()))
			if typ != string(tc.want) {
				t.Errorf("nested type %q in %s", typ, ae.RawJSON())
			}
		})
	}
}
