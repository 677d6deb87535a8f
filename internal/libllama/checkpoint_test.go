package libllama_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/backend/backendtest"
	"github.com/inferkit/inferkit/internal/libllama"
	"github.com/inferkit/inferkit/internal/tinymodel"
)

// Recurrent (Mamba) and hybrid models (Jamba, Qwen3.5 with and without
// its multi-token-prediction block, Qwen3.5's mixture of experts) take
// checkpoints that keep the seam's promises (backendtest.Checkpoints);
// an attention model takes none.
func TestCheckpoints(t *testing.T) {
	for _, opts := range []tinymodel.Options{
		{Arch: "mamba"}, {Arch: "jamba"}, {Arch: "qwen35"}, {Arch: "qwen35", NextN: 1}, {Arch: "qwen35moe", NextN: 1}, {Arch: "qwen3"},
	} {
		name := opts.Arch
		if opts.NextN > 0 {
			name += "-mtp"
		}
		t.Run(name, func(t *testing.T) {
			m := load(t, opts)
			ctx := newContext(t, m, backend.ContextParams{Context: 512, Sequences: 2})
			if opts.Arch == "qwen3" {
				if backend.FindCheckpointer(ctx) != nil {
					t.Error("an attention model takes checkpoints")
				}
				return
			}
			backendtest.Checkpoints(t, m, ctx)
		})
	}
}

// A checkpoint whose fields were altered one at a time never reaches the
// library: each is refused with ErrBadState, leaving the sequence as it
// was, and the checkpoint itself still restores afterwards.
func TestCheckpointFieldsChecked(t *testing.T) {
	m := load(t, tinymodel.Options{Arch: "jamba"})
	ctx := newContext(t, m, backend.ContextParams{Context: 256, Sequences: 2})
	cp := backend.FindCheckpointer(ctx)
	toks, err := m.Tokenize("A prompt long enough to hold a few tokens.", false)
	if err != nil {
		t.Fatal(err)
	}
	decodeAt(t, ctx, toks, 0, 0)
	state, err := cp.Checkpoint(0)
	if err != nil {
		t.Fatal(err)
	}
	n := len(toks)
	decodeAt(t, ctx, toks[:3], n, 0)
	end := ctx.MaxPos(0)
	set := func(off int, v uint32) []byte { return withU32(state, off, v) }
	for _, c := range []struct {
		what  string
		state []byte
	}{
		{"magic", set(0, 0x12345678)},
		{"source sequence", set(4, 1000)},
		{"cell count of a billion", set(8, 1<<30)},
		{"cell count of none", set(8, 0)},
		{"position", set(12, uint32(n))},
		{"negative position", set(12, 0xffffffff)},
		{"sequence count", set(16, 3)},
		{"transposition", set(20, 1)},
		{"layer count", set(24, 1000)},
		{"row type", set(28, 1)}, // f16: the rows are f32
		{"row size", set(32, 0xffffff)},
		{"empty", nil},
	} {
		if err := cp.RestoreCheckpoint(0, n, c.state); !errors.Is(err, backend.ErrBadState) {
			t.Errorf("%s: %v, want ErrBadState", c.what, err)
		}
		if got := ctx.MaxPos(0); got != end {
			t.Errorf("%s: the sequence ends at %d, want %d", c.what, got, end)
		}
	}
	if err := cp.RestoreCheckpoint(0, n, state); err != nil {
		t.Fatal(err)
	}
	if got := ctx.MaxPos(0); got != n-1 {
		t.Errorf("restored sequence ends at %d, want %d", got, n-1)
	}
}

// With ContextParams.Rollback, Qwen3.5's hybrid memory drops up to that
// many of the last Decode's tokens of a sequence, once, and then gives
// the logits of a sequence that never held them; a cut reaching before
// the last Decode, a second cut, and a cut after the state was replaced
// otherwise are refused, since the library would restore a stale
// snapshot, and so are a copy and a checkpoint of the sequence before
// its next Decode, which the library would take from before the cut. Mamba, which the library does not roll back, keeps none.
func TestRollback(t *testing.T) {
	m := load(t, tinymodel.Options{Arch: "qwen35"})
	ctx := newContext(t, m, backend.ContextParams{Context: 256, Sequences: 2, Rollback: 4})
	if got := backend.RollbackLimit(ctx); got != 4 {
		t.Fatalf("RollbackLimit %d, want 4", got)
	}
	toks, err := m.Tokenize("A prompt, then a few drafted tokens to drop.", false)
	if err != nil || len(toks) < 12 {
		t.Fatalf("%d tokens (%v)", len(toks), err)
	}
	n := len(toks) - 4
	decodeAt(t, ctx, toks[:n], 0, 1)
	want := decodeAt(t, ctx, toks[n:n+1], n, 1) // the cold sequence

	decodeAt(t, ctx, toks[:n-1], 0, 0)
	decodeAt(t, ctx, toks[n-1:n+4], n-1, 0) // one kept, four to drop
	if !ctx.RemoveTokens(0, n, -1) || ctx.MaxPos(0) != n-1 {
		t.Fatalf("dropping the last 4 of a Decode of 5: refused, or the sequence ends at %d", ctx.MaxPos(0))
	}
	if ctx.RemoveTokens(0, n-1, -1) {
		t.Error("a second cut before the next Decode was allowed")
	}
	// The library would copy, and write as a checkpoint, the state from
	// before the cut: both are refused until the next Decode.
	cp := backend.FindCheckpointer(ctx)
	if err := ctx.CopyTokens(0, 1, 0, -1); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("copying the cut sequence: %v, want ErrUnsupported", err)
	}
	if _, err := cp.Checkpoint(0); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("a checkpoint of the cut sequence: %v, want ErrUnsupported", err)
	}
	// The state rolled back to was computed inside a batch of five, the
	// cold one inside a batch of n: kernels may sum in another order by
	// batch (the library's AVX2 build does), so equal up to rounding.
	if got := decodeAt(t, ctx, toks[n:n+1], n, 0); maxDiff(got, want) > 1e-5 {
		t.Errorf("after the rollback, logits %g from a sequence's that never held the tokens", maxDiff(got, want))
	}
	if ctx.RemoveTokens(0, n, -1) {
		t.Error("a cut of the whole of the last Decode (its one token) was allowed")
	}
	decodeAt(t, ctx, toks[n+1:n+3], n+1, 0)
	state, err := cp.Checkpoint(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.RestoreCheckpoint(0, n+3, state); err != nil {
		t.Fatal(err)
	}
	if ctx.RemoveTokens(0, n+2, -1) {
		t.Error("a cut after a restored checkpoint was allowed")
	}

	mamba := newContext(t, load(t, tinymodel.Options{Arch: "mamba"}), backend.ContextParams{Context: 256, Rollback: 4})
	if got := backend.RollbackLimit(mamba); got != 0 {
		t.Errorf("mamba: RollbackLimit %d, want 0", got)
	}

	// A recurrent model without checkpoints (a layout not derived)
	// refuses every cut short of the whole state.
	plain := newContext(t, m, backend.ContextParams{Context: 256, Rollback: 4})
	libllama.DropRollback(plain)
	decodeAt(t, plain, toks[:n], 0, 0)
	if plain.RemoveTokens(0, n-2, -1) || plain.MaxPos(0) != n-1 {
		t.Errorf("a cut without rollbacks: allowed, or the sequence ends at %d", plain.MaxPos(0))
	}
	if !plain.RemoveTokens(0, 0, -1) || plain.MaxPos(0) != -1 {
		t.Error("the whole state was not removed")
	}
}

// A Mamba sequence's whole state is its recurrent one: it goes to
// another context and back at its position, and one altered in its cell
// count or position (past the context), or cut short, is refused before
// the library reads it, leaving the sequence empty. A hybrid model's
// states stay off.
func TestRecurrentSequenceStates(t *testing.T) {
	m := load(t, tinymodel.Options{Arch: "mamba"})
	ctx := newContext(t, m, backend.ContextParams{Context: 256, Sequences: 2})
	toks, err := m.Tokenize("A prompt whose state goes to disk and back.", false)
	if err != nil {
		t.Fatal(err)
	}
	decodeAt(t, ctx, toks[:len(toks)-1], 0, 0)
	want := decodeAt(t, ctx, toks[len(toks)-1:], len(toks)-1, 0)
	decodeAt(t, ctx, toks[:len(toks)-1], 0, 1)
	state, err := ctx.SequenceState(1)
	if err != nil {
		t.Fatal(err)
	}
	if lim := backend.SequenceStateLimit(ctx); lim != int64(len(state)) {
		t.Errorf("limit %d, a state of %d bytes", lim, len(state))
	}
	other := newContext(t, m, backend.ContextParams{Context: 256, Sequences: 2})
	if err := other.SetSequenceState(1, state); err != nil {
		t.Fatal(err)
	}
	if got := decodeAt(t, other, toks[len(toks)-1:], len(toks)-1, 1); !slices.Equal(got, want) {
		t.Error("the restored state gives other logits")
	}
	set := func(off int, v uint32) []byte { return withU32(state, off, v) }
	for _, c := range []struct {
		what  string
		state []byte
	}{
		{"a billion cells", set(8, 1<<30)},
		{"a position past the context", set(12, 256)},
		{"a position of -1", set(12, 0xffffffff)},
		{"cut short", state[:len(state)-1]},
	} {
		if err := other.SetSequenceState(0, c.state); !errors.Is(err, backend.ErrBadState) || other.MaxPos(0) != -1 {
			t.Errorf("%s: %v, sequence at %d", c.what, err, other.MaxPos(0))
		}
	}
	hybrid := newContext(t, load(t, tinymodel.Options{Arch: "jamba"}), backend.ContextParams{Context: 256})
	if _, err := hybrid.SequenceState(0); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("a hybrid model's state: %v, want ErrUnsupported", err)
	}
}
