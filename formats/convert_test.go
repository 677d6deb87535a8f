package formats_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/chat"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/formats/messages"
	"github.com/inferkit/inferkit/formats/responses"
	"github.com/inferkit/inferkit/inference"
)

// richChat is a chat request with every canonical field the three styles
// share.
const richChat = `{"model":"core-2-5-mini","messages":[
 {"role":"user","content":"What is the weather in Paris?"},
 {"role":"assistant","content":"","reasoning_content":"Use the tool.","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
 {"role":"tool","tool_call_id":"c1","content":"sunny"},
 {"role":"user","content":[{"type":"text","text":"And this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}],
 "tools":[{"type":"function","function":{"name":"get_weather","description":"Weather of a city","parameters":{"type":"object"}}}],
 "tool_choice":{"type":"function","function":{"name":"get_weather"}},
 "max_tokens":300,"temperature":0.7,"top_p":0.9,"user":"u1","stream":true,
 "reasoning":{"effort":"low"},"response_format":{"type":"json_schema","json_schema":{"name":"w","schema":{"type":"object"},"strict":true}}}`

// roundTrip converts r into a style and parses it back.
func roundTrip[T any](t *testing.T, to func(formats.Request) T, parse func([]byte) (formats.Request, error), r formats.Request) formats.Request {
	t.Helper()
	b, err := json.Marshal(to(r))
	if err != nil {
		t.Fatal(err)
	}
	out, err := parse(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return out
}

// same compares the fields every style carries.
func same(t *testing.T, style string, a, b formats.Request) {
	t.Helper()
	ai, bi := a.Inference(), b.Inference()
	for _, c := range []struct {
		name string
		x, y any
	}{
		{"model", ai.Model, bi.Model},
		{"messages", ai.Messages, bi.Messages},
		{"tools", ai.Tools, bi.Tools},
		{"max tokens", ai.MaxTokens, bi.MaxTokens},
		{"temperature", *ai.Temperature, *bi.Temperature},
		{"top_p", *ai.TopP, *bi.TopP},
		{"stream", a.Stream, b.Stream},
		{"tool choice", a.ToolChoice, b.ToolChoice},
		{"format type", a.Format.Type, b.Format.Type},
		{"thinking", a.Reasoning.Thinking(), b.Reasoning.Thinking()},
		{"user", a.User, b.User},
	} {
		if !reflect.DeepEqual(c.x, c.y) {
			t.Errorf("%s: %s differs:\n%#v\n%#v", style, c.name, c.x, c.y)
		}
	}
}

func TestRoundTrips(t *testing.T) {
	base := formatstest.Parse(t, chat.Parse, richChat)
	// Each style back to itself keeps the canonical request whole.
	if got := roundTrip(t, chat.NewRequest, chat.Parse, base); !reflect.DeepEqual(got, base) {
		t.Errorf("chat round trip:\n got %#v\nwant %#v", got, base)
	}
	msgs := roundTrip(t, messages.NewRequest, messages.Parse, base)
	same(t, "chat→messages", base, msgs)
	if got := roundTrip(t, messages.NewRequest, messages.Parse, msgs); !reflect.DeepEqual(got, msgs) {
		t.Errorf("messages round trip:\n got %#v\nwant %#v", got, msgs)
	}
	resp := roundTrip(t, responses.NewRequest, responses.Parse, base)
	same(t, "chat→responses", base, resp)
	if got := roundTrip(t, responses.NewRequest, responses.Parse, resp); !reflect.DeepEqual(got, resp) {
		t.Errorf("responses round trip:\n got %#v\nwant %#v", got, resp)
	}
	// Across: messages → responses → chat.
	same(t, "messages→responses→chat", msgs, roundTrip(t, chat.NewRequest, chat.Parse, roundTrip(t, responses.NewRequest, responses.Parse, msgs)))
	// Instructions and system messages stay system text in every style.
	r := formatstest.Parse(t, responses.Parse, formatstest.ResponsesBody)
	c := roundTrip(t, chat.NewRequest, chat.Parse, r)
	if c.Messages[0].Role != inference.RoleSystem || wire.JoinText(c.Messages[0].Content) != "Be brief." {
		t.Errorf("instructions in chat: %+v", c.Messages)
	}
	m := roundTrip(t, messages.NewRequest, messages.Parse, c)
	if m.Instructions != "Be brief." || len(m.Messages) != 1 {
		t.Errorf("system in messages: %q %+v", m.Instructions, m.Messages)
	}
}

// TestResultRoundTrips converts results into each style's response and
// back.
func TestResultRoundTrips(t *testing.T) {
	req := formatstest.Parse(t, chat.Parse, formatstest.ChatBody)
	for _, res := range []inference.Result{formatstest.Thinking(), formatstest.StopSeq(), formatstest.Length()} {
		want := res
		want.Timings = inference.Timings{}
		// Chat and responses carry the reasoning's summary, messages the
		// thinking itself.
		wantChat := want
		wantChat.Reasoning = ""
		if got := chat.NewCompletion(req, []inference.Result{res}, formats.Options{}).Result(); !reflect.DeepEqual(got, wantChat) {
			t.Errorf("chat: got %+v, want %+v", got, wantChat)
		}
		wantMsg := want
		wantMsg.Usage.ReasoningTokens = 0 // messages usage has no reasoning count
		wantMsg.StopToken = 0             // nor a stop token
		wantMsg.Summary = ""
		if got := messages.NewMessage(req, res, formats.Options{}).Result(); !reflect.DeepEqual(got, wantMsg) {
			t.Errorf("messages: got %+v, want %+v", got, wantMsg)
		}
		wantResp := wantChat
		wantResp.StopToken = 0
		if wantResp.FinishReason == inference.FinishStopSequence { // responses have no stop sequences
			wantResp.FinishReason, wantResp.StopSequence = inference.FinishStop, ""
		}
		if got := responses.NewResponse(req, res, formats.Options{}).Result(); !reflect.DeepEqual(got, wantResp) {
			t.Errorf("responses: got %+v, want %+v", got, wantResp)
		}
	}
}

func TestContinue(t *testing.T) {
	first := formatstest.Parse(t, responses.Parse, `{"model":"m","instructions":"Be brief.","input":"Capital of France?"}`)
	history := first.Transcript(formatstest.Thinking())
	next := formatstest.Parse(t, responses.Parse, `{"model":"m","instructions":"Answer in French.","previous_response_id":"resp_1","input":"And Spain?"}`)
	got := formats.Continue(history, next).Inference()
	want := []inference.Message{
		inference.Text(inference.RoleSystem, "Answer in French."),
		inference.Text(inference.RoleUser, "Capital of France?"),
		{Role: inference.RoleAssistant, Content: []inference.Part{{Text: formatstest.Thinking().Text}}, Reasoning: formatstest.Thinking().Reasoning},
		inference.Text(inference.RoleUser, "And Spain?"),
	}
	if !reflect.DeepEqual(got.Messages, want) {
		t.Errorf("messages = %#v", got.Messages)
	}
	if next.PreviousResponseID != "resp_1" || len(next.Messages) != 1 {
		t.Errorf("Continue changed its argument: %+v", next)
	}
}

func TestErrorOf(t *testing.T) {
	for _, tc := range []struct {
		err            error
		status         int
		code, chatType string
		msgType        string
	}{
		{inference.ErrOverloaded, 429, "overloaded", "rate_limit_error", "overloaded_error"},
		{inference.ErrContextLength, 400, "context_length_exceeded", "invalid_request_error", "invalid_request_error"},
		{inference.ErrModelNotFound, 400, "model_not_found", "invalid_request_error", "invalid_request_error"},
		{inference.ErrInvalidRequest, 400, "invalid_value", "invalid_request_error", "invalid_request_error"},
		{inference.ErrClosed, 500, "server_error", "api_error", "api_error"},
		{formats.Unauthorized(), 401, "invalid_api_key", "invalid_request_error", "authentication_error"},
		{formats.ModelNotFound("x"), 404, "model_not_found", "invalid_request_error", "not_found_error"},
		{formats.UnknownModel("x"), 400, "model_not_found", "invalid_request_error", "invalid_request_error"},
		{formats.RateLimited(0, "slow down"), 429, "rate_limit_exceeded", "rate_limit_error", "rate_limit_error"},
		{formats.QuotaExceeded("spent"), 429, "insufficient_quota", "rate_limit_error", "rate_limit_error"},
		{&http.MaxBytesError{Limit: 10}, 413, "request_too_large", "invalid_request_error", "request_too_large"},
		{errors.New("x"), 500, "server_error", "api_error", "api_error"},
	} {
		e := formats.ErrorOf(tc.err)
		if e.Status != tc.status || e.Code != tc.code || e.Type(formats.StyleChat) != tc.chatType || e.Type(formats.StyleMessages) != tc.msgType {
			t.Errorf("%v → %d %s %s %s", tc.err, e.Status, e.Code, e.Type(formats.StyleChat), e.Type(formats.StyleMessages))
		}
	}
	if formats.ErrorOf(nil) != nil {
		t.Error("ErrorOf(nil) != nil")
	}
}

// TestSSEDataLines checks that data with newlines is split into data lines.
func TestSSEDataLines(t *testing.T) {
	var b bytesBuffer
	if err := formats.WriteEvent(&b, "x", []byte("a\nb")); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "event: x\ndata: a\ndata: b\n\n" {
		t.Errorf("got %q", got)
	}
}
