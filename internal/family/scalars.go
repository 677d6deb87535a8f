package family

// This file holds the grammar of scalar values that a call syntax writes
// as text rather than as JSON (a tagged value's bare text, Gemma's
// <|"|> strings, Python's quotes, numbers outside JSON), bounded by their
// JSON Schema as the engine's JSON converter bounds JSON: a string by its
// enum, const, minLength and maxLength; an integer by its minimum and
// maximum; a number's digits. Without such a bound a forced call could
// break its schema, and a model of weak weights could write one string or
// number for ever.

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// scalarSchema is the part of a JSON Schema that the grammar of a value
// written as text follows. pattern and format are not followed.
type scalarSchema struct {
	Type      json.RawMessage   `json:"type"`
	Enum      []json.RawMessage `json:"enum"`
	Const     json.RawMessage   `json:"const"`
	MinLength *int              `json:"minLength"`
	MaxLength *int              `json:"maxLength"`
	Minimum   *float64          `json:"minimum"`
	Maximum   *float64          `json:"maximum"`
	// Numbers from draft 6 on, booleans in draft 4 (which qualify
	// minimum and maximum).
	ExclusiveMinimum json.RawMessage `json:"exclusiveMinimum"`
	ExclusiveMaximum json.RawMessage `json:"exclusiveMaximum"`
}

// readScalar reads the scalar part of a schema; none is of no bounds.
func readScalar(schema json.RawMessage) (scalarSchema, error) {
	var s scalarSchema
	if len(schema) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return s, fmt.Errorf("parameters: %w", err)
	}
	if s.Const != nil {
		s.Enum = append(s.Enum, s.Const)
	}
	return s, nil
}

// bounds returns the least and the greatest value s admits; nil where it
// sets none. An exclusive bound is taken as inclusive: the grammar bounds
// a value's digits, not its exact range.
func (s scalarSchema) bounds() (lo, hi *float64) {
	lo, hi = s.Minimum, s.Maximum
	var v float64
	if json.Unmarshal(s.ExclusiveMinimum, &v) == nil && (lo == nil || v > *lo) {
		lo = &v
	}
	var w float64
	if json.Unmarshal(s.ExclusiveMaximum, &w) == nil && (hi == nil || w < *hi) {
		hi = &w
	}
	return lo, hi
}

// textSyntax is how a call syntax writes a string.
type textSyntax struct {
	// delim is written before and after the text; "" for text that the
	// markup around it delimits.
	delim string
	// char is the rule body of one character as written: an escape, or a
	// run that cannot become the end of the text.
	char string
	// plain is the rule body of a character written as itself, one that
	// counts once: a string of bounded length is made of these.
	plain string
	// write returns s as written, delimiters included; false if the
	// syntax cannot write it.
	write func(s string) (string, bool)
}

// textRule returns a rule of the strings s admits, written in syn: its
// enum (or const) values that are strings and that syn can write, else
// text of minLength to maxLength characters.
func (g *grammar) textRule(s scalarSchema, syn textSyntax) (string, error) {
	if len(s.Enum) > 0 {
		var alts []string
		for _, e := range s.Enum {
			var v string
			if json.Unmarshal(e, &v) != nil {
				continue // not a string: a string schema admits none
			}
			if w, ok := syn.write(v); ok {
				alts = append(alts, lit(w))
			}
		}
		if len(alts) == 0 {
			return "", fmt.Errorf("parameters: no value of the enum can be written as text")
		}
		return g.add("enum", strings.Join(alts, " | ")), nil
	}
	lo := 0
	if s.MinLength != nil {
		lo = max(*s.MinLength, 0)
	}
	var body string
	switch {
	case s.MaxLength != nil && max(*s.MaxLength, lo) == 0:
		body = `""`
	case s.MaxLength != nil:
		body = fmt.Sprintf("(%s){%d,%d}", syn.plain, lo, max(*s.MaxLength, lo))
	case lo > 0:
		// A character as written is at least one: lo of them are lo
		// characters at least.
		body = fmt.Sprintf("(%s){%d,}", syn.char, lo)
	default:
		body = "(" + syn.char + ")*"
	}
	if syn.delim != "" {
		body = lit(syn.delim) + " " + body + " " + lit(syn.delim)
	}
	return g.add("string", body), nil
}

// maxDigits bounds the digits of a number's integer part and of its
// fraction, as llama.cpp's JSON converter bounds an integer's.
const maxDigits = 16

// intBody returns the rule body of integers from lo to hi (nil: no
// bound), written as JSON writes them, of at most maxDigits digits.
func intBody(lo, hi *float64) string {
	const limit = 1e16 - 1 // about maxDigits nines
	l, h := -limit, limit
	if lo != nil && !math.IsNaN(*lo) {
		l = max(l, math.Ceil(*lo))
	}
	if hi != nil && !math.IsNaN(*hi) {
		h = min(h, math.Floor(*hi))
	}
	if l > h {
		l, h = -limit, limit // no integer: the schema is not for us to mend
	}
	// limit is not a float64: its digits are maxDigits nines.
	u := func(x float64) uint64 {
		if x >= limit {
			return 9999999999999999
		}
		return uint64(x)
	}
	var alts []string
	if h >= 0 {
		alts = append(alts, uintRange(u(max(l, 0)), u(h)))
	}
	if l < 0 {
		alts = append(alts, `"-" (`+uintRange(u(max(-h, 1)), u(-l))+")")
	}
	return "(" + strings.Join(alts, " | ") + ")"
}

// numBody returns the rule body of numbers from lo to hi (nil: no bound)
// written as JSON writes them. Its integer part keeps to the range and
// its fraction to maxDigits digits; a bounded number has no exponent, an
// unbounded one an exponent of at most three digits.
func numBody(lo, hi *float64) string {
	trunc := func(v *float64) *float64 {
		if v == nil {
			return nil
		}
		t := math.Trunc(*v)
		return &t
	}
	body := intBody(trunc(lo), trunc(hi)) + fmt.Sprintf(` ("." [0-9]{1,%d})?`, maxDigits)
	if lo == nil && hi == nil {
		body += ` ([eE] [-+]? [0-9]{1,3})?`
	}
	return body
}

// uintRange returns the rule body of the integers from a to b, a <= b,
// written in decimal without leading zeros.
func uintRange(a, b uint64) string {
	as, bs := strconv.FormatUint(a, 10), strconv.FormatUint(b, 10)
	var alts []string
	full := [2]int{} // the least and the most digits of the lengths all admitted, past one
	for d := len(as); d <= len(bs); d++ {
		least, lo, hi := "1"+strings.Repeat("0", d-1), as, bs
		if d == 1 {
			least = "0"
		}
		if d > len(as) {
			lo = least
		}
		if d < len(bs) {
			hi = strings.Repeat("9", d)
		}
		if d > 1 && lo == least && hi == strings.Repeat("9", d) {
			if full[0] == 0 {
				full[0] = d
			}
			full[1] = d
			continue
		}
		alts = append(alts, digitsBetween(lo, hi))
	}
	if full[0] > 0 {
		alts = append(alts, fmt.Sprintf("[1-9] [0-9]{%d,%d}", full[0]-1, full[1]-1))
	}
	return strings.Join(alts, " | ")
}

// digitsBetween returns the rule body of the digit strings of a's length
// from a to b, a <= b.
func digitsBetween(a, b string) string {
	n := len(a) - 1
	if a[0] == b[0] {
		if n == 0 {
			return lit(a)
		}
		return lit(a[:1]) + " " + digitsBetween(a[1:], b[1:])
	}
	rest := ""
	if n > 0 {
		rest = fmt.Sprintf(" [0-9]{%d}", n)
	}
	if a[1:] == strings.Repeat("0", n) && b[1:] == strings.Repeat("9", n) {
		return digitClass(a[0], b[0]) + rest
	}
	alts := []string{lit(a[:1]) + " (" + digitsBetween(a[1:], strings.Repeat("9", n)) + ")"}
	if a[0]+1 < b[0] {
		alts = append(alts, digitClass(a[0]+1, b[0]-1)+rest)
	}
	alts = append(alts, lit(b[:1])+" ("+digitsBetween(strings.Repeat("0", n), b[1:])+")")
	return "(" + strings.Join(alts, " | ") + ")"
}

// digitClass returns the rule body of the digits from x to y.
func digitClass(x, y byte) string {
	if x == y {
		return lit(string(x))
	}
	return "[" + string(x) + "-" + string(y) + "]"
}

// delimited returns the textSyntax.write of text between delim, which
// cannot hold delim.
func delimited(delim string) func(string) (string, bool) {
	return func(s string) (string, bool) {
		return delim + s + delim, !strings.Contains(s, delim)
	}
}
