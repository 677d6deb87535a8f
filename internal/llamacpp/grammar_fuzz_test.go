package llamacpp_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/internal/llamacpp"
)

// FuzzCheckSchema checks that CheckSchema neither panics nor takes long,
// and that what it accepts converts, and parses, in llama.cpp without
// crashing: C is called only for schemas it accepts. Seeds are in
// testdata/fuzz/FuzzCheckSchema.
func FuzzCheckSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"string","pattern":"^[a-z]{1,3}$"},"b":{"type":"array","items":{"$ref":"#/$defs/n"},"minItems":1,"maxItems":3}},"required":["a"],"$defs":{"n":{"type":"integer","minimum":-5,"maximum":50}}}`))
	f.Add([]byte(`{"anyOf":[{"type":["string","null"],"maxLength":4},{"enum":[1,"x",null]},{"allOf":[{"properties":{"k":{}}}]}],"additionalProperties":{"const":true}}`))
	m := tinyModel(f)
	f.Fuzz(func(t *testing.T, schema []byte) {
		start := time.Now()
		err := llamacpp.CheckSchema(schema)
		if took := time.Since(start); took > time.Second {
			t.Fatalf("CheckSchema took %v", took)
		}
		if err != nil {
			if !errors.Is(err, llamacpp.ErrGrammar) {
				t.Fatalf("error %v does not wrap ErrGrammar", err)
			}
			return
		}
		start = time.Now()
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
// grammar NewGrammar's checks accept. Seeds are in
// testdata/fuzz/FuzzNewGrammar.
func FuzzNewGrammar(f *testing.F) {
	f.Add(jsonGBNF)
	f.Add(`root ::= ("a" | [b-d]+ | "e"{2,5})* "."?`)
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
