package llamacpp_test

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/llamacpp"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
)

// stateFixture is a context of a tiny model and the state of a sequence
// of n tokens decoded into it.
type stateFixture struct {
	ctx   *llamacpp.Context
	state []byte
	n     int
}

func newStateFixture(t testing.TB, o inferencetest.Options, p llamacpp.ContextParams, n int) stateFixture {
	t.Helper()
	m, err := llamacpp.LoadModel(inferencetest.Model(t, o), llamacpp.ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	ctx, err := llamacpp.NewContext(m, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctx.Close)
	toks := make([]llamacpp.Token, n)
	for i := range toks {
		toks[i] = llamacpp.Token(10 + i%20)
	}
	if n > 0 {
		decodeAt(t, ctx, toks, 0, 0)
	}
	state, err := ctx.SequenceState(0)
	if err != nil {
		t.Fatal(err)
	}
	return stateFixture{ctx, state, n}
}

// Every memory llama.cpp gives the tiny models (a KV cache, with
// transposed values or not, an interleaved-window cache, a recurrent
// state, a hybrid) writes states that the check accepts and that restore;
// the most a state can take is what a sequence holding every cell writes.
func TestSequenceStateCheckAcceptsRealStates(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    inferencetest.Options
		p    llamacpp.ContextParams
	}{
		{"llama", inferencetest.Options{}, llamacpp.ContextParams{Context: 64, Sequences: 2, Threads: 1}},
		{"llama q8_0", inferencetest.Options{Embd: 128, Heads: 2}, llamacpp.ContextParams{Context: 64, Sequences: 2, Threads: 1, KeyType: llamacpp.CacheQ8_0, ValueType: llamacpp.CacheQ8_0}},
		{"llama split", inferencetest.Options{}, llamacpp.ContextParams{Context: 64, Sequences: 2, Threads: 1, SplitKV: true}},
		{"gemma3", inferencetest.Options{Arch: "gemma3"}, llamacpp.ContextParams{Context: 64, Sequences: 2, Threads: 1}},
		{"mamba", inferencetest.Options{Arch: "mamba"}, llamacpp.ContextParams{Context: 64, Sequences: 2, Threads: 1}},
		{"jamba", inferencetest.Options{Arch: "jamba"}, llamacpp.ContextParams{Context: 64, Sequences: 2, Threads: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			one := newStateFixture(t, tc.o, tc.p, 1)
			f := newStateFixture(t, tc.o, tc.p, 9)
			if err := f.ctx.CheckSequenceState(f.state); err != nil {
				t.Fatalf("a state llama.cpp wrote: %v", err)
			}
			if err := f.ctx.CheckSequenceState(one.state); err != nil {
				t.Fatalf("a state of one cell: %v", err)
			}
			if err := f.ctx.SetSequenceState(1, f.state); err != nil {
				t.Fatal(err)
			}
			if got := f.ctx.MaxPos(1); got != f.n-1 {
				t.Errorf("restored up to %d, want %d", got, f.n-1)
			}
			// A state grows by the same bytes per cell (a recurrent
			// state not at all): the most is a sequence holding every
			// cell (with a unified cache, the context's).
			perCell := (len(f.state) - len(one.state)) / (f.n - 1)
			want := int64(len(one.state) + (f.ctx.Size()-1)*perCell)
			got := f.ctx.SequenceStateLimit()
			if got < int64(len(f.state)) || !tc.p.SplitKV && got != want {
				t.Errorf("SequenceStateLimit %d, want %d", got, want)
			}
		})
	}
}

// A model with M-RoPE (several positions per token): llama.cpp restores
// its states reading past the end of a buffer, so none is saved or
// restored.
func TestSequenceStateCheckRefusesMRoPE(t *testing.T) {
	f := newStateFixture(t, inferencetest.Options{}, llamacpp.ContextParams{Context: 64, Sequences: 2, Threads: 1}, 0)
	m, err := llamacpp.LoadModel(inferencetest.Model(t, inferencetest.Options{Arch: "qwen2vl"}), llamacpp.ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, err := llamacpp.NewContext(m, llamacpp.ContextParams{Context: 64, Sequences: 2, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	decodeAt(t, ctx, []llamacpp.Token{10, 11, 12}, 0, 0)
	if ctx.SequenceStateLimit() != 0 || ctx.SequenceStateSize(0) != 0 {
		t.Errorf("SequenceStateLimit %d, SequenceStateSize %d, want 0", ctx.SequenceStateLimit(), ctx.SequenceStateSize(0))
	}
	if _, err := ctx.SequenceState(0); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("SequenceState: %v, want ErrUnsupported", err)
	}
	if err := ctx.SetSequenceState(1, f.state); !errors.Is(err, backend.ErrBadState) {
		t.Errorf("SetSequenceState: %v, want ErrBadState", err)
	}
}

// Offsets in the state of a sequence of n cells of a unified llama cache.
func cellAt(i int) int { return 8 + 12*i }
func dataAt(n int) int { return 8 + 12*n }
func put32(b []byte, off int, v uint32) []byte {
	b = slices.Clone(b)
	binary.LittleEndian.PutUint32(b[off:], v)
	return b
}

// A state damaged in any field llama.cpp reads is refused before
// llama.cpp sees it (some of these abort the process or allocate
// gigabytes inside llama.cpp), and leaves the sequence empty.
func TestSequenceStateCheckRefusesDamage(t *testing.T) {
	f := newStateFixture(t, inferencetest.Options{}, llamacpp.ContextParams{Context: 64, Sequences: 2, Threads: 1}, 9)
	s, n := f.state, f.n
	for _, tc := range []struct {
		name  string
		state []byte
	}{
		{"empty", nil},
		{"two streams", put32(s, 0, 2)},
		{"a position of -1", put32(s, cellAt(3), 0xffffffff)},
		{"a position past the context", put32(s, cellAt(3), uint32(f.ctx.Size()))},
		{"a position twice", put32(s, cellAt(3), 2)},
		{"a cell of two sequences", put32(s, cellAt(2)+4, 2)},
		{"a cell of no sequence", put32(s, cellAt(2)+4, 0)},
		{"a negative sequence id", put32(s, cellAt(2)+8, 0xffffffff)},
		{"a huge cell count", put32(s, 4, 1<<30)},
		{"one cell more", put32(s, 4, uint32(n+1))},
		{"one cell fewer", put32(s, 4, uint32(n-1))},
		{"more cells than the context", put32(s, 4, uint32(f.ctx.Size()+1))},
		{"values transposed otherwise", put32(s, dataAt(n), binary.LittleEndian.Uint32(s[dataAt(n):])^1)},
		{"another layer count", put32(s, dataAt(n)+4, 3)},
		{"another key type", put32(s, dataAt(n)+8, 0)},
		{"another key row size", put32(s, dataAt(n)+12, binary.LittleEndian.Uint32(s[dataAt(n)+12:])*2)},
		{"cut short", s[:len(s)-1]},
		{"cut in the cells", s[:cellAt(4)+2]},
		{"a byte more", append(slices.Clone(s), 0)},
		{"another program's bytes", []byte("#!/bin/sh\necho hello\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := f.ctx.CheckSequenceState(tc.state); !errors.Is(err, backend.ErrBadState) {
				t.Errorf("CheckSequenceState: %v, want ErrBadState", err)
			}
			decodeAt(t, f.ctx, []llamacpp.Token{5, 6}, 0, 1)
			if err := f.ctx.SetSequenceState(1, tc.state); !errors.Is(err, backend.ErrBadState) {
				t.Errorf("SetSequenceState: %v, want ErrBadState", err)
			}
			if got := f.ctx.MaxPos(1); got != -1 {
				t.Errorf("the refused state left the sequence up to %d", got)
			}
		})
	}
	// The state of another cache type: its rows differ.
	q8 := newStateFixture(t, inferencetest.Options{Embd: 128, Heads: 2}, llamacpp.ContextParams{Context: 64, Sequences: 2, Threads: 1, KeyType: llamacpp.CacheQ8_0}, 0)
	f16 := newStateFixture(t, inferencetest.Options{Embd: 128, Heads: 2}, llamacpp.ContextParams{Context: 64, Sequences: 2, Threads: 1}, 3)
	if err := q8.ctx.CheckSequenceState(f16.state); !errors.Is(err, backend.ErrBadState) {
		t.Errorf("an f16 state in a q8_0 cache: %v, want ErrBadState", err)
	}
}

// FuzzSequenceState sets whatever bytes into a sequence: the check
// refuses them or llama.cpp restores them, and the process never aborts.
// Seeded with real states of the tiny model.
func FuzzSequenceState(f *testing.F) {
	fx := newStateFixture(f, inferencetest.Options{Layers: 1, Embd: 32, Heads: 2, KVHeads: 1}, llamacpp.ContextParams{Context: 32, Sequences: 2, Threads: 1}, 3)
	f.Add(fx.state)
	f.Add(put32(fx.state, cellAt(1), 0xffffffff))
	f.Add(fx.state[:len(fx.state)/2])
	f.Fuzz(func(t *testing.T, state []byte) {
		err := fx.ctx.SetSequenceState(1, state)
		if err != nil && !errors.Is(err, backend.ErrBadState) {
			// Passed the check: llama.cpp may still find no room.
			t.Logf("past the check: %v", err)
		}
		if err == nil && fx.ctx.MaxPos(1) >= 32 {
			t.Errorf("restored a position %d past the context", fx.ctx.MaxPos(1))
		}
		fx.ctx.ClearSequence(1)
	})
}

// Every 32-bit field of a real state set to each of a few telling values,
// one at a time: llama.cpp restores what the check lets through without
// aborting, and nothing past the context.
func TestSequenceStateMutations(t *testing.T) {
	fx := newStateFixture(t, inferencetest.Options{Layers: 1, Embd: 32, Heads: 2, KVHeads: 1}, llamacpp.ContextParams{Context: 32, Sequences: 2, Threads: 1}, 3)
	accepted := 0
	for off := 0; off+4 <= len(fx.state); off++ {
		orig := binary.LittleEndian.Uint32(fx.state[off:])
		for _, v := range []uint32{0, 1, 2, orig + 1, orig - 1, 1 << 20, 0x7fffffff, 0xffffffff} {
			if v == orig {
				continue
			}
			state := put32(fx.state, off, v)
			err := fx.ctx.SetSequenceState(1, state)
			if err == nil {
				accepted++
				if fx.ctx.MaxPos(1) >= fx.ctx.Size() {
					t.Errorf("offset %d = %#x: restored a position %d past the context", off, v, fx.ctx.MaxPos(1))
				}
			}
			fx.ctx.ClearSequence(1)
		}
	}
	if accepted == 0 {
		t.Error("no change was accepted: the keys' and values' bytes are not checked, and should pass")
	}
}
