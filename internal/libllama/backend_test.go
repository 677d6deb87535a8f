package libllama_test

import (
	"errors"
	"math"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/grammar"
	"github.com/inferkit/inferkit/internal/grammar/grammartest"
	"github.com/inferkit/inferkit/internal/libllama"
	"github.com/inferkit/inferkit/internal/llamacpp"
	"github.com/inferkit/inferkit/internal/tinymodel"
)

// loadBoth loads the file opts describe on the library and on the
// compiled-in llama.cpp.
func loadBoth(t *testing.T, opts tinymodel.Options) (*libllama.Model, *llamacpp.Model) {
	t.Helper()
	lib := library(t)
	path := tinymodel.Model(t, opts)
	a, err := lib.LoadModel(path, libllama.ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	b, err := llamacpp.LoadModel(path, llamacpp.ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return a, b
}

// relDiff is the largest difference of a and b over the largest |b|.
func relDiff(a, b []float32) float64 {
	var scale float64
	for _, x := range b {
		scale = max(scale, math.Abs(float64(x)))
	}
	return maxDiff(a, b) / max(scale, 1e-9)
}

// On the architectures both load, the library and the compiled-in
// llama.cpp tokenize alike and give the same logits, within 1e-3 of the
// largest (a year of kernel changes reorders float sums), through a
// prompt and a continuation in a second batch.
func TestAgreesWithCompiledIn(t *testing.T) {
	for _, opts := range []tinymodel.Options{
		{}, {Arch: "qwen3"}, {Arch: "gemma3", SlidingWindow: 8, Layers: 6}, {Arch: "mamba"}, {Arch: "jamba"},
	} {
		name := opts.Arch
		if name == "" {
			name = "llama"
		}
		t.Run(name, func(t *testing.T) {
			a, b := loadBoth(t, opts)
			const text = "The quick brown fox jumps over the lazy dog, again and again."
			ta, err := a.TokenizeSegments([]backend.Segment{{Text: text, Data: true}}, true, 0)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := b.TokenizeSegments([]backend.Segment{{Text: text, Data: true}}, true, 0)
			if err != nil || !equal(ta, tb) {
				t.Fatalf("tokens %v, llama.cpp %v (%v)", ta, tb, err)
			}
			ca := newContext(t, a, backend.ContextParams{Context: 128})
			cb, err := b.NewContext(backend.ContextParams{Context: 128, Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer cb.Close()
			half := len(ta) / 2
			for _, part := range [][2]int{{0, half}, {half, len(ta)}} {
				la := decodeAt(t, ca, ta[part[0]:part[1]], part[0], 0)
				lb := decodeAt(t, cb, tb[part[0]:part[1]], part[0], 0)
				if d := relDiff(la, lb); d > 1e-3 {
					t.Fatalf("tokens %v: logits differ by %.3g of the largest", part, d)
				}
				if argmax(la) != argmax(lb) {
					t.Fatalf("tokens %v: greedy %d, llama.cpp %d", part, argmax(la), argmax(lb))
				}
			}
		})
	}
}

func equal(a, b []backend.Token) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A prefix copied to another sequence, or a sequence cut back to one,
// continues as a cold decode of the same tokens does.
func TestPrefixReuse(t *testing.T) {
	m := load(t, tinymodel.Options{Arch: "qwen3"})
	toks, err := m.Tokenize("A shared prefix, then one ending or another.", false)
	if err != nil {
		t.Fatal(err)
	}
	n := len(toks)
	ctx := newContext(t, m, backend.ContextParams{Context: 256, Sequences: 3})
	cold := decodeAt(t, ctx, toks, 0, 2)

	decodeAt(t, ctx, toks[:n-3], 0, 0)
	if err := ctx.CopyTokens(0, 1, 0, n-5); err != nil {
		t.Fatal(err)
	}
	if got := ctx.MaxPos(1); got != n-6 {
		t.Fatalf("copy of [0, %d): last position %d", n-5, got)
	}
	if d := maxDiff(decodeAt(t, ctx, toks[n-5:], n-5, 1), cold); d > 1e-4 {
		t.Fatalf("on a copied prefix: logits differ by %g", d)
	}
	if !ctx.RemoveTokens(0, n-7, -1) || ctx.MaxPos(0) != n-8 {
		t.Fatalf("cut back to %d: last position %d", n-7, ctx.MaxPos(0))
	}
	if d := maxDiff(decodeAt(t, ctx, toks[n-7:], n-7, 0), cold); d > 1e-4 {
		t.Fatalf("on a prefix cut back: logits differ by %g", d)
	}
	ctx.ClearSequence(0)
	if ctx.MaxPos(0) != -1 || ctx.MaxPos(1) != n-1 {
		t.Fatalf("after clearing sequence 0: last positions %d and %d", ctx.MaxPos(0), ctx.MaxPos(1))
	}
}

// Under a grammar, sampling writes the grammar's text; a grammar whose
// only way on is a banned token gives -1, not an abort; grammars past
// the bounds are refused before the library parses them.
func TestGrammars(t *testing.T) {
	m := load(t, tinymodel.Options{})
	ctx := newContext(t, m, backend.ContextParams{Context: 64})
	start, _ := m.Tokenize("Say it:", false)
	g, err := m.NewGrammar(`root ::= "abc" | "abd"`)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s, err := m.NewSampler(backend.SamplerParams{Temperature: 0.8, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	decodeAt(t, ctx, start, 0, 0)
	var text []byte
	pos, idx := len(start), len(start)-1 // the batch index with logits
	for range 8 {
		tok := s.Sample(ctx, idx, g)
		if tok < 0 || m.IsEOG(tok) {
			break
		}
		text = append(text, m.Piece(tok, false)...)
		decodeAt(t, ctx, []backend.Token{tok}, pos, 0)
		pos, idx = pos+1, 0
	}
	if got := string(text); got != "abc" && got != "abd" {
		t.Fatalf("under the grammar: %q", got)
	}

	dead, err := m.NewGrammar(`root ::= "a"`)
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	banned, err := m.NewSampler(backend.SamplerParams{Ban: m.EOGTokens()})
	if err != nil {
		t.Fatal(err)
	}
	defer banned.Close()
	ctx.Clear()
	decodeAt(t, ctx, start, 0, 0)
	if tok := banned.Sample(ctx, len(start)-1, dead); tok < 0 || string(m.Piece(tok, false)) != "a" {
		t.Fatalf("first token %d", tok)
	} else {
		decodeAt(t, ctx, []backend.Token{tok}, len(start), 0)
	}
	if tok := banned.Sample(ctx, 0, dead); tok != -1 {
		t.Fatalf("after the grammar's only text, with its end banned: %d, want -1", tok)
	}

	for _, tc := range grammartest.RefusedGrammars() {
		if g, err := m.NewGrammar(tc.Text); err == nil {
			g.Close()
			t.Errorf("%s: accepted", tc.Name)
		} else if !errors.Is(err, grammar.ErrInvalid) {
			t.Errorf("%s: %v, want grammar.ErrInvalid", tc.Name, err)
		}
	}
	// v0.4.0's parser bounds the rules a repetition expands to more
	// tightly than the compiled-in build: it refuses, with an error, one
	// grammar that the checks pass.
	newerRefuses := map[string]bool{"repetitions": true}
	for _, tc := range grammartest.AcceptedGrammars() {
		g, err := m.NewGrammar(tc.Text)
		switch {
		case newerRefuses[tc.Name] && err == nil:
			g.Close()
			t.Errorf("%s: accepted; the release's parser refused it before", tc.Name)
		case newerRefuses[tc.Name] && !errors.Is(err, grammar.ErrInvalid):
			t.Errorf("%s: %v, want grammar.ErrInvalid", tc.Name, err)
		case newerRefuses[tc.Name]:
		case err != nil:
			t.Errorf("%s: %v", tc.Name, err)
		default:
			g.Close()
		}
	}
}

// The log-sum-exp in C is the Go one's.
func TestLogSumExp(t *testing.T) {
	m := load(t, tinymodel.Options{})
	ctx := newContext(t, m, backend.ContextParams{Context: 64})
	toks, _ := m.Tokenize("Hello", false)
	logits := decodeAt(t, ctx, toks, 0, 0)
	got, want := backend.LogSumExp(ctx, logits), backend.LogSumExp(nil, logits)
	if math.Abs(got-want) > 1e-9 {
		t.Fatalf("LogSumExp %v, Go %v", got, want)
	}
	if !math.IsInf(backend.LogSumExp(ctx, nil), -1) {
		t.Fatal("LogSumExp of nothing is not -Inf")
	}
}

// A reranker's scores and an embedding model's pooled vectors are the
// compiled-in llama.cpp's.
func TestEncoders(t *testing.T) {
	for _, c := range []struct {
		name string
		opts tinymodel.Options
		pool backend.Pooling
	}{
		{"reranker", tinymodel.Options{Arch: "bert"}, backend.PoolingRank},
		{"mean", tinymodel.Options{Arch: "bert", Pooling: "mean"}, backend.PoolingMean},
		{"cls", tinymodel.Options{Arch: "nomic-bert", Pooling: "cls"}, backend.PoolingCLS},
		{"last", tinymodel.Options{Arch: "qwen3", Pooling: "last"}, backend.PoolingLast},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := loadBoth(t, c.opts)
			if a.Pooling() != b.Pooling() {
				t.Fatalf("pooling %v, llama.cpp %v", a.Pooling(), b.Pooling())
			}
			p := backend.ContextParams{Context: 128, Sequences: 2, Pooling: c.pool, Threads: 2}
			ea, err := a.NewEncoder(p)
			if err != nil {
				t.Fatal(err)
			}
			defer ea.Close()
			eb, err := b.NewEncoder(p)
			if err != nil {
				t.Fatal(err)
			}
			defer eb.Close()
			var got [2][2][]float32
			for k, e := range []backend.Encoder{ea, eb} {
				bt := e.NewBatch(64)
				for s, text := range []string{"what is a fox", "a fox is an animal"} {
					toks, err := a.Tokenize(text, false)
					if err != nil {
						t.Fatal(err)
					}
					for i, tok := range toks {
						if _, err := bt.Add(tok, i, []int{s}, false); err != nil {
							t.Fatal(err)
						}
					}
				}
				if err := e.Encode(bt); err != nil {
					t.Fatal(err)
				}
				bt.Close()
				for s := range 2 {
					if c.pool == backend.PoolingRank {
						got[k][s] = e.SequenceScores(s)
					} else {
						got[k][s] = e.SequenceEmbedding(s)
					}
				}
			}
			for s := range 2 {
				if len(got[0][s]) == 0 || relDiff(got[0][s], got[1][s]) > 1e-3 {
					t.Fatalf("sequence %d: %v, llama.cpp %v", s, got[0][s], got[1][s])
				}
			}
		})
	}
}

// Ids, positions, sequences and parameters out of range are refused in
// Go, before the library could read past an array or abort.
func TestBadInputRefused(t *testing.T) {
	m := load(t, tinymodel.Options{})
	ctx := newContext(t, m, backend.ContextParams{Context: 64, Sequences: 2, Batch: 8})
	b := ctx.NewBatch(4)
	defer b.Close()
	for _, c := range []struct {
		tok  backend.Token
		pos  int
		seqs []int
	}{
		{-1, 0, []int{0}}, {backend.Token(m.VocabSize()), 0, []int{0}}, {1, -1, []int{0}}, {1, 1 << 40, []int{0}},
		{1, 0, nil}, {1, 0, []int{2}}, {1, 0, []int{-1}}, {1, 0, []int{0, 1, 0}},
	} {
		if _, err := b.Add(c.tok, c.pos, c.seqs, true); err == nil {
			t.Errorf("Add(%d, %d, %v) accepted", c.tok, c.pos, c.seqs)
		}
	}
	if b.Len() != 0 {
		t.Fatalf("%d tokens in the batch after refusals", b.Len())
	}
	big := ctx.NewBatch(16)
	defer big.Close()
	for i := range 9 {
		if _, err := big.Add(1, i, []int{0}, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := ctx.Decode(big); err == nil {
		t.Error("a batch over BatchSize decoded")
	}
	other := newContext(t, m, backend.ContextParams{Context: 64, Sequences: 3})
	ob := other.NewBatch(2)
	defer ob.Close()
	if err := ctx.Decode(ob); err == nil {
		t.Error("a batch of another context decoded")
	}
	closed := ctx.NewBatch(2)
	closed.Close()
	if err := ctx.Decode(closed); err == nil {
		t.Error("a closed batch decoded")
	}
	if ctx.RemoveTokens(5, 0, -1) || ctx.RemoveTokens(0, -3, -1) || ctx.MaxPos(-1) != -1 {
		t.Error("a sequence or position out of range was taken")
	}
	if ctx.CopyTokens(0, 7, 0, -1) == nil || ctx.CopyTokens(0, 1, -2, -1) == nil {
		t.Error("a copy out of range was taken")
	}
	if m.Piece(-1, true) != nil || m.TokenText(1<<30) != "" || m.IsEOG(-5) || m.IsControl(1<<30) {
		t.Error("a token out of the vocabulary was read")
	}
	for _, p := range []backend.ContextParams{{}, {Context: 64, Sequences: 257}, {Context: 64, Pooling: 9}, {Context: 64, Threads: -1}} {
		if c, err := m.NewContext(p); err == nil {
			c.Close()
			t.Errorf("NewContext(%+v) accepted", p)
		}
	}
	for _, p := range []backend.SamplerParams{{Ban: []backend.Token{-1}}, {TopK: -1}, {Temperature: float32(math.NaN())}, {RepeatPenalty: float32(math.Inf(1))}} {
		if s, err := m.NewSampler(p); err == nil {
			s.Close()
			t.Errorf("NewSampler(%+v) accepted", p)
		}
	}
}

// Batches the library cannot take (a gap in a sequence's positions, a
// position the sequence holds, a token given twice to one sequence) fail
// Add or Decode with an error, and the context decodes on.
func TestRefusedBatchesFail(t *testing.T) {
	m := load(t, tinymodel.Options{})
	ctx := newContext(t, m, backend.ContextParams{Context: 64, Sequences: 2})
	decodeAt(t, ctx, []backend.Token{1, 2, 3}, 0, 0)
	for _, c := range []struct {
		name string
		pos  int
		seqs []int
	}{
		{"a gap in the positions", 40, []int{0}},
		{"a position already held", 1, []int{0}},
		{"one sequence twice", 0, []int{1, 1}},
	} {
		b := ctx.NewBatch(1)
		_, err := b.Add(4, c.pos, c.seqs, true)
		if err == nil {
			err = ctx.Decode(b)
		}
		b.Close()
		if err == nil {
			t.Errorf("%s: decoded", c.name)
		}
		ctx.ClearSequence(1)
	}
	if got := decodeAt(t, ctx, []backend.Token{4}, 3, 0); len(got) != m.VocabSize() {
		t.Fatal("the context no longer decodes")
	}
}
