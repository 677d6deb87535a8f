package llamacpp_test

import (
	"path/filepath"
	"testing"

	"github.com/inferkit/inferkit/internal/llamacpp"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
)

// A grammar whose only way on is a banned token leaves no candidate:
// Sample says so with -1 instead of letting llama.cpp abort the process.
func TestSampleGrammarDeadEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := inferencetest.WriteModel(path, inferencetest.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := llamacpp.LoadModel(path, llamacpp.ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, err := llamacpp.NewContext(m, llamacpp.ContextParams{Context: 64, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	b := llamacpp.NewBatch(ctx, 8)
	defer b.Close()
	g, err := llamacpp.NewGrammar(m, `root ::= "a"`)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s, err := llamacpp.NewSampler(m, llamacpp.SamplerParams{Ban: m.EOGTokens()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	decode := func(tok llamacpp.Token, pos int) {
		b.Clear()
		if _, err := b.Add(tok, pos, []int{0}, true); err != nil {
			t.Fatal(err)
		}
		if err := ctx.Decode(b); err != nil {
			t.Fatal(err)
		}
	}
	decode(m.BOS(), 0)
	first := s.Sample(ctx, 0, g)
	if string(m.Piece(first, false)) != "a" {
		t.Fatalf("first token %d (%q), want the grammar's \"a\"", first, m.Piece(first, false))
	}
	decode(first, 1)
	if got := s.Sample(ctx, 0, g); got != -1 {
		t.Fatalf("after the grammar's end with end-of-turn banned: token %d, want -1", got)
	}
}
