package llamacpp_test

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/internal/grammar"
	"github.com/inferkit/inferkit/internal/grammar/grammartest"
	"github.com/inferkit/inferkit/internal/llamacpp"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
	"github.com/ollama/ollama/llama"
)

// Schemas over the bounds are refused with an error naming the bound:
// each of them crashes, hangs or takes seconds in llama.cpp. All but those
// refused for the grammar they convert to are refused before C (package
// grammar's tests check which).
func TestSchemaGrammarRefuses(t *testing.T) {
	for _, tc := range grammartest.RefusedSchemas() {
		t.Run(tc.Name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			g, err := llamacpp.SchemaGrammar([]byte(tc.Text))
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.Want) {
				t.Fatalf("SchemaGrammar: %v (grammar of %d bytes), want an error with %q", err, len(g), tc.Want)
			}
			if !errors.Is(err, grammar.ErrInvalid) {
				t.Errorf("error %v does not wrap grammar.ErrInvalid", err)
			}
			if took > 2*time.Second {
				t.Errorf("took %v", took)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
		})
	}
}

// Schemas within the bounds convert as llama.cpp's converter converts
// them, including large, deep, recursive and referencing ones.
func TestSchemaGrammarAccepts(t *testing.T) {
	for _, tc := range grammartest.AcceptedSchemas() {
		t.Run(tc.Name, func(t *testing.T) {
			start := time.Now()
			g, err := llamacpp.SchemaGrammar([]byte(tc.Text))
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v", took)
			}
			if want := string(llama.SchemaToGrammar(padded(tc.Text))); g != want {
				t.Errorf("SchemaGrammar differs from llama.cpp's converter:\n%.300s\nwant\n%.300s", g, want)
			}
		})
	}
}

// padded pads a schema with spaces so that ollama's SchemaToGrammar gives
// its result room up to 1 MiB rather than cutting it.
func padded(schema string) []byte {
	return []byte(schema + strings.Repeat(" ", max(0, 256<<10-len(schema))))
}

func tinyModel(t testing.TB) *llamacpp.Model {
	t.Helper()
	m, err := llamacpp.LoadModel(inferencetest.Model(t, inferencetest.Options{}), llamacpp.ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// Grammars over the bounds, or on which llama.cpp would crash or hang, are
// refused before they reach its parser.
func TestNewGrammarRefuses(t *testing.T) {
	m := tinyModel(t)
	for _, tc := range grammartest.RefusedGrammars() {
		t.Run(tc.Name, func(t *testing.T) {
			start := time.Now()
			g, err := llamacpp.NewGrammar(m, tc.Text)
			if err == nil {
				g.Close()
				t.Fatalf("NewGrammar accepts it, want an error with %q", tc.Want)
			}
			if !strings.Contains(err.Error(), tc.Want) || !errors.Is(err, grammar.ErrInvalid) {
				t.Fatalf("NewGrammar: %v, want grammar.ErrInvalid with %q", err, tc.Want)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

// The grammars llama.cpp ships and the converter's grammars pass, and
// llama.cpp's parser accepts them.
func TestNewGrammarAccepts(t *testing.T) {
	m := tinyModel(t)
	for _, tc := range grammartest.AcceptedGrammars() {
		t.Run(tc.Name, func(t *testing.T) {
			g, err := llamacpp.NewGrammar(m, tc.Text)
			if err != nil {
				t.Fatal(err)
			}
			g.Close()
		})
	}
}

// A converted schema constrains generation to JSON it admits.
func TestSchemaGrammarGenerates(t *testing.T) {
	m := tinyModel(t)
	gbnf, err := llamacpp.SchemaGrammar([]byte(`{"type":"object","properties":{"a":{"enum":["x","y"]},"b":{"type":"boolean"},"c":{"type":"integer","minimum":1,"maximum":12}},"required":["a","b","c"]}`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := llamacpp.NewGrammar(m, gbnf)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx, err := llamacpp.NewContext(m, llamacpp.ContextParams{Context: 256, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	b := llamacpp.NewBatch(ctx, 8)
	defer b.Close()
	s, err := llamacpp.NewSampler(m, llamacpp.SamplerParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tok := m.BOS()
	var text []byte
	for pos := range 200 {
		b.Clear()
		if _, err := b.Add(tok, pos, []int{0}, true); err != nil {
			t.Fatal(err)
		}
		if err := ctx.Decode(b); err != nil {
			t.Fatal(err)
		}
		if tok = s.Sample(ctx, 0, g); tok < 0 || m.IsEOG(tok) {
			break
		}
		text = append(text, m.Piece(tok, false)...)
	}
	var v struct {
		A string
		B bool
		C int
	}
	if err := json.Unmarshal(text, &v); err != nil || v.A != "x" && v.A != "y" || v.C < 1 || v.C > 12 {
		t.Fatalf("generated %q: %v", text, err)
	}
}
