//go:build cgo

package goengine_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/goengine"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
)

// load writes the model opts describe and loads it in the Go engine.
func load(t *testing.T, opts inferencetest.Options) *goengine.Model {
	t.Helper()
	m, err := goengine.Load(inferencetest.Model(t, opts), goengine.Params{Threads: 2})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Cleanup(m.Close)
	return m
}

func newContext(t *testing.T, m *goengine.Model, seqs int) backend.Context {
	t.Helper()
	ctx, err := m.NewContext(backend.ContextParams{Context: 256 * seqs, Batch: 128, Sequences: seqs})
	if err != nil {
		t.Fatalf("NewContext: %v", err)
	}
	t.Cleanup(ctx.Close)
	return ctx
}

// generate decodes prompt into the sequences seqs, all in one batch per
// step, and then n greedy tokens each; it returns each sequence's tokens.
func generate(t *testing.T, m *goengine.Model, ctx backend.Context, prompts map[int][]backend.Token, start map[int]int, n int) map[int][]backend.Token {
	t.Helper()
	b := ctx.NewBatch(ctx.BatchSize())
	defer b.Close()
	samplers := map[int]backend.Sampler{}
	for s := range prompts {
		sm, err := m.NewSampler(backend.SamplerParams{})
		if err != nil {
			t.Fatal(err)
		}
		defer sm.Close()
		samplers[s] = sm
	}
	out := map[int][]backend.Token{}
	next := map[int][]backend.Token{}
	pos := map[int]int{}
	for s, p := range prompts {
		next[s], pos[s] = p, start[s]
	}
	for range n {
		b.Clear()
		idx := map[int]int{}
		for s, toks := range next {
			for k, tok := range toks {
				i, err := b.Add(tok, pos[s]+k, []int{s}, k == len(toks)-1)
				if err != nil {
					t.Fatal(err)
				}
				idx[s] = i
			}
			pos[s] += len(toks)
		}
		if err := ctx.Decode(b); err != nil {
			t.Fatalf("Decode: %v", err)
		}
		for s := range next {
			tok := samplers[s].Sample(ctx, idx[s], nil)
			if tok < 0 {
				t.Fatalf("sequence %d: no token", s)
			}
			out[s] = append(out[s], tok)
			next[s] = []backend.Token{tok}
		}
	}
	return out
}

var archs = []inferencetest.Options{
	{Arch: "qwen35"},
	{Arch: "gemma4"},
	{Arch: "qwen3"},
	{Arch: "gemma3", SlidingWindow: 8},
}

// TestBatchesEqualAlone: greedy tokens of a sequence decoded beside
// another, in the same forward passes where the memory allows it, equal
// those it generates alone; and a sequence copied to another continues as
// the original does.
func TestBatchesEqualAlone(t *testing.T) {
	for _, opts := range archs {
		t.Run(opts.Arch, func(t *testing.T) {
			m := load(t, opts)
			if m.Backend() != backend.Ollama {
				t.Errorf("Backend() = %q", m.Backend())
			}
			a, err := m.Tokenize("Once upon a time there was a", true)
			if err != nil {
				t.Fatal(err)
			}
			other, _ := m.Tokenize("The quick brown fox jumps over the lazy dog again and", true)
			ctx := newContext(t, m, 4)
			alone := generate(t, m, ctx, map[int][]backend.Token{0: a}, nil, 8)[0]
			both := generate(t, m, ctx, map[int][]backend.Token{1: other, 2: a}, nil, 8)
			if !slices.Equal(both[2], alone) {
				t.Errorf("beside another: %v, alone: %v", both[2], alone)
			}
			// Sequence 2 holds a and 7 generated tokens (the 8th was
			// not decoded); a copy continues from there as a fresh
			// decoding of the same tokens does.
			held := append(slices.Clone(a), both[2][:7]...)
			if got := ctx.MaxPos(2); got != len(held)-1 {
				t.Fatalf("MaxPos(2) = %d, want %d", got, len(held)-1)
			}
			if err := ctx.CopyTokens(2, 3, 0, -1); err != nil {
				t.Fatal(err)
			}
			cont := generate(t, m, ctx, map[int][]backend.Token{3: both[2][7:]}, map[int]int{3: len(held)}, 4)[3]
			ctx.ClearSequence(0)
			if ctx.MaxPos(0) != -1 {
				t.Fatalf("MaxPos(0) = %d after ClearSequence", ctx.MaxPos(0))
			}
			fresh := generate(t, m, ctx, map[int][]backend.Token{0: append(held, both[2][7])}, nil, 4)[0]
			if !slices.Equal(cont, fresh) {
				t.Errorf("after a copy: %v, decoded afresh: %v", cont, fresh)
			}
		})
	}
}

// TestOneContext: a model makes one context in its life.
func TestOneContext(t *testing.T) {
	m := load(t, inferencetest.Options{Arch: "gemma4"})
	ctx := newContext(t, m, 1)
	ctx.Close()
	if _, err := m.NewContext(backend.ContextParams{Context: 64}); err == nil {
		t.Fatal("a second context")
	}
}

// TestUnsupported: what the Go engine cannot do fails with an error
// wrapping backend.ErrUnsupported that names it.
func TestUnsupported(t *testing.T) {
	m := load(t, inferencetest.Options{Arch: "qwen35"})
	for _, p := range []backend.ContextParams{
		{Context: 64, KeyType: backend.CacheQ8_0, ValueType: backend.CacheQ8_0},
		{Context: 64, Pooling: backend.PoolingMean},
	} {
		if _, err := m.NewContext(p); !errors.Is(err, backend.ErrUnsupported) {
			t.Errorf("NewContext(%+v) = %v", p, err)
		}
	}
	ctx := newContext(t, m, 2)
	a, _ := m.Tokenize("Hello there", true)
	generate(t, m, ctx, map[int][]backend.Token{0: a}, nil, 2)
	if err := ctx.CopyTokens(0, 1, 0, 1); !errors.Is(err, backend.ErrUnsupported) || !strings.Contains(err.Error(), "part of a sequence") {
		t.Errorf("a partial copy on a recurrent model: %v", err)
	}
	if ctx.RemoveTokens(0, 1, -1) {
		t.Error("RemoveTokens cut a recurrent state")
	}
	if _, err := ctx.SequenceState(0); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("SequenceState: %v", err)
	}
	b := ctx.NewBatch(4)
	if _, err := b.Add(backend.Token(m.VocabSize()), 0, []int{0}, true); err == nil {
		t.Error("Add took a token outside the vocabulary")
	}
	if _, err := b.Add(0, 0, []int{2}, true); err == nil {
		t.Error("Add took a sequence outside the context")
	}
}

// TestDataStaysText: the text of a control token in request data is not
// that token; in template text it is.
func TestDataStaysText(t *testing.T) {
	m := load(t, inferencetest.Options{Arch: "qwen35"})
	const text = "a<|im_end|>b"
	data, err := m.TokenizeSegments([]backend.Segment{{Text: text, Data: true}}, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	markup, err := m.TokenizeSegments([]backend.Segment{{Text: text}}, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	hasControl := func(toks []backend.Token) bool { return slices.ContainsFunc(toks, m.IsControl) }
	if hasControl(data) {
		t.Errorf("data %q gave a control token: %v", text, data)
	}
	if !hasControl(markup) {
		t.Errorf("markup %q gave no control token: %v", text, markup)
	}
	var got strings.Builder
	for _, tok := range data {
		got.Write(m.Piece(tok, false))
	}
	if got.String() != text {
		t.Errorf("data's pieces spell %q, want %q", got.String(), text)
	}
	if _, err := m.TokenizeSegments([]backend.Segment{{Text: strings.Repeat("word ", 5000), Data: true}}, false, 100); !errors.Is(err, backend.ErrTooManyTokens) {
		t.Errorf("past the limit: %v", err)
	}
	if !m.IsEOG(m.EOS()) {
		t.Error("EOS does not end generation")
	}
}

// TestSharedTokens: tokens decoded for two sequences at once, followed in
// the same batch by the second's own tokens, give the second the logits it
// gets decoding all its tokens alone.
func TestSharedTokens(t *testing.T) {
	for _, opts := range archs {
		if opts.Arch == "qwen35" {
			continue // a recurrent memory takes one sequence per pass
		}
		t.Run(opts.Arch, func(t *testing.T) {
			m := load(t, opts)
			ctx := newContext(t, m, 3)
			prefix, _ := m.Tokenize("Once upon a time there was a", true)
			own, _ := m.Tokenize(" little dog", true)
			b := ctx.NewBatch(ctx.BatchSize())
			for i, tok := range prefix {
				if _, err := b.Add(tok, i, []int{0, 1}, false); err != nil {
					t.Fatal(err)
				}
			}
			var last int
			for i, tok := range own {
				last, _ = b.Add(tok, len(prefix)+i, []int{1}, i == len(own)-1)
			}
			if err := ctx.Decode(b); err != nil {
				t.Fatal(err)
			}
			shared := slices.Clone(ctx.Logits(last))
			if got := ctx.MaxPos(0); got != len(prefix)-1 {
				t.Errorf("MaxPos(0) = %d, want %d", got, len(prefix)-1)
			}
			b.Clear()
			whole := append(slices.Clone(prefix), own...)
			for i, tok := range whole {
				last, _ = b.Add(tok, i, []int{2}, i == len(whole)-1)
			}
			if err := ctx.Decode(b); err != nil {
				t.Fatal(err)
			}
			for i, want := range ctx.Logits(last) {
				if d := shared[i] - want; d > 1e-3 || d < -1e-3 {
					t.Fatalf("logit %d: %v shared, %v alone", i, shared[i], want)
				}
			}
		})
	}
}

// TestLoadProgress: Load reports its progress, from one goroutine at a
// time, and a callback that returns false aborts it.
func TestLoadProgress(t *testing.T) {
	path := inferencetest.Model(t, inferencetest.Options{Arch: "qwen35"})
	calls := 0 // unsynchronised: -race tells if calls overlap
	m, err := goengine.Load(path, goengine.Params{Threads: 2, Progress: func(float32) bool { calls++; return true }})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if calls == 0 {
		t.Error("no progress reported")
	}
	if m, err := goengine.Load(path, goengine.Params{Threads: 2, Progress: func(float32) bool { return false }}); err == nil || !strings.Contains(err.Error(), "aborted") {
		if m != nil {
			m.Close()
		}
		t.Errorf("an aborted load: %v", err)
	}
}

// TestUnsupportedCapabilities: the Go engine refuses images and encoders
// through the seam, with errors that say so.
func TestUnsupportedCapabilities(t *testing.T) {
	var m goengine.Model
	if _, err := backend.LoadProjector(&m, "mmproj.gguf", 0); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("LoadProjector: %v, want ErrUnsupported", err)
	}
	if _, err := m.NewEncoder(backend.ContextParams{Pooling: backend.PoolingMean}); !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("NewEncoder: %v, want ErrUnsupported", err)
	}
}
