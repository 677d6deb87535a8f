package chat

import (
	"bytes"
	"testing"

	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/inference"
)

func TestGoldenChatLogprobs(t *testing.T) {
	req := formatstest.Parse(t, Parse, `{"model":"core-2-5-pro","messages":[{"role":"user","content":"Hi"}],"logprobs":true,"top_logprobs":2,"n":2}`)
	if req.Choices != 2 || !req.Logprobs || req.TopLogprobs != 2 {
		t.Fatalf("parsed %+v", req.Request)
	}
	one, two := formatstest.Logprobs(), formatstest.StopSeq()
	two.Logprobs = []inference.TokenLogprob{{Token: 5, Bytes: []byte("One"), Logprob: -0.5, Top: []inference.TopLogprob{{Token: 5, Bytes: []byte("One"), Logprob: -0.5}}}}
	formatstest.Golden(t, "chat_completion_logprobs.json", formatstest.JSON(t, NewCompletion(req, []inference.Result{one, two}, formatstest.Options())))

	// Two choices interleaved; the entries go with their tokens' text, and
	// the usage counts the prompt once.
	var b bytes.Buffer
	req.IncludeUsage = true
	formatstest.Stream(t, NewStream(&b, req, formatstest.Options()), []inference.Event{
		{Choice: 1, Text: "One", Logprobs: two.Logprobs},
		{Choice: 0, Text: "Hi", Logprobs: one.Logprobs[:1]},
		{Choice: 1, Final: &two},
		{Choice: 0, Final: &one}, // its second entry comes with the result
	}, nil)
	formatstest.Golden(t, "chat_stream_logprobs_choices.sse", b.Bytes())
}

func TestChatStreamRefusesAStrayChoice(t *testing.T) {
	req := formatstest.Parse(t, Parse, `{"model":"m","messages":[{"role":"user","content":"Hi"}]}`)
	s := NewStream(&bytes.Buffer{}, req, formatstest.Options())
	if err := s.Event(inference.Event{Choice: 1, Text: "x"}); err == nil {
		t.Error("an event of choice 1 in a stream of one choice was encoded")
	}
	final := formatstest.StopSeq()
	if err := s.Event(inference.Event{Final: &final}); err != nil {
		t.Fatal(err)
	}
	if err := s.Event(inference.Event{Text: "late"}); err != nil {
		t.Errorf("an event after the end: %v", err) // ignored, as before
	}
}
