package llamacpp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/internal/grammar"
	"github.com/inferkit/inferkit/internal/grammar/grammartest"
	"github.com/inferkit/inferkit/internal/llamacpp"
)

// FuzzSchemaGrammar checks that what grammar.CheckSchema accepts converts,
// and parses, in llama.cpp without crashing: C is called only for schemas
// it accepts. It starts from the seeds of grammar's FuzzCheckSchema, which
// fuzzes the check itself.
func FuzzSchemaGrammar(f *testing.F) {
	for _, s := range grammartest.Corpus(f, "../grammar/testdata/fuzz/FuzzCheckSchema") {
		f.Add([]byte(s))
	}
	m := tinyModel(f)
	f.Fuzz(func(t *testing.T, schema []byte) {
		if grammar.CheckSchema(schema) != nil {
			return
		}
		start := time.Now()
		gbnf, err := llamacpp.SchemaGrammar(schema)
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("SchemaGrammar took %v", took)
		}
		if err != nil {
			return // the converter refuses it: an exception, caught
		}
		// SchemaGrammar checked the grammar as llama.cpp's parser reads it:
		// llama.cpp must agree.
		g, err := llamacpp.NewGrammar(m, gbnf)
		if err != nil {
			t.Fatalf("NewGrammar of the converted grammar: %v\n%s", err, gbnf)
		}
		g.Close()
	})
}

// FuzzNewGrammar checks that llama.cpp parses, without crashing, every
// grammar grammar.Check accepts. It starts from the seeds of grammar's
// FuzzCheck, which fuzzes the check itself.
func FuzzNewGrammar(f *testing.F) {
	for _, s := range grammartest.Corpus(f, "../grammar/testdata/fuzz/FuzzCheck") {
		f.Add(s)
	}
	m := tinyModel(f)
	f.Fuzz(func(t *testing.T, gbnf string) {
		start := time.Now()
		g, err := llamacpp.NewGrammar(m, gbnf)
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("NewGrammar took %v", took)
		}
		if err == nil {
			g.Close()
			return
		}
		// Only llama.cpp knows whether <text> is one token of the model.
		if strings.Contains(err.Error(), "llama.cpp cannot parse it") && !strings.Contains(gbnf, "<") {
			t.Fatalf("the checks accept a grammar llama.cpp refuses: %q", gbnf)
		}
	})
}
