package llamacpp_test

import (
	"slices"
	"testing"

	"github.com/inferkit/inferkit/internal/llamacpp"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
)

// decodeAt decodes toks at positions from pos on seq, and returns the
// logits of the last.
func decodeAt(t testing.TB, ctx *llamacpp.Context, toks []llamacpp.Token, pos, seq int) []float32 {
	t.Helper()
	b := llamacpp.NewBatch(ctx, len(toks))
	defer b.Close()
	for i, tok := range toks {
		if _, err := b.Add(tok, pos+i, []int{seq}, i == len(toks)-1); err != nil {
			t.Fatal(err)
		}
	}
	if err := ctx.Decode(b); err != nil {
		t.Fatal(err)
	}
	return slices.Clone(ctx.Logits(len(toks) - 1))
}

// A sequence's state, saved and set again, in another context and on
// another sequence, gives the next token the logits it had.
func TestSequenceStateRoundTrip(t *testing.T) {
	m, err := llamacpp.LoadModel(inferencetest.Model(t, inferencetest.Options{Embd: 128, Heads: 2}), llamacpp.ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	prompt, err := m.Tokenize("A prefix worth keeping across restarts.", true)
	if err != nil {
		t.Fatal(err)
	}
	params := llamacpp.ContextParams{Context: 256, Sequences: 2, Threads: 1}
	a, err := llamacpp.NewContext(m, params)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	decodeAt(t, a, prompt, 0, 0)
	state, err := a.SequenceState(0)
	if err != nil || len(state) == 0 || len(state) != a.SequenceStateSize(0) {
		t.Fatalf("state of %d bytes (size %d): %v", len(state), a.SequenceStateSize(0), err)
	}
	next := prompt[len(prompt)-1]
	want := decodeAt(t, a, []llamacpp.Token{next}, len(prompt), 0)

	b, err := llamacpp.NewContext(m, params)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.SetSequenceState(1, state); err != nil {
		t.Fatal(err)
	}
	if got := b.MaxPos(1); got != len(prompt)-1 {
		t.Fatalf("restored sequence ends at %d, want %d", got, len(prompt)-1)
	}
	if got := decodeAt(t, b, []llamacpp.Token{next}, len(prompt), 1); !slices.Equal(got, want) {
		t.Error("the restored sequence gives the next token other logits")
	}

	// A state of another shape is refused, and leaves the sequence empty.
	if err := b.SetSequenceState(0, state[:len(state)/2]); err == nil {
		t.Error("half a state was set")
	}
	if b.MaxPos(0) != -1 {
		t.Errorf("a refused state left cells up to %d", b.MaxPos(0))
	}
	q8, err := llamacpp.NewContext(m, llamacpp.ContextParams{Context: 256, Sequences: 2, Threads: 1, KeyType: llamacpp.CacheQ8_0, ValueType: llamacpp.CacheQ8_0})
	if err != nil {
		t.Fatal(err)
	}
	defer q8.Close()
	if err := q8.SetSequenceState(0, state); err == nil {
		t.Error("an f16 state was set into a q8_0 cache")
	}
	if err := q8.SetSequenceState(0, nil); err == nil {
		t.Error("an empty state was set")
	}
	if _, err := q8.SequenceState(5); err == nil {
		t.Error("the state of a sequence the context does not have")
	}
}
