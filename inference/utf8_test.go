//go:build cgo

package inference_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// A byte-level model with random weights emits arbitrary bytes, so its
// UTF-8 characters split across tokens and some bytes are invalid: every
// streamed piece must still be whole, valid UTF-8, and the pieces must add
// up to the final text.
func TestStreamNeverSplitsUTF8(t *testing.T) {
	path := inferencetest.Model(t, inferencetest.Options{Seed: 7})
	e := newEngine(t, inference.Config{Models: []catalog.Model{{ID: "tiny", Path: path}}, Parallel: 4, ContextTokens: 512})
	one := 1.0
	split := 0
	for seed := range int64(8) {
		req := inference.Request{
			Model: "tiny", Prompt: "Grüße, 世界! 🙂", MaxTokens: 200,
			Temperature: &one, TopK: ptr(0), TopP: ptr(1.0), MinP: ptr(0.0), Seed: &seed,
		}
		var b strings.Builder
		for ev, err := range e.Stream(context.Background(), req) {
			if err != nil {
				t.Fatal(err)
			}
			if !utf8.ValidString(ev.Text) {
				t.Fatalf("seed %d: streamed invalid UTF-8 %q", seed, ev.Text)
			}
			b.WriteString(ev.Text)
			if ev.Final != nil && ev.Final.Text != b.String() {
				t.Fatalf("seed %d: final text %q differs from the streamed %q", seed, ev.Final.Text, b.String())
			}
		}
		for _, r := range b.String() {
			if r >= 0x80 && r != utf8.RuneError {
				split++
			}
		}
	}
	if split == 0 {
		t.Fatal("the model produced no multibyte character: the test proved nothing")
	}
	t.Logf("%d multibyte characters streamed", split)
}
