package messages

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/inference"
)

// anthropicErrorTypes are the error types of Anthropic's documented list.
var anthropicErrorTypes = []string{
	"invalid_request_error", "authentication_error", "permission_error", "not_found_error",
	"request_too_large", "rate_limit_error", "api_error", "overloaded_error", "billing_error", "timeout_error",
}

// checkMessagesFrames checks that every frame of a messages stream has
// one event line naming the type its data carries, and that the only
// frame whose data is not JSON is the closing [DONE], named ping.
func checkMessagesFrames(t *testing.T, body []byte) {
	t.Helper()
	frames := formatstest.SSEFrames(t, body)
	for i, f := range frames {
		if f.Events != 1 {
			t.Errorf("frame %d has %d event lines: %+v", i, f.Events, f)
		}
		if f.Data == "[DONE]" {
			if f.Event != doneEvent || i != len(frames)-1 {
				t.Errorf("frame %d: [DONE] with event %q, %d frames", i, f.Event, len(frames))
			}
			continue
		}
		var v struct{ Type string }
		if err := json.Unmarshal([]byte(f.Data), &v); err != nil || v.Type != f.Event {
			t.Errorf("frame %d: event %q, data %s (%v)", i, f.Event, f.Data, err)
		}
	}
}

// TestMessagesStreamFramesNamed reads every messages stream golden as raw
// SSE: each frame has an event line, the closing [DONE] included.
func TestMessagesStreamFramesNamed(t *testing.T) {
	names, err := filepath.Glob(filepath.Join("..", "testdata", "messages_stream*.sse"))
	if err != nil || len(names) < 4 {
		t.Fatalf("goldens %v, %v", names, err)
	}
	for _, name := range names {
		t.Run(filepath.Base(name), func(t *testing.T) {
			body := formatstest.ReadGolden(t, filepath.Base(name))
			checkMessagesFrames(t, body)
			done := bytes.Contains(body, []byte("data: [DONE]"))
			if failed := bytes.Contains(body, []byte("event: error")); done == failed {
				t.Errorf("[DONE] %v, error %v: a stream ends with exactly one of them", done, failed)
			}
		})
	}
}

// TestMessagesDoneEventSkipped checks that the Go SDK skips the named
// sentinel: a stream ending in it decodes without error, while the same
// sentinel under another name breaks the SDK's decoder, which is why the
// name is ping.
func TestMessagesDoneEventSkipped(t *testing.T) {
	var b bytes.Buffer
	formatstest.Stream(t, NewStream(&b, formats.Request{}, formatstest.Options()), formatstest.PlainEvents(), nil)
	for _, tc := range []struct {
		event string
		ok    bool
	}{{doneEvent, true}, {"done", false}} {
		body := bytes.Replace(b.Bytes(), []byte("event: "+doneEvent+"\ndata: [DONE]"), []byte("event: "+tc.event+"\ndata: [DONE]"), 1)
		f := &formatstest.Fake{Status: 200, ContentType: "text/event-stream", Body: body}
		srv := httptest.NewServer(f)
		s := formatstest.Anthropic(srv.URL).Messages.NewStreaming(context.Background(), formatstest.MessagesParams())
		n := 0
		for s.Next() {
			n++
		}
		srv.Close()
		if err := s.Err(); (err == nil) != tc.ok || n != 7 {
			t.Errorf("event %q: %d events, err %v", tc.event, n, err)
		}
	}
}

// TestMessagesErrorTypes checks the messages error body of each status:
// error.type and error.error.type are the same type of Anthropic's
// documented list, which the Go SDK reports, for a status and for an
// in-stream error event.
func TestMessagesErrorTypes(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		want   string
	}{
		{formats.Invalid("temperature", "temperature must be between 0 and 2, got 3"), 400, "invalid_request_error"},
		{fmt.Errorf("run: %w", inference.ErrContextLength), 400, "invalid_request_error"},
		{formats.Unauthorized(), 401, "authentication_error"},
		{&formats.Error{Status: 402, Code: "insufficient_credit", Message: "no credit"}, 402, "billing_error"},
		{&formats.Error{Status: 403, Code: "forbidden", Message: "not for this key"}, 403, "permission_error"},
		{formats.ModelNotFound("nope"), 404, "not_found_error"},
		{&formats.Error{Status: 408, Code: "request_timeout", Message: "slow body"}, 408, "invalid_request_error"},
		{&http.MaxBytesError{Limit: 1 << 20}, 413, "request_too_large"},
		{&formats.Error{Status: 422, Code: "invalid_value", Message: "bad"}, 422, "invalid_request_error"},
		{formats.RateLimited(time.Second, "slow down"), 429, "rate_limit_error"},
		{formats.QuotaExceeded("spend cap"), 429, "rate_limit_error"},
		{inference.ErrOverloaded, 429, "overloaded_error"},
		{errors.New("secret"), 500, "api_error"},
		{&formats.Error{Status: 503, Code: "unavailable", Message: "down"}, 503, "api_error"},
		{&formats.Error{Status: 504, Code: "timeout", Message: "took too long"}, 504, "timeout_error"},
		{&formats.Error{Status: 529, Code: "overloaded", Message: "busy"}, 529, "overloaded_error"},
	} {
		t.Run(fmt.Sprint(tc.status, tc.want), func(t *testing.T) {
			if !slices.Contains(anthropicErrorTypes, tc.want) {
				t.Fatalf("%s is not a documented type", tc.want)
			}
			rec := httptest.NewRecorder()
			formats.WriteError(rec, formats.StyleMessages, tc.err)
			body := rec.Body.Bytes()
			var v struct {
				Type  string
				Error struct {
					Type, Message string
					Error         struct{ Type, Message string }
				}
			}
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatal(err)
			}
			if rec.Code != tc.status || v.Type != "error" || v.Error.Type != tc.want || v.Error.Error.Type != tc.want ||
				v.Error.Message == "" || v.Error.Message != v.Error.Error.Message {
				t.Errorf("%d %s", rec.Code, body)
			}

			f := &formatstest.Fake{Status: tc.status, ContentType: "application/json", Body: body}
			srv := httptest.NewServer(f)
			defer srv.Close()
			_, err := formatstest.Anthropic(srv.URL).Messages.New(context.Background(), formatstest.MessagesParams())
			var ae *anthropic.Error
			if !errors.As(err, &ae) || ae.StatusCode != tc.status || string(ae.Type()) != tc.want {
				t.Errorf("SDK error %v", err)
			}

			// The same error after the headers: an event: error frame.
			var b bytes.Buffer
			s := NewStream(&b, formats.Request{}, formatstest.Options())
			formatstest.Stream(t, s, formatstest.PlainEvents()[:1], tc.err)
			frames := formatstest.SSEFrames(t, b.Bytes())
			if last := frames[len(frames)-1]; last.Event != "error" || !bytes.Contains(body, []byte(last.Data)) {
				t.Errorf("in-stream error %+v, body %s", last, body)
			}
			checkMessagesFrames(t, b.Bytes())
			f.Status, f.ContentType, f.Body = 200, "text/event-stream", b.Bytes()
			st := formatstest.Anthropic(srv.URL).Messages.NewStreaming(context.Background(), formatstest.MessagesParams())
			for st.Next() {
			}
			if err := st.Err(); !errors.As(err, &ae) || string(ae.Type()) != tc.want {
				t.Errorf("SDK stream error %v", err)
			}
		})
	}
}

// TestMessagesUsageSplit checks that each prompt token is counted once:
// read from the prefix cache (cache_read_input_tokens), decoded up to the
// client's cache breakpoint (cache_creation_input_tokens, 0 without one)
// or decoded after it (input_tokens), in the message and in the stream's
// message_delta; message_start counts the whole prompt as input_tokens.
func TestMessagesUsageSplit(t *testing.T) {
	for _, c := range []struct {
		u          inference.Usage
		breakpoint int // the prefix's tokens; 0: no breakpoint
		want       Usage
	}{
		{inference.Usage{PromptTokens: 20, CachedTokens: 8, CompletionTokens: 15}, 0, Usage{InputTokens: 12, OutputTokens: 15, CacheReadInputTokens: 8}},
		{inference.Usage{PromptTokens: 12, CompletionTokens: 4}, 0, Usage{InputTokens: 12, OutputTokens: 4}},
		{inference.Usage{PromptTokens: 30, CachedTokens: 30, CompletionTokens: 1}, 0, Usage{OutputTokens: 1, CacheReadInputTokens: 30}},
		// cold: the prefix written, the rest plain input
		{inference.Usage{PromptTokens: 20, CompletionTokens: 3}, 14, Usage{InputTokens: 6, OutputTokens: 3, CacheCreationInputTokens: 14}},
		// part of the prefix read, the rest of it written
		{inference.Usage{PromptTokens: 20, CachedTokens: 10, CompletionTokens: 3}, 14, Usage{InputTokens: 6, OutputTokens: 3, CacheCreationInputTokens: 4, CacheReadInputTokens: 10}},
		// warm: more than the prefix read, nothing written
		{inference.Usage{PromptTokens: 20, CachedTokens: 19, CompletionTokens: 3}, 14, Usage{InputTokens: 1, OutputTokens: 3, CacheReadInputTokens: 19}},
		// a prefix counted with its generation prompt, past the prompt
		{inference.Usage{PromptTokens: 20, CompletionTokens: 3}, 23, Usage{OutputTokens: 3, CacheCreationInputTokens: 20}},
	} {
		u, want := c.u, c.want
		req := formats.Request{}
		if c.breakpoint > 0 {
			req.Cache = &formats.CachePoint{Tokens: c.breakpoint}
		}
		res := inference.Result{Text: "hi", FinishReason: inference.FinishStop, Usage: u}
		m := NewMessage(req, res, formatstest.Options())
		if m.Usage != want || m.Usage.InputTokens+m.Usage.CacheCreationInputTokens+m.Usage.CacheReadInputTokens != u.PromptTokens {
			t.Errorf("%+v, breakpoint %d: usage %+v, want %+v", u, c.breakpoint, m.Usage, want)
		}
		if got := m.Result().Usage; got != u {
			t.Errorf("%+v: the message's usage reads back as %+v", u, got)
		}

		var b bytes.Buffer
		s := NewStream(&b, req, formatstest.Options())
		s.InputTokens = u.PromptTokens
		formatstest.Stream(t, s, []inference.Event{{Text: "hi"}, {Final: &res}}, nil)
		var start, delta Event
		for _, f := range formatstest.SSEFrames(t, b.Bytes()) {
			switch f.Event {
			case "message_start":
				_ = json.Unmarshal([]byte(f.Data), &start)
			case "message_delta":
				_ = json.Unmarshal([]byte(f.Data), &delta)
			}
		}
		if start.Message == nil || start.Message.Usage != (Usage{InputTokens: u.PromptTokens}) {
			t.Errorf("%+v: message_start %+v", u, start.Message)
		}
		if delta.Usage == nil || *delta.Usage != want {
			t.Errorf("%+v: message_delta usage %+v", u, delta.Usage)
		}
	}
}
