//go:build cgo

package goengine_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
)

// logitsAfter decodes toks on seq from position pos and returns the last
// token's logits.
func logitsAfter(t *testing.T, ctx backend.Context, toks []backend.Token, pos, seq int) []float32 {
	t.Helper()
	b := ctx.NewBatch(ctx.BatchSize())
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

// On Qwen3.5, a sequence taken back to a checkpoint and given other
// tokens gives the logits a sequence decoded cold gives; checkpoints of
// another size or position, or with values that are not numbers, are
// refused and change nothing. Models without recurrent state take none.
func TestCheckpointRestore(t *testing.T) {
	m := load(t, inferencetest.Options{Arch: "qwen35"})
	ctx := newContext(t, m, 2)
	cp := backend.FindCheckpointer(ctx)
	if cp == nil {
		t.Fatal("no checkpoints on Qwen3.5")
	}
	shared, err := m.Tokenize("A system prompt that every turn shares.", false)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := m.Tokenize(" First question?", false)
	second, _ := m.Tokenize(" Another one?", false)
	// The cold sequence decodes in the same batches: the chunked and the
	// one-token forms of the linear attention round differently.
	logitsAfter(t, ctx, shared, 0, 1)
	want := logitsAfter(t, ctx, second, len(shared), 1)

	logitsAfter(t, ctx, shared, 0, 0)
	state, err := cp.Checkpoint(0)
	if err != nil {
		t.Fatal(err)
	}
	if got := ctx.MaxPos(0); got != len(shared)-1 {
		t.Fatalf("taking a checkpoint left the sequence at %d, want %d", got, len(shared)-1)
	}
	logitsAfter(t, ctx, first, len(shared), 0)
	nan := slices.Clone(state)
	copy(nan[len(nan)-4:], []byte{0, 0, 0xc0, 0x7f})
	for _, bad := range []struct {
		what  string
		n     int
		state []byte
	}{
		{"at another position", len(shared) - 1, state},
		{"cut short", len(shared), state[:len(state)-1]},
		{"with a NaN", len(shared), nan},
	} {
		if err := cp.RestoreCheckpoint(0, bad.n, bad.state); !errors.Is(err, backend.ErrBadState) {
			t.Errorf("a checkpoint %s: %v, want ErrBadState", bad.what, err)
		}
		if got := ctx.MaxPos(0); got != len(shared)+len(first)-1 {
			t.Errorf("a refused checkpoint %s left the sequence at %d, want %d", bad.what, got, len(shared)+len(first)-1)
		}
	}
	if err := cp.RestoreCheckpoint(0, len(shared), state); err != nil {
		t.Fatal(err)
	}
	if got := ctx.MaxPos(0); got != len(shared)-1 {
		t.Fatalf("restored sequence ends at %d, want %d", got, len(shared)-1)
	}
	if got := logitsAfter(t, ctx, second, len(shared), 0); !slices.Equal(got, want) {
		t.Error("the sequence restored to its checkpoint gives other logits than a cold one")
	}

	if backend.FindCheckpointer(newContext(t, load(t, inferencetest.Options{Arch: "qwen3"}), 1)) != nil {
		t.Error("an attention model takes checkpoints")
	}
}
