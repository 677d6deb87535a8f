package formats_test

import (
	"bytes"
	"testing"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/chat"
	"github.com/inferkit/inferkit/formats/responses"
	"github.com/inferkit/inferkit/inference"
)

// logprobResult is an answer of two tokens, the second half a character
// (as a byte-level token may be), with two alternatives each.
func logprobResult() inference.Result {
	res := resLength
	res.Text = "Hi\uFFFD"
	res.Logprobs = []inference.TokenLogprob{
		{Token: 13, Bytes: []byte("Hi"), Logprob: -0.25, Top: []inference.TopLogprob{
			{Token: 13, Bytes: []byte("Hi"), Logprob: -0.25}, {Token: 14, Bytes: []byte("Hello"), Logprob: -1.5}}},
		{Token: 200, Bytes: []byte{0xe2, 0x82}, Logprob: -3, Top: []inference.TopLogprob{
			{Token: 9, Bytes: []byte("!"), Logprob: -0.125}, {Token: 200, Bytes: []byte{0xe2, 0x82}, Logprob: -3}}},
	}
	return res
}

func TestGoldenChatLogprobs(t *testing.T) {
	req := mustParse(t, chat.Parse, `{"model":"core-2-5-pro","messages":[{"role":"user","content":"Hi"}],"logprobs":true,"top_logprobs":2,"n":2}`)
	if req.Choices != 2 || !req.Logprobs || req.TopLogprobs != 2 {
		t.Fatalf("parsed %+v", req.Request)
	}
	one, two := logprobResult(), resStopSeq
	two.Logprobs = []inference.TokenLogprob{{Token: 5, Bytes: []byte("One"), Logprob: -0.5, Top: []inference.TopLogprob{{Token: 5, Bytes: []byte("One"), Logprob: -0.5}}}}
	golden(t, "chat_completion_logprobs.json", mustJSON(t, chat.NewCompletion(req, []inference.Result{one, two}, testOptions())))

	// Two choices interleaved; the entries go with their tokens' text, and
	// the usage counts the prompt once.
	var b bytes.Buffer
	req.IncludeUsage = true
	stream(t, chat.NewStream(&b, req, testOptions()), []inference.Event{
		{Choice: 1, Text: "One", Logprobs: two.Logprobs},
		{Choice: 0, Text: "Hi", Logprobs: one.Logprobs[:1]},
		{Choice: 1, Final: &two},
		{Choice: 0, Final: &one}, // its second entry comes with the result
	}, nil)
	golden(t, "chat_stream_logprobs_choices.sse", b.Bytes())
}

func TestChatStreamRefusesAStrayChoice(t *testing.T) {
	req := mustParse(t, chat.Parse, `{"model":"m","messages":[{"role":"user","content":"Hi"}]}`)
	s := chat.NewStream(&bytes.Buffer{}, req, testOptions())
	if err := s.Event(inference.Event{Choice: 1, Text: "x"}); err == nil {
		t.Error("an event of choice 1 in a stream of one choice was encoded")
	}
	final := resStopSeq
	if err := s.Event(inference.Event{Final: &final}); err != nil {
		t.Fatal(err)
	}
	if err := s.Event(inference.Event{Text: "late"}); err != nil {
		t.Errorf("an event after the end: %v", err) // ignored, as before
	}
}

func TestTokenText(t *testing.T) {
	for in, want := range map[string]string{
		"Hi":           "Hi",
		"\xe2\x82":     `bytes:\xe2\x82`,
		"":             "",
		"\xe2\x82\xac": "€",
	} {
		if got := formats.TokenText([]byte(in)); got != want {
			t.Errorf("TokenText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGoldenResponseLogprobs(t *testing.T) {
	req := mustParse(t, responses.Parse, `{"model":"core-2-5-pro","input":"Hi","top_logprobs":2}`)
	res := logprobResult()
	golden(t, "response_logprobs.json", mustJSON(t, responses.NewResponse(req, res, testOptions())))

	// The deltas carry their tokens' entries; the done event all of them.
	var b bytes.Buffer
	stream(t, responses.NewStream(&b, req, testOptions()), []inference.Event{
		{Text: "Hi", Logprobs: res.Logprobs[:1]},
		{Final: &res},
	}, nil)
	golden(t, "responses_stream_logprobs.sse", b.Bytes())
}
