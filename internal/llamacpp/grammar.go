package llamacpp

/*
#include <stdlib.h>
#include "bridge.h"

// From github.com/ollama/ollama/llama's sampling_ext.h: converts with
// llama.cpp's json_schema_to_grammar, copies at most max_len-1 bytes of the
// grammar to grammar and returns how many, or 0 if conversion failed.
int schema_to_grammar(const char *json_schema, char *grammar, size_t max_len);
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/inferkit/inferkit/internal/grammar"
)

// Grammar constrains sampling to the sentences of a GBNF grammar. It keeps
// the state of the text sampled so far: one Grammar serves one generation.
// It is not safe for concurrent use; its owner must call Close.
type Grammar struct {
	c *C.struct_llama_sampler
}

// NewGrammar parses gbnf, whose start rule is root, for model m.
//
// The grammar is checked first (grammar.Check), as llama.cpp's parser
// reads it: it must parse, be at most grammar.MaxBytes, nest parentheses
// at most 512 deep, expand its {m,n} repetitions to at most 32 MiB of
// rules, have no left recursion (counting rules that can only match
// nothing), and give llama.cpp's matcher bounded work wherever it stands.
// The error wraps grammar.ErrInvalid.
func NewGrammar(m *Model, gbnf string) (*Grammar, error) {
	if err := grammar.Check(gbnf); err != nil {
		return nil, err
	}
	cg := C.CString(gbnf)
	defer C.free(unsafe.Pointer(cg))
	root := C.CString("root")
	defer C.free(unsafe.Pointer(root))
	g := C.llama_sampler_init_grammar(m.vocab, cg, root)
	if g == nil {
		return nil, fmt.Errorf("%w: llama.cpp cannot parse it", grammar.ErrInvalid)
	}
	return &Grammar{c: g}, nil
}

// SchemaGrammar converts a JSON Schema into GBNF with llama.cpp's
// converter. It refuses, before calling C, a schema grammar.CheckSchema
// refuses, and after conversion a grammar grammar.Check refuses; its
// errors wrap grammar.ErrInvalid. It is safe for concurrent use; it takes
// at most about half a second of one core.
func SchemaGrammar(schema []byte) (string, error) {
	compact, err := grammar.CompactSchema(schema)
	if err != nil {
		return "", err
	}
	cs := C.CString(string(compact))
	defer C.free(unsafe.Pointer(cs))
	// One byte more than the bound tells a longer grammar, which
	// schema_to_grammar would cut, from one of the bound's length.
	const size = grammar.MaxBytes + 2
	buf := C.malloc(size)
	defer C.free(buf)
	n := int(C.schema_to_grammar(cs, (*C.char)(buf), size))
	if n == 0 {
		return "", fmt.Errorf("%w: the schema uses a feature the JSON Schema converter does not support, or is not a valid schema", grammar.ErrInvalid)
	}
	if n > grammar.MaxBytes {
		return "", fmt.Errorf("%w: the schema converts to a grammar of more than %d bytes", grammar.ErrInvalid, grammar.MaxBytes)
	}
	g := C.GoStringN((*C.char)(buf), C.int(n))
	if err := grammar.Check(g); err != nil {
		return "", fmt.Errorf("%w (the grammar converted from the schema)", err)
	}
	return g, nil
}

// Close frees the grammar.
func (g *Grammar) Close() {
	if g != nil && g.c != nil {
		C.llama_sampler_free(g.c)
		g.c = nil
	}
}
