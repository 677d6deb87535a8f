package libllama_test

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/libllama"
	"github.com/inferkit/inferkit/internal/tinymodel"
)

// greedy decodes n tokens on seq after a prompt whose last logits are
// last, ending at position pos-1, and returns them.
func greedy(t testing.TB, ctx backend.Context, last []float32, pos, seq, n int) []backend.Token {
	t.Helper()
	var out []backend.Token
	for range n {
		tok := backend.Token(argmax(last))
		out = append(out, tok)
		last = decodeAt(t, ctx, []backend.Token{tok}, pos, seq)
		pos++
	}
	return out
}

// savedState decodes a prompt on sequence 1 of a fresh context of p and
// returns its state, the prompt's length and its greedy continuation.
func savedState(t testing.TB, m *libllama.Model, p backend.ContextParams) (state []byte, n int, cont []backend.Token) {
	t.Helper()
	toks, err := m.Tokenize("Once upon a time, a state went to disk and back.", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx := newContext(t, m, p)
	last := decodeAt(t, ctx, toks, 0, 1)
	state, err = ctx.SequenceState(1)
	if err != nil {
		t.Fatal(err)
	}
	if got := ctx.SequenceStateSize(1); got != len(state) {
		t.Fatalf("SequenceStateSize %d, the state is %d bytes", got, len(state))
	}
	if lim := backend.SequenceStateLimit(ctx); lim < int64(len(state)) {
		t.Fatalf("limit %d below a state of %d bytes", lim, len(state))
	}
	return state, len(toks), greedy(t, ctx, last, len(toks), 1, 8)
}

// A sequence's state, restored into another sequence of a fresh context,
// continues greedily as the original did, for each cache the backend
// makes (f16 values transposed, quantized values with flash attention,
// quantized keys beside transposed f16 values, f16 values with flash
// attention, split streams).
func TestSequenceStateRoundTrip(t *testing.T) {
	m := load(t, tinymodel.Options{HeadDim: 32})
	for _, p := range []backend.ContextParams{
		{Context: 128, Sequences: 2},
		{Context: 128, Sequences: 2, KeyType: backend.CacheQ8_0, ValueType: backend.CacheQ8_0},
		{Context: 128, Sequences: 2, KeyType: backend.CacheQ4_0, ValueType: backend.CacheQ4_0},
		{Context: 128, Sequences: 2, KeyType: backend.CacheQ8_0}, // f16 values transposed
		{Context: 128, Sequences: 2, FlashAttention: true},       // f16 values, not transposed
		{Context: 512, Sequences: 2, SplitKV: true},
	} {
		state, n, want := savedState(t, m, p)
		ctx := newContext(t, m, p)
		if err := ctx.SetSequenceState(0, state); err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		if got := ctx.MaxPos(0); got != n-1 {
			t.Fatalf("%+v: restored to last position %d, want %d", p, got, n-1)
		}
		// The last prompt token again, at its position, for its logits.
		ctx.RemoveTokens(0, n-1, -1)
		toks, _ := m.Tokenize("Once upon a time, a state went to disk and back.", false)
		last := decodeAt(t, ctx, toks[n-1:], n-1, 0)
		if got := greedy(t, ctx, last, n, 0, len(want)); !slices.Equal(got, want) {
			t.Fatalf("%+v: restored continuation %v, original %v", p, got, want)
		}
	}
}

// A state of another cache type is refused, before the library reads it.
func TestSequenceStateOtherCacheRefused(t *testing.T) {
	m := load(t, tinymodel.Options{HeadDim: 32})
	state, _, _ := savedState(t, m, backend.ContextParams{Context: 128, Sequences: 2})
	ctx := newContext(t, m, backend.ContextParams{Context: 128, Sequences: 2, KeyType: backend.CacheQ8_0, ValueType: backend.CacheQ8_0})
	if err := ctx.SetSequenceState(0, state); !errors.Is(err, backend.ErrBadState) {
		t.Fatalf("an f16 state in a q8_0 cache: %v", err)
	}
}

// Offsets of fields of a state of the tiny model's f16 cache: the magic,
// the source sequence, the stream count and the cell count, then 12
// bytes a cell (position, sequence count, sequence), then the value
// transposition and the layer count.
const (
	offCells = 12
	offCell0 = 16
)

// withU32 is a copy of state with the little-endian uint32 at off set to
// v: a state damaged in one field.
func withU32(state []byte, off int, v uint32) []byte {
	b := slices.Clone(state)
	binary.LittleEndian.PutUint32(b[off:], v)
	return b
}

// hostile returns damaged copies of a valid state of n cells of a
// context of nCtx cells.
func hostile(state []byte, n, nCtx int) map[string][]byte {
	put := func(off int, v uint32) []byte { return withU32(state, off, v) }
	layers := offCell0 + 12*n + 4
	minus1 := uint32(0xffffffff)
	return map[string][]byte{
		"empty":           nil,
		"truncated":       state[:len(state)-1],
		"header only":     state[:offCell0],
		"bytes appended":  append(slices.Clone(state), 0),
		"bad magic":       put(0, 0x12345678),
		"position -1":     put(offCell0, minus1),
		"position n_ctx":  put(offCell0, uint32(nCtx)),
		"position twice":  put(offCell0+12, 0),
		"huge cell count": put(offCells, 0x7fffffff),
		"cell count -1":   put(offCells, minus1),
		"two sequences":   put(offCell0+4, 2),
		"sequence id -1":  put(offCell0+8, minus1),
		"stream count":    put(8, 2),
		"transposition":   put(layers-4, 0),
		"wrong layers":    put(layers, 99),
		"wrong key type":  put(layers+4, 0),
		"wrong key row":   put(layers+8, 7),
		"one cell short":  put(offCells, uint32(n-1)),
		"one cell more":   put(offCells, uint32(n+1)),
	}
}

// Damaged or crafted states are refused with ErrBadState, without a
// crash, and leave the sequence empty; the context still restores a
// good state afterwards.
func TestHostileSequenceStatesRefused(t *testing.T) {
	m := load(t, tinymodel.Options{})
	p := backend.ContextParams{Context: 128, Sequences: 2}
	state, n, _ := savedState(t, m, p)
	ctx := newContext(t, m, p)
	toks, _ := m.Tokenize("Something else", false)
	for name, b := range hostile(state, n, ctx.Size()) {
		decodeAt(t, ctx, toks, 0, 0)
		if err := ctx.SetSequenceState(0, b); !errors.Is(err, backend.ErrBadState) {
			t.Errorf("%s: %v, want ErrBadState", name, err)
		}
		if ctx.MaxPos(0) != -1 {
			t.Errorf("%s: sequence left at position %d", name, ctx.MaxPos(0))
		}
	}
	if err := ctx.SetSequenceState(0, state); err != nil || ctx.MaxPos(0) != n-1 {
		t.Fatalf("a good state after the bad ones: %v, last position %d", err, ctx.MaxPos(0))
	}
}

// States are off, with ErrUnsupported, where the cache's layout is not
// derived: an encoder's context, a sliding window (two caches), M-RoPE
// (cells with extras), a recurrent state.
func TestSequenceStatesOffElsewhere(t *testing.T) {
	for _, c := range []struct {
		opts tinymodel.Options
		p    backend.ContextParams
	}{
		{tinymodel.Options{}, backend.ContextParams{Context: 64, Pooling: backend.PoolingMean}},
		{tinymodel.Options{Arch: "gemma3"}, backend.ContextParams{Context: 64}},
		{tinymodel.Options{Arch: "qwen2vl"}, backend.ContextParams{Context: 64}},
		{tinymodel.Options{Arch: "mamba"}, backend.ContextParams{Context: 64}},
	} {
		m := load(t, c.opts)
		ctx := newContext(t, m, c.p)
		if _, err := ctx.SequenceState(0); !errors.Is(err, backend.ErrUnsupported) {
			t.Errorf("%s: SequenceState: %v", c.opts.Arch, err)
		}
		if err := ctx.SetSequenceState(0, []byte("anything")); !errors.Is(err, backend.ErrUnsupported) {
			t.Errorf("%s: SetSequenceState: %v", c.opts.Arch, err)
		}
		if backend.SequenceStateLimit(ctx) != 0 || ctx.SequenceStateSize(0) != 0 {
			t.Errorf("%s: states reported", c.opts.Arch)
		}
	}
}

// No state crashes the process: one the validator passes, the library
// restores or refuses; any other is ErrBadState.
func FuzzSetSequenceState(f *testing.F) {
	m := load(f, tinymodel.Options{})
	p := backend.ContextParams{Context: 128, Sequences: 2}
	state, n, _ := savedState(f, m, p)
	ctx := newContext(f, m, p)
	f.Add(state)
	for _, b := range hostile(state, n, ctx.Size()) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := ctx.SetSequenceState(0, b)
		if err != nil && !errors.Is(err, backend.ErrBadState) && ctx.MaxPos(0) != -1 {
			t.Fatalf("refused (%v) but sequence left at %d", err, ctx.MaxPos(0))
		}
		if err == nil && ctx.MaxPos(0) >= ctx.Size() {
			t.Fatalf("restored to position %d", ctx.MaxPos(0))
		}
	})
}

// A state whose cells' positions are valid but scrambled (any distinct
// positions of the context, in any order, under any sequence ids) passes
// the check; the library restores it, and the sequence decodes on.
func TestScrambledPositionsRestore(t *testing.T) {
	m := load(t, tinymodel.Options{})
	p := backend.ContextParams{Context: 128, Sequences: 2}
	state, n, _ := savedState(t, m, p)
	ctx := newContext(t, m, p)
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		b := slices.Clone(state)
		perm := r.Perm(ctx.Size() - 1)[:n]
		for i, pos := range perm {
			binary.LittleEndian.PutUint32(b[offCell0+12*i:], uint32(pos))
			binary.LittleEndian.PutUint32(b[offCell0+12*i+8:], uint32(r.IntN(256)))
		}
		if err := ctx.SetSequenceState(0, b); err != nil {
			t.Fatalf("positions %v: %v", perm, err)
		}
		if got := ctx.MaxPos(0); got != slices.Max(perm) {
			t.Fatalf("positions %v: last position %d", perm, got)
		}
		decodeAt(t, ctx, []backend.Token{1}, ctx.MaxPos(0)+1, 0)
	}
}

// Where the library writes a state that the derived layout does not
// describe, SequenceState turns states off with ErrUnsupported (the
// runner then turns the disk cache off) rather than hand out a state
// that SetSequenceState would refuse.
func TestMisderivedLayoutTurnsStatesOff(t *testing.T) {
	m := load(t, tinymodel.Options{})
	ctx := newContext(t, m, backend.ContextParams{Context: 64})
	toks, _ := m.Tokenize("Some prompt", false)
	decodeAt(t, ctx, toks, 0, 0)
	libllama.SkewStateLayout(ctx)
	if _, err := ctx.SequenceState(0); !errors.Is(err, backend.ErrUnsupported) {
		t.Fatalf("SequenceState: %v, want ErrUnsupported", err)
	}
	if err := ctx.SetSequenceState(0, []byte("anything")); !errors.Is(err, backend.ErrUnsupported) {
		t.Fatalf("SetSequenceState: %v", err)
	}
	if ctx.MaxPos(0) != -1 || backend.SequenceStateLimit(ctx) != 0 || ctx.SequenceStateSize(0) != 0 {
		t.Fatalf("states still on: last position %d, limit %d", ctx.MaxPos(0), backend.SequenceStateLimit(ctx))
	}
}
