// Package formatstest holds what the tests of the wire styles share:
// their golden files, which live together under formats/testdata, JSON
// written as the server writes it, the ids and clock of built responses,
// the engine results and events the goldens are made of, and a fake
// server for the official SDKs to read the goldens from.
//
// Its values are fixtures: each call returns a fresh copy, safe to
// change. The -update flag of a test binary that imports it rewrites the
// golden files instead of comparing them.
package formatstest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
)

var update = flag.Bool("update", false, "rewrite the golden files under formats/testdata/")

// dir is formats/testdata, found from this file's place in the tree.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata")
}

// Golden compares got with the golden file formats/testdata/name, or,
// with -update, writes got there.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join(dir(), name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n got: %s\nwant: %s", name, got, want)
	}
}

// ReadGolden returns the bytes of the golden file formats/testdata/name.
func ReadGolden(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// JSON marshals v as the server writes it (no HTML escaping), indented
// for readable goldens.
func JSON(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Options gives ids prefix+"test"+n, n counting from 1, and a fixed
// clock, as the goldens have them.
func Options() formats.Options {
	n := 0
	return formats.Options{
		NewID: func(prefix string) string { n++; return fmt.Sprintf("%stest%d", prefix, n) },
		Now:   func() time.Time { return time.Unix(1767225600, 0) },
	}
}

// Parse parses a request body of one style, failing t on an error.
func Parse(t testing.TB, parse func([]byte) (formats.Request, error), body string) formats.Request {
	t.Helper()
	r, err := parse([]byte(body))
	if err != nil {
		t.Fatalf("parse %s: %v", body, err)
	}
	return r
}

// Bodies of the goldens: the same question in each style, with a system
// prompt.
const (
	ChatBody      = `{"model":"core-2-5-pro","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Capital of France?"}],"reasoning":{"summary":"auto"}}`
	MessagesBody  = `{"model":"core-2-5-pro","system":[{"type":"text","text":"Be brief."}],"messages":[{"role":"user","content":[{"type":"text","text":"Capital of France?"}]}]}`
	ResponsesBody = `{"model":"core-2-5-pro","instructions":"Be brief.","input":"Capital of France?","metadata":{"topic":"geo"}}`
)

// Thinking is a result that thought, with a summary of its thinking,
// and ended on the end-of-turn token.
func Thinking() inference.Result {
	return inference.Result{
		Text: "Paris is the capital of France.", Reasoning: "The user asks for a capital.\nIt is Paris.", Summary: "Asked for a capital: Paris.",
		FinishReason: inference.FinishStop, StopToken: 151645,
		Usage:   inference.Usage{PromptTokens: 20, CachedTokens: 8, CompletionTokens: 15, ReasoningTokens: 9},
		Timings: inference.Timings{Prefill: 30 * time.Millisecond, Decode: 150 * time.Millisecond, Thinking: 90 * time.Millisecond},
	}
}

// StopSeq is a result ended by a stop sequence.
func StopSeq() inference.Result {
	return inference.Result{
		Text: "One, two", FinishReason: inference.FinishStopSequence, StopSequence: ", three",
		Usage: inference.Usage{PromptTokens: 12, CompletionTokens: 4},
	}
}

// Length is a result cut at its output limit.
func Length() inference.Result {
	return inference.Result{
		Text: "Once upon a", FinishReason: inference.FinishLength,
		Usage: inference.Usage{PromptTokens: 5, CompletionTokens: 3},
	}
}

// Logprobs is Length with log-probabilities: two tokens, the second half
// a character, with two alternatives each.
func Logprobs() inference.Result {
	res := Length()
	res.Text = "Hi\uFFFD"
	res.Logprobs = []inference.TokenLogprob{
		{Token: 13, Bytes: []byte("Hi"), Logprob: -0.25, Top: []inference.TopLogprob{
			{Token: 13, Bytes: []byte("Hi"), Logprob: -0.25}, {Token: 14, Bytes: []byte("Hello"), Logprob: -1.5}}},
		{Token: 200, Bytes: []byte{0xe2, 0x82}, Logprob: -3, Top: []inference.TopLogprob{
			{Token: 9, Bytes: []byte("!"), Logprob: -0.125}, {Token: 200, Bytes: []byte{0xe2, 0x82}, Logprob: -3}}},
	}
	return res
}

// ThinkingEvents are the stream of Thinking, with a Final whose Text is
// the whole output.
func ThinkingEvents() []inference.Event {
	final := Thinking()
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

// PlainEvents are the stream of StopSeq, without reasoning.
func PlainEvents() []inference.Event {
	final := StopSeq()
	return []inference.Event{{Text: "One"}, {Text: ", two"}, {Final: &final}}
}

// Encoder is what the styles' stream encoders share.
type Encoder interface {
	Event(inference.Event) error
	Fail(error) error
}

// Stream feeds events (then err, if any) through enc, failing t on a
// write error.
func Stream(t testing.TB, enc Encoder, events []inference.Event, err error) {
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

// ParamNames checks a style's table of parameter names: every name holds
// as many "[]" as its key, so that each of the path's indexes lands in
// the name.
func ParamNames(t testing.TB, names formats.ParamNames) {
	t.Helper()
	if len(names) == 0 {
		t.Fatal("the table is empty")
	}
	for key, name := range names {
		if strings.Count(key, "[]") != strings.Count(name, "[]") {
			t.Errorf("%q names %q", key, name)
		}
	}
}
