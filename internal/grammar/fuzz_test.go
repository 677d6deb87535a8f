package grammar_test

import (
	"errors"
	"testing"
	"time"

	"github.com/inferkit/inferkit/internal/grammar"
)

// FuzzCheckSchema checks that CheckSchema neither panics nor takes long,
// and that its errors wrap ErrInvalid. Its seeds, in
// testdata/fuzz/FuzzCheckSchema, also seed the backends' fuzzing of what
// llama.cpp makes of the schemas it accepts.
func FuzzCheckSchema(f *testing.F) {
	f.Fuzz(func(t *testing.T, schema []byte) {
		start := time.Now()
		err := grammar.CheckSchema(schema)
		if took := time.Since(start); took > time.Second {
			t.Fatalf("CheckSchema took %v", took)
		}
		if err != nil && !errors.Is(err, grammar.ErrInvalid) {
			t.Fatalf("error %v does not wrap ErrInvalid", err)
		}
	})
}

// FuzzCheck checks that Check neither panics nor takes long, and that its
// errors wrap ErrInvalid. Its seeds, in testdata/fuzz/FuzzCheck, also seed
// the backends' fuzzing of what llama.cpp makes of the grammars it
// accepts.
func FuzzCheck(f *testing.F) {
	f.Fuzz(func(t *testing.T, gbnf string) {
		start := time.Now()
		err := grammar.Check(gbnf)
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("Check took %v", took)
		}
		if err != nil && !errors.Is(err, grammar.ErrInvalid) {
			t.Fatalf("error %v does not wrap ErrInvalid", err)
		}
	})
}
