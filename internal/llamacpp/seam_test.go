package llamacpp_test

import (
	"slices"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/llamacpp"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
)

// foreignBatch is a backend.Batch of another backend.
type foreignBatch struct{ backend.Batch }

// Through the backend interfaces, a model greedily generates what it
// generates through the package's functions; a failed constructor gives
// a nil interface, and a batch of another backend is refused.
func TestModelAsBackend(t *testing.T) {
	lm, err := llamacpp.LoadModel(inferencetest.Model(t, inferencetest.Options{}), llamacpp.ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer lm.Close()
	var m backend.Model = lm
	if m.Backend() != backend.LlamaCpp {
		t.Errorf("Backend() = %q", m.Backend())
	}
	if ctx, err := m.NewContext(backend.ContextParams{}); err == nil || ctx != nil {
		t.Errorf("a context of 0 cells: %v, %v (want a nil interface and an error)", ctx, err)
	}
	if s, err := m.NewSampler(backend.SamplerParams{TopK: -1}); err == nil || s != nil {
		t.Errorf("top_k -1: %v, %v (want a nil interface and an error)", s, err)
	}
	if g, err := m.NewGrammar(`root ::= (`); err == nil || g != nil {
		t.Errorf("an unclosed group: %v, %v (want a nil interface and an error)", g, err)
	}

	generate := func(ctx backend.Context, b backend.Batch, s backend.Sampler, g backend.Grammar) []backend.Token {
		t.Helper()
		var out []backend.Token
		tok := m.BOS()
		for pos := range 6 {
			b.Clear()
			if _, err := b.Add(tok, pos, []int{0}, true); err != nil {
				t.Fatal(err)
			}
			if err := ctx.Decode(b); err != nil {
				t.Fatal(err)
			}
			if tok = s.Sample(ctx, 0, g); tok < 0 {
				t.Fatalf("token %d at %d", tok, pos)
			}
			out = append(out, tok)
		}
		return out
	}

	ctx, err := m.NewContext(backend.ContextParams{Context: 64, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	b := ctx.NewBatch(8)
	defer b.Close()
	if err := ctx.Decode(foreignBatch{}); err == nil {
		t.Error("Decode took another backend's batch")
	}
	s, err := m.NewSampler(backend.SamplerParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	viaSeam := generate(ctx, b, s, nil)

	ctx.Clear()
	s2, err := m.NewSampler(backend.SamplerParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	var none *llamacpp.Grammar // a nil *Grammar is no grammar too
	if got := generate(ctx, b, s2, none); !slices.Equal(got, viaSeam) {
		t.Errorf("under a nil *Grammar: %v, without a grammar: %v", got, viaSeam)
	}

	lc, err := llamacpp.NewContext(lm, llamacpp.ContextParams{Context: 64, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	lb := llamacpp.NewBatch(lc, 8)
	defer lb.Close()
	ls, err := llamacpp.NewSampler(lm, llamacpp.SamplerParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	if direct := generate(lc, lb, ls, nil); !slices.Equal(direct, viaSeam) {
		t.Errorf("through the package's functions: %v, through the interfaces: %v", direct, viaSeam)
	}

	g, err := m.NewGrammar(`root ::= "a"`)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx.Clear()
	b.Clear()
	if _, err := b.Add(m.BOS(), 0, []int{0}, true); err != nil {
		t.Fatal(err)
	}
	if err := ctx.Decode(b); err != nil {
		t.Fatal(err)
	}
	if tok := s.Sample(ctx, 0, g); string(m.Piece(tok, false)) != "a" {
		t.Errorf("under the grammar: token %d (%q), want \"a\"", tok, m.Piece(tok, false))
	}
}
