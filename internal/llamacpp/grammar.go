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
)

// Grammar constrains sampling to the sentences of a GBNF grammar. It keeps
// the state of the text sampled so far: one Grammar serves one generation.
// It is not safe for concurrent use; its owner must call Close.
type Grammar struct {
	c *C.struct_llama_sampler
}

// CheckGrammar reports whether NewGrammar would refuse gbnf for its shape
// or its bounds (see NewGrammar), without calling C: for checking a
// request's grammar before it is admitted. It is safe for concurrent use.
func CheckGrammar(gbnf string) error { return checkGrammar(gbnf) }

// NewGrammar parses gbnf, whose start rule is root, for model m.
//
// The grammar is checked first (CheckGrammar), as llama.cpp's parser
// reads it: it must
// parse, be at most MaxGrammarBytes, nest parentheses at most 512 deep,
// expand its {m,n} repetitions to at most 32 MiB of rules, have no left
// recursion (counting rules that can only match nothing), and give
// llama.cpp's matcher bounded work wherever it stands. The error wraps
// ErrGrammar.
func NewGrammar(m *Model, gbnf string) (*Grammar, error) {
	if err := checkGrammar(gbnf); err != nil {
		return nil, err
	}
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

// SchemaGrammar converts a JSON Schema into GBNF. It refuses, before
// calling C, a schema CheckSchema refuses, and after conversion a grammar
// NewGrammar would refuse. It is safe for concurrent use; it takes at most
// about half a second of one core.
func SchemaGrammar(schema []byte) (string, error) {
	compact, err := checkSchema(schema)
	if err != nil {
		return "", err
	}
	cs := C.CString(string(compact))
	defer C.free(unsafe.Pointer(cs))
	// One byte more than the bound tells a longer grammar, which
	// schema_to_grammar would cut, from one of the bound's length.
	const size = MaxGrammarBytes + 2
	buf := C.malloc(size)
	defer C.free(buf)
	n := int(C.schema_to_grammar(cs, (*C.char)(buf), size))
	if n == 0 {
		return "", fmt.Errorf("%w: the schema uses a feature the JSON Schema converter does not support, or is not a valid schema", ErrGrammar)
	}
	if n > MaxGrammarBytes {
		return "", fmt.Errorf("%w: the schema converts to a grammar of more than %d bytes", ErrGrammar, MaxGrammarBytes)
	}
	g := C.GoStringN((*C.char)(buf), C.int(n))
	if err := checkGrammar(g); err != nil {
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
