package formats_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/chat"
	"github.com/inferkit/inferkit/formats/formatstest"
	"github.com/inferkit/inferkit/formats/messages"
	"github.com/inferkit/inferkit/formats/responses"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or writes it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	formatstest.Golden(t, filepath.Join("testdata", name), got, *update)
}

// readGolden returns a golden file's bytes.
func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testOptions gives ids prefix+"test"+n and a fixed clock.
func testOptions() formats.Options {
	n := 0
	return formats.Options{
		NewID: func(prefix string) string { n++; return fmt.Sprintf("%stest%d", prefix, n) },
		Now:   func() time.Time { return time.Unix(1767225600, 0) },
	}
}

// mustJSON marshals v, indented for readable goldens.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := formats.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := jsonIndent(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// Results the goldens are made of.
var (
	resThinking = inference.Result{
		Text: "Paris is the capital of France.", Reasoning: "The user asks for a capital.\nIt is Paris.", Summary: "Asked for a capital: Paris.",
		FinishReason: inference.FinishStop, StopToken: 151645,
		Usage:   inference.Usage{PromptTokens: 20, CachedTokens: 8, CompletionTokens: 15, ReasoningTokens: 9},
		Timings: inference.Timings{Prefill: 30 * time.Millisecond, Decode: 150 * time.Millisecond, Thinking: 90 * time.Millisecond},
	}
	resStopSeq = inference.Result{
		Text: "One, two", FinishReason: inference.FinishStopSequence, StopSequence: ", three",
		Usage: inference.Usage{PromptTokens: 12, CompletionTokens: 4},
	}
	resLength = inference.Result{
		Text: "Once upon a", FinishReason: inference.FinishLength,
		Usage: inference.Usage{PromptTokens: 5, CompletionTokens: 3},
	}
)

// thinkingEvents are the stream of resThinking, with a Final whose Text is
// the whole output.
func thinkingEvents() []inference.Event {
	final := resThinking
	return []inference.Event{
		{Reasoning: "The user asks for a capital.\n"},
		{Reasoning: "It is Paris."},
		{Summary: "Asked for a capital: "},
		{Summary: "Paris."},
		{Text: "Paris is "},
		{Text: "the capital of France."},
		{Final: &final},
	}
}

// plainEvents are a stream without reasoning, ended by a stop sequence.
func plainEvents() []inference.Event {
	final := resStopSeq
	return []inference.Event{{Text: "One"}, {Text: ", two"}, {Final: &final}}
}

// mustParse parses a request of one style.
func mustParse(t *testing.T, parse func([]byte) (formats.Request, error), body string) formats.Request {
	t.Helper()
	r, err := parse([]byte(body))
	if err != nil {
		t.Fatalf("parse %s: %v", body, err)
	}
	return r
}

const (
	chatBody      = `{"model":"core-2-5-pro","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Capital of France?"}],"reasoning":{"summary":"auto"}}`
	messagesBody  = `{"model":"core-2-5-pro","system":[{"type":"text","text":"Be brief."}],"messages":[{"role":"user","content":[{"type":"text","text":"Capital of France?"}]}]}`
	responsesBody = `{"model":"core-2-5-pro","instructions":"Be brief.","input":"Capital of France?","metadata":{"topic":"geo"}}`
)

// encoder is what the three stream encoders share.
type encoder interface {
	Event(inference.Event) error
	Fail(error) error
}

// stream feeds events (then err, if any) through an encoder.
func stream(t *testing.T, enc encoder, events []inference.Event, err error) {
	t.Helper()
	for _, ev := range events {
		if e := enc.Event(ev); e != nil {
			t.Fatal(e)
		}
	}
	if err != nil {
		if e := enc.Fail(err); e != nil {
			t.Fatal(e)
		}
	}
}

func TestGoldenChat(t *testing.T) {
	req := mustParse(t, chat.Parse, chatBody)
	golden(t, "chat_completion.json", mustJSON(t, chat.NewCompletion(req, []inference.Result{resThinking}, testOptions())))
	golden(t, "chat_completion_stop.json", mustJSON(t, chat.NewCompletion(req, []inference.Result{resStopSeq}, testOptions())))
	golden(t, "chat_completion_length.json", mustJSON(t, chat.NewCompletion(req, []inference.Result{resLength}, testOptions())))

	var b bytes.Buffer
	stream(t, chat.NewStream(&b, req, testOptions()), thinkingEvents(), nil)
	golden(t, "chat_stream.sse", b.Bytes())

	b.Reset()
	req.IncludeUsage = true
	stream(t, chat.NewStream(&b, req, testOptions()), plainEvents(), nil)
	golden(t, "chat_stream_usage.sse", b.Bytes())

	b.Reset()
	stream(t, chat.NewStream(&b, req, testOptions()), plainEvents()[:1], inference.ErrOverloaded)
	golden(t, "chat_stream_error.sse", b.Bytes())
}

func TestGoldenMessages(t *testing.T) {
	req := mustParse(t, messages.Parse, messagesBody)
	golden(t, "message.json", mustJSON(t, messages.NewMessage(req, resThinking, testOptions())))
	golden(t, "message_stop.json", mustJSON(t, messages.NewMessage(req, resStopSeq, testOptions())))
	golden(t, "message_length.json", mustJSON(t, messages.NewMessage(req, resLength, testOptions())))

	var b bytes.Buffer
	s := messages.NewStream(&b, req, testOptions())
	s.InputTokens = 20
	stream(t, s, thinkingEvents(), nil)
	golden(t, "messages_stream.sse", b.Bytes())

	b.Reset()
	stream(t, messages.NewStream(&b, req, testOptions()), plainEvents(), nil)
	golden(t, "messages_stream_stop.sse", b.Bytes())

	b.Reset()
	stream(t, messages.NewStream(&b, req, testOptions()), plainEvents()[:1], errors.New("boom"))
	golden(t, "messages_stream_error.sse", b.Bytes())
}

func TestGoldenResponses(t *testing.T) {
	req := mustParse(t, responses.Parse, responsesBody)
	golden(t, "response.json", mustJSON(t, responses.NewResponse(req, resThinking, testOptions())))
	golden(t, "response_incomplete.json", mustJSON(t, responses.NewResponse(req, resLength, testOptions())))
	golden(t, "response_failed.json", mustJSON(t, responses.FailedResponse(req, inference.ErrOverloaded, testOptions())))

	var b bytes.Buffer
	stream(t, responses.NewStream(&b, req, testOptions()), thinkingEvents(), nil)
	golden(t, "responses_stream.sse", b.Bytes())

	b.Reset()
	final := resLength
	stream(t, responses.NewStream(&b, req, testOptions()), []inference.Event{{Text: "Once upon"}, {Final: &final}}, nil)
	golden(t, "responses_stream_incomplete.sse", b.Bytes())

	b.Reset()
	stream(t, responses.NewStream(&b, req, testOptions()), plainEvents()[:1], errors.New("boom"))
	golden(t, "responses_stream_failed.sse", b.Bytes())
}

func TestGoldenErrors(t *testing.T) {
	cases := map[string]error{
		"invalid":     formats.Invalid("temperature", "temperature must be between 0 and 2, got 3"),
		"auth":        formats.Unauthorized(),
		"not_found":   formats.ModelNotFound("nope"),
		"rate_limit":  formats.RateLimited(2*time.Second, "rate limit reached for requests"),
		"overloaded":  inference.ErrOverloaded,
		"server":      errors.New("secret detail"),
		"too_large":   &http.MaxBytesError{Limit: 1 << 20},
		"context_len": fmt.Errorf("run: %w", inference.ErrContextLength),
		"missing":     formats.Missing("model"),
		"located":     &formats.RequestError{Param: "questions.a.b.type", Loc: []any{"questions", "a.b", "type"}, Message: "unknown type"},
	}
	for name, err := range cases {
		for _, f := range []struct {
			name string
			f    formats.Style
		}{{"chat", formats.StyleChat}, {"messages", formats.StyleMessages}, {"systemone", formats.StyleSystemOne}} {
			rec := httptest.NewRecorder()
			formats.WriteError(rec, f.f, err)
			got := fmt.Sprintf("HTTP %d\nContent-Type: %s\nRetry-After: %s\n\n%s\n", rec.Code,
				rec.Header().Get("Content-Type"), rec.Header().Get("Retry-After"), rec.Body.Bytes())
			golden(t, "error_"+name+"_"+f.name+".txt", []byte(got))
		}
	}
}

func TestGoldenTokenCount(t *testing.T) {
	golden(t, "count_tokens.json", mustJSON(t, messages.TokenCount{InputTokens: 42}))
}

func TestGoldenModels(t *testing.T) {
	var objs []catalog.Object
	for _, id := range []string{policy.Core25Pro, policy.Core25Mini, policy.CoreCode} {
		m, ok := policy.Model(id)
		if !ok {
			t.Fatal(id)
		}
		m.Created = 1767225600
		m.Datacenters = []string{"DE"}
		objs = append(objs, m.Object(32768))
	}
	golden(t, "model_list.json", mustJSON(t, formats.NewModelList(objs)))
	golden(t, "model.json", mustJSON(t, objs[0]))
}

// TestGoldenConverted writes each style's request converted into the
// others.
func TestGoldenConverted(t *testing.T) {
	req := mustParse(t, chat.Parse, chatBody)
	golden(t, "chat_to_messages_request.json", mustJSON(t, messages.NewRequest(req)))
	golden(t, "chat_to_responses_request.json", mustJSON(t, responses.NewRequest(req)))
	req = mustParse(t, messages.Parse, messagesBody)
	golden(t, "messages_to_chat_request.json", mustJSON(t, chat.NewRequest(req)))
	req = mustParse(t, responses.Parse, responsesBody)
	golden(t, "responses_to_chat_request.json", mustJSON(t, chat.NewRequest(req)))
	golden(t, "responses_to_messages_request.json", mustJSON(t, messages.NewRequest(req)))
}
