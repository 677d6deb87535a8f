package grammar_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/internal/grammar"
	"github.com/inferkit/inferkit/internal/grammar/grammartest"
)

// Schemas over the bounds are refused with an error naming the bound,
// quickly and in bounded memory, except those refused only for the
// grammar they convert to (the backends' tests convert them).
func TestCheckSchemaRefuses(t *testing.T) {
	for _, tc := range grammartest.RefusedSchemas() {
		t.Run(tc.Name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			err := grammar.CheckSchema([]byte(tc.Text))
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if tc.Converted {
				if err != nil {
					t.Fatalf("CheckSchema: %v, want it accepted (the converted grammar is refused)", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.Want) {
				t.Fatalf("CheckSchema: %v, want an error with %q", err, tc.Want)
			}
			if !errors.Is(err, grammar.ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
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

// Schemas within the bounds pass, large, deep, recursive and referencing
// ones included.
func TestCheckSchemaAccepts(t *testing.T) {
	for _, tc := range grammartest.AcceptedSchemas() {
		t.Run(tc.Name, func(t *testing.T) {
			if err := grammar.CheckSchema([]byte(tc.Text)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// CompactSchema returns what json.Compact makes of a schema it accepts, and
// refuses what CheckSchema refuses.
func TestCompactSchema(t *testing.T) {
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"spaces", "{ \"type\" :\n\t\"object\" }  ", `{"type":"object"}`},
		{"string keeps its spaces", `{"const": "a  b"}`, `{"const":"a  b"}`},
		{"refused", `{"type":"string","maxLength":1e9}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := grammar.CompactSchema([]byte(tc.schema))
			if checkErr := grammar.CheckSchema([]byte(tc.schema)); (err == nil) != (checkErr == nil) {
				t.Fatalf("CompactSchema: %v; CheckSchema: %v", err, checkErr)
			}
			if tc.want == "" {
				if err == nil {
					t.Fatalf("CompactSchema accepts it: %s", got)
				}
				return
			}
			var want bytes.Buffer
			if err != nil || json.Compact(&want, []byte(tc.schema)) != nil || string(got) != tc.want || want.String() != tc.want {
				t.Fatalf("CompactSchema: %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// Grammars over the bounds, or on which llama.cpp would crash or hang, are
// refused with an error naming the problem.
func TestCheckRefuses(t *testing.T) {
	for _, tc := range grammartest.RefusedGrammars() {
		t.Run(tc.Name, func(t *testing.T) {
			start := time.Now()
			err := grammar.Check(tc.Text)
			if err == nil || !strings.Contains(err.Error(), tc.Want) || !errors.Is(err, grammar.ErrInvalid) {
				t.Fatalf("Check: %v, want ErrInvalid with %q", err, tc.Want)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

// The grammars llama.cpp ships and writes pass.
func TestCheckAccepts(t *testing.T) {
	for _, tc := range grammartest.AcceptedGrammars() {
		t.Run(tc.Name, func(t *testing.T) {
			if err := grammar.Check(tc.Text); err != nil {
				t.Fatal(err)
			}
		})
	}
}
