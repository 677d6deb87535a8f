package completions

import (
	"flag"
	"fmt"
	"github.com/inferkit/inferkit/formats/formatstest"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
)

var update = flag.Bool("update", false, "rewrite the golden files under ../testdata/")

// golden compares got with the hub's testdata/name, or writes it with
// -update: the goldens of every style live together.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	formatstest.Golden(t, filepath.Join("..", "testdata", name), got, *update)
}

// mustJSON marshals v as the server writes it (no HTML escaping),
// indented for readable goldens.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	return formatstest.JSON(t, v)
}

// testOptions gives ids prefix+"test"+n and a fixed clock, as the hub's
// goldens have them.
func testOptions() formats.Options {
	n := 0
	return formats.Options{
		NewID: func(prefix string) string { n++; return fmt.Sprintf("%stest%d", prefix, n) },
		Now:   func() time.Time { return time.Unix(1767225600, 0) },
	}
}

// mustParse parses a legacy completions body.
func mustParse(t *testing.T, body string) formats.Request {
	t.Helper()
	r, err := Parse([]byte(body))
	if err != nil {
		t.Fatalf("parse %s: %v", body, err)
	}
	return r
}

// stream feeds events (then err, if any) through s.
func stream(t *testing.T, s *Stream, events []inference.Event, err error) {
	t.Helper()
	for _, ev := range events {
		if e := s.Event(ev); e != nil {
			t.Fatal(e)
		}
	}
	if err != nil {
		if e := s.Fail(err); e != nil {
			t.Fatal(e)
		}
	}
}

// Results the goldens are made of: the hub's resStopSeq, and its
// logprobResult of two tokens, the second half a character, with two
// alternatives each.
var (
	resStopSeq = inference.Result{
		Text: "One, two", FinishReason: inference.FinishStopSequence, StopSequence: ", three",
		Usage: inference.Usage{PromptTokens: 12, CompletionTokens: 4},
	}
	resLogprobs = inference.Result{
		Text: "Hi\uFFFD", FinishReason: inference.FinishLength,
		Usage: inference.Usage{PromptTokens: 5, CompletionTokens: 3},
		Logprobs: []inference.TokenLogprob{
			{Token: 13, Bytes: []byte("Hi"), Logprob: -0.25, Top: []inference.TopLogprob{
				{Token: 13, Bytes: []byte("Hi"), Logprob: -0.25}, {Token: 14, Bytes: []byte("Hello"), Logprob: -1.5}}},
			{Token: 200, Bytes: []byte{0xe2, 0x82}, Logprob: -3, Top: []inference.TopLogprob{
				{Token: 9, Bytes: []byte("!"), Logprob: -0.125}, {Token: 200, Bytes: []byte{0xe2, 0x82}, Logprob: -3}}},
		},
	}
)
