package backendtest

import (
	"errors"
	"slices"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
)

// Checkpoints checks that ctx, an empty context of m with two sequences
// at least, is a backend.Checkpointer that keeps its promises: a
// sequence taken back to a checkpoint and given other tokens gives the
// logits that a sequence decoded cold in the same batches gives; a
// checkpoint taken at another position, cut short or one byte longer is
// refused with an error wrapping backend.ErrBadState and leaves the
// sequence as it was.
func Checkpoints(t *testing.T, m backend.Model, ctx backend.Context) {
	t.Helper()
	cp := backend.FindCheckpointer(ctx)
	if cp == nil {
		t.Fatal("no checkpoints on a model with a recurrent state")
	}
	tokens := func(s string) []backend.Token {
		toks, err := m.Tokenize(s, false)
		if err != nil || len(toks) == 0 {
			t.Fatalf("tokenizing %q: %v, %d tokens", s, err, len(toks))
		}
		return toks
	}
	shared, first, second := tokens("A system prompt that every turn shares."), tokens(" First question?"), tokens(" Another one?")
	// The cold sequence decodes in the same batches: a model's chunked
	// and one-token forms may round differently.
	decode(t, ctx, shared, 0, 1)
	want := decode(t, ctx, second, len(shared), 1)

	decode(t, ctx, shared, 0, 0)
	state, err := cp.Checkpoint(0)
	if err != nil {
		t.Fatal(err)
	}
	if got := ctx.MaxPos(0); got != len(shared)-1 {
		t.Fatalf("taking a checkpoint left the sequence at %d, want %d", got, len(shared)-1)
	}
	decode(t, ctx, first, len(shared), 0)
	if ctx.RemoveTokens(0, len(shared), -1) {
		t.Fatal("a recurrent memory cut back without a checkpoint")
	}
	end := len(shared) + len(first) - 1
	for _, bad := range []struct {
		what  string
		n     int
		state []byte
	}{
		{"at another position", len(shared) - 1, state},
		{"cut short", len(shared), state[:len(state)-1]},
		{"one byte longer", len(shared), append(slices.Clone(state), 0)},
	} {
		if err := cp.RestoreCheckpoint(0, bad.n, bad.state); !errors.Is(err, backend.ErrBadState) {
			t.Errorf("a checkpoint %s: %v, want ErrBadState", bad.what, err)
		}
		if got := ctx.MaxPos(0); got != end {
			t.Errorf("a refused checkpoint %s left the sequence at %d, want %d", bad.what, got, end)
		}
	}
	if err := cp.RestoreCheckpoint(0, len(shared), state); err != nil {
		t.Fatal(err)
	}
	if got := ctx.MaxPos(0); got != len(shared)-1 {
		t.Fatalf("restored sequence ends at %d, want %d", got, len(shared)-1)
	}
	if got := decode(t, ctx, second, len(shared), 0); !slices.Equal(got, want) {
		t.Error("the sequence restored to its checkpoint gives other logits than a cold one")
	}
}

// decode decodes toks on seq from position pos and returns the last
// token's logits.
func decode(t *testing.T, ctx backend.Context, toks []backend.Token, pos, seq int) []float32 {
	t.Helper()
	b := ctx.NewBatch(len(toks))
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
