package llamacpp

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"

	"github.com/ollama/ollama/llama"
)

// Grammar constrains sampling to the sentences of a GBNF grammar. It keeps
// the state of the text sampled so far: one Grammar serves one generation.
// It is not safe for concurrent use; its owner must call Close.
type Grammar struct {
	c *C.struct_llama_sampler
}

// ErrGrammar is returned for a grammar llama.cpp cannot parse, or a JSON
// Schema it cannot turn into one.
var ErrGrammar = errors.New("llamacpp: invalid grammar")

// NewGrammar parses gbnf, whose start rule is root, for model m.
func NewGrammar(m *Model, gbnf string) (*Grammar, error) {
	cg := C.CString(gbnf)
	defer C.free(unsafe.Pointer(cg))
	root := C.CString("root")
	defer C.free(unsafe.Pointer(root))
	g := C.llama_sampler_init_grammar(m.vocab, cg, root)
	if g == nil {
		return nil, fmt.Errorf("%w: llama.cpp cannot parse it", ErrGrammar)
	}
	return &Grammar{c: g}, nil
}

// SchemaGrammar converts a JSON Schema into GBNF.
func SchemaGrammar(schema []byte) (string, error) {
	if !json.Valid(schema) {
		return "", fmt.Errorf("%w: the schema is not valid JSON", ErrGrammar)
	}
	g := llama.SchemaToGrammar(schema)
	if g == nil {
		return "", fmt.Errorf("%w: the schema uses a feature the JSON Schema converter does not support, or is not a valid schema", ErrGrammar)
	}
	return string(g), nil
}

// Close frees the grammar.
func (g *Grammar) Close() {
	if g != nil && g.c != nil {
		C.llama_sampler_free(g.c)
		g.c = nil
	}
}
