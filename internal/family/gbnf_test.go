package family

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// This file holds the tests' GBNF reader and matcher, and a JSON Schema to
// GBNF converter, so that the tests can check that a family's grammar
// admits the calls the family writes and refuses others. The engine's
// real converter is llama.cpp's (cgo); this one writes grammar of the
// same shape: several rules, references among them, literals, character
// classes and repetitions, and the converter's space rule.

// gElem is one element of a GBNF expression.
type gElem struct {
	kind     byte // 'l' literal, 'c' class, 'r' rule, 'g' group
	text     string
	class    func(r rune) bool
	alts     [][]gElem // for a group
	min, max int       // repetition; max -1 for no bound
}

type gbnf map[string][][]gElem

// parseGBNF reads a grammar.
func parseGBNF(src string) (gbnf, error) {
	p := &gParser{src: src}
	g := gbnf{}
	for {
		p.skip()
		if p.i >= len(p.src) {
			return g, nil
		}
		name := p.name()
		p.skip()
		if name == "" || !strings.HasPrefix(p.src[p.i:], "::=") {
			return nil, fmt.Errorf("gbnf: want a rule at %q", p.rest())
		}
		p.i += 3
		alts, err := p.alts(true)
		if err != nil {
			return nil, err
		}
		if _, dup := g[name]; dup {
			return nil, fmt.Errorf("gbnf: rule %s defined twice", name)
		}
		g[name] = alts
	}
}

type gParser struct {
	src string
	i   int
}

func (p *gParser) rest() string { return p.src[p.i:min(len(p.src), p.i+40)] }

func (p *gParser) skip() {
	for p.i < len(p.src) {
		switch c := p.src[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.i++
		case c == '#':
			for p.i < len(p.src) && p.src[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

// name reads a rule name.
func (p *gParser) name() string {
	j := p.i
	for j < len(p.src) && isNameByte(p.src[j]) {
		j++
	}
	n := p.src[p.i:j]
	p.i = j
	return n
}

// atRuleStart reports whether a new rule definition starts here.
func (p *gParser) atRuleStart() bool {
	j := p.i
	for j < len(p.src) && isNameByte(p.src[j]) {
		j++
	}
	if j == p.i {
		return false
	}
	k := j
	for k < len(p.src) && (p.src[k] == ' ' || p.src[k] == '\t') {
		k++
	}
	return strings.HasPrefix(p.src[k:], "::=")
}

func (p *gParser) alts(top bool) ([][]gElem, error) {
	var alts [][]gElem
	var seq []gElem
	for {
		p.skip()
		if p.i >= len(p.src) || top && p.atRuleStart() {
			return append(alts, seq), nil
		}
		c := p.src[p.i]
		switch {
		case c == '|':
			p.i++
			alts, seq = append(alts, seq), nil
			continue
		case c == ')':
			if top {
				return nil, fmt.Errorf("gbnf: stray ) at %q", p.rest())
			}
			p.i++
			return append(alts, seq), nil
		case c == '"':
			s, err := p.literal()
			if err != nil {
				return nil, err
			}
			seq = append(seq, gElem{kind: 'l', text: s, min: 1, max: 1})
		case c == '[':
			f, err := p.class()
			if err != nil {
				return nil, err
			}
			seq = append(seq, gElem{kind: 'c', class: f, min: 1, max: 1})
		case c == '(':
			p.i++
			inner, err := p.alts(false)
			if err != nil {
				return nil, err
			}
			seq = append(seq, gElem{kind: 'g', alts: inner, min: 1, max: 1})
		case isNameByte(c):
			seq = append(seq, gElem{kind: 'r', text: p.name(), min: 1, max: 1})
		default:
			return nil, fmt.Errorf("gbnf: unexpected %q at %q", c, p.rest())
		}
		// A repetition applies to the element just read.
		if p.i < len(p.src) {
			e := &seq[len(seq)-1]
			switch p.src[p.i] {
			case '?':
				e.min, e.max = 0, 1
				p.i++
			case '*':
				e.min, e.max = 0, -1
				p.i++
			case '+':
				e.min, e.max = 1, -1
				p.i++
			case '{':
				end := strings.IndexByte(p.src[p.i:], '}')
				if end < 0 {
					return nil, fmt.Errorf("gbnf: open repetition")
				}
				lo, hi, found := strings.Cut(p.src[p.i+1:p.i+end], ",")
				e.min, _ = strconv.Atoi(strings.TrimSpace(lo))
				e.max = e.min
				if found {
					e.max = -1
					if strings.TrimSpace(hi) != "" {
						e.max, _ = strconv.Atoi(strings.TrimSpace(hi))
					}
				}
				p.i += end + 1
			}
		}
	}
}

func (p *gParser) escape() (rune, error) {
	p.i++ // the backslash
	if p.i >= len(p.src) {
		return 0, fmt.Errorf("gbnf: open escape")
	}
	c := p.src[p.i]
	p.i++
	switch c {
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'x', 'u', 'U':
		n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
		v, err := strconv.ParseUint(p.src[p.i:p.i+n], 16, 32)
		p.i += n
		return rune(v), err
	}
	return rune(c), nil
}

func (p *gParser) literal() (string, error) {
	p.i++
	var b strings.Builder
	for p.i < len(p.src) && p.src[p.i] != '"' {
		if p.src[p.i] == '\\' {
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
			continue
		}
		b.WriteByte(p.src[p.i])
		p.i++
	}
	if p.i >= len(p.src) {
		return "", fmt.Errorf("gbnf: open literal")
	}
	p.i++
	return b.String(), nil
}

func (p *gParser) class() (func(rune) bool, error) {
	p.i++
	neg := p.i < len(p.src) && p.src[p.i] == '^'
	if neg {
		p.i++
	}
	type span struct{ lo, hi rune }
	var spans []span
	read := func() (rune, error) {
		if p.src[p.i] == '\\' {
			return p.escape()
		}
		r := []rune(p.src[p.i:])[0]
		p.i += len(string(r))
		return r, nil
	}
	for p.i < len(p.src) && p.src[p.i] != ']' {
		lo, err := read()
		if err != nil {
			return nil, err
		}
		hi := lo
		if p.i+1 < len(p.src) && p.src[p.i] == '-' && p.src[p.i+1] != ']' {
			p.i++
			if hi, err = read(); err != nil {
				return nil, err
			}
		}
		spans = append(spans, span{lo, hi})
	}
	if p.i >= len(p.src) {
		return nil, fmt.Errorf("gbnf: open class")
	}
	p.i++
	return func(r rune) bool {
		in := false
		for _, s := range spans {
			in = in || s.lo <= r && r <= s.hi
		}
		return in != neg
	}, nil
}

// check reports a rule referenced but not defined, or no root.
func (g gbnf) check() error {
	if _, ok := g["root"]; !ok {
		return fmt.Errorf("gbnf: no root rule")
	}
	var walk func(alts [][]gElem) error
	walk = func(alts [][]gElem) error {
		for _, seq := range alts {
			for _, e := range seq {
				switch e.kind {
				case 'r':
					if _, ok := g[e.text]; !ok {
						return fmt.Errorf("gbnf: rule %s is not defined", e.text)
					}
				case 'g':
					if err := walk(e.alts); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	for _, alts := range g {
		if err := walk(alts); err != nil {
			return err
		}
	}
	return nil
}

// matches reports whether the whole of s is a sentence of the grammar.
func (g gbnf) matches(s string) bool {
	for _, end := range g.alts(g["root"], []rune(s), 0, 0) {
		if end == len([]rune(s)) {
			return true
		}
	}
	return false
}

// alts returns every position where one of alts, started at i, may end.
func (g gbnf) alts(alts [][]gElem, s []rune, i, depth int) []int {
	if depth > 200 {
		return nil
	}
	set := map[int]bool{}
	for _, seq := range alts {
		for _, e := range g.seq(seq, s, i, depth) {
			set[e] = true
		}
	}
	out := make([]int, 0, len(set))
	for e := range set {
		out = append(out, e)
	}
	sort.Ints(out)
	return out
}

func (g gbnf) seq(seq []gElem, s []rune, i, depth int) []int {
	at := []int{i}
	for _, e := range seq {
		set := map[int]bool{}
		for _, p := range at {
			for _, q := range g.rep(e, s, p, depth) {
				set[q] = true
			}
		}
		at = at[:0]
		for q := range set {
			at = append(at, q)
		}
		if len(at) == 0 {
			return nil
		}
	}
	return at
}

func (g gbnf) rep(e gElem, s []rune, i, depth int) []int {
	var out []int
	cur := map[int]bool{i: true}
	for n := 0; ; n++ {
		if n >= e.min {
			for p := range cur {
				out = append(out, p)
			}
		}
		if e.max >= 0 && n >= e.max || len(cur) == 0 {
			return out
		}
		next := map[int]bool{}
		for p := range cur {
			for _, q := range g.once(e, s, p, depth) {
				if q > p || n < e.min { // no empty loops past the minimum
					next[q] = true
				}
			}
		}
		cur = next
	}
}

func (g gbnf) once(e gElem, s []rune, i, depth int) []int {
	switch e.kind {
	case 'l':
		lit := []rune(e.text)
		if i+len(lit) <= len(s) && string(s[i:i+len(lit)]) == e.text {
			return []int{i + len(lit)}
		}
	case 'c':
		if i < len(s) && e.class(s[i]) {
			return []int{i + 1}
		}
	case 'r':
		return g.alts(g[e.text], s, i, depth+1)
	case 'g':
		return g.alts(e.alts, s, i, depth+1)
	}
	return nil
}

// testSchema converts a JSON Schema to GBNF for the tests: objects (with
// properties in the order written, required ones always and the others
// perhaps; or of any fields), arrays, strings, numbers, integers,
// booleans, null, enums, consts and oneOf / anyOf; no type admits any
// value.
func testSchema(doc []byte) (string, error) {
	c := &schemaConv{rules: map[string]string{}}
	root, err := c.rule(doc)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("root ::= " + root + "\n")
	names := make([]string, 0, len(c.rules))
	for n := range c.rules {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteString(n + " ::= " + c.rules[n] + "\n")
	}
	b.WriteString(`space ::= | " " | "\n" [ \t]{0,20}` + "\n")
	b.WriteString(`string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" space` + "\n")
	b.WriteString(`number ::= "-"? [0-9]+ ("." [0-9]+)? ([eE] [-+]? [0-9]+)? space` + "\n")
	b.WriteString(`integer ::= "-"? [0-9]+ space` + "\n")
	b.WriteString(`boolean ::= ("true" | "false") space` + "\n")
	b.WriteString(`null ::= "null" space` + "\n")
	b.WriteString(`value ::= object | array | string | number | boolean | null` + "\n")
	b.WriteString(`object ::= "{" space ( string ":" space value ("," space string ":" space value)* )? "}" space` + "\n")
	b.WriteString(`array ::= "[" space ( value ("," space value)* )? "]" space` + "\n")
	return b.String(), nil
}

type schemaConv struct {
	rules map[string]string
	n     int
}

func (c *schemaConv) add(body string) string {
	c.n++
	name := fmt.Sprintf("r%d", c.n)
	c.rules[name] = body
	return name
}

func (c *schemaConv) rule(doc json.RawMessage) (string, error) {
	var s struct {
		Const      json.RawMessage   `json:"const"`
		OneOf      []json.RawMessage `json:"oneOf"`
		AnyOf      []json.RawMessage `json:"anyOf"`
		Enum       []json.RawMessage `json:"enum"`
		Type       string            `json:"type"`
		Properties json.RawMessage   `json:"properties"`
		Required   []string          `json:"required"`
		Items      json.RawMessage   `json:"items"`
	}
	if err := json.Unmarshal(doc, &s); err != nil {
		return "", err
	}
	switch {
	case s.Const != nil:
		return c.add(lit(string(s.Const)) + " space"), nil
	case s.OneOf != nil || s.AnyOf != nil:
		var names []string
		for _, a := range append(s.OneOf, s.AnyOf...) {
			n, err := c.rule(a)
			if err != nil {
				return "", err
			}
			names = append(names, n)
		}
		return c.add(strings.Join(names, " | ")), nil
	case s.Enum != nil:
		var ls []string
		for _, v := range s.Enum {
			ls = append(ls, lit(string(v)))
		}
		return c.add("(" + strings.Join(ls, " | ") + ") space"), nil
	}
	switch s.Type {
	case "string", "number", "integer", "boolean", "null":
		return s.Type, nil
	case "":
		return "value", nil
	case "array":
		if s.Items == nil {
			return "array", nil
		}
		item, err := c.rule(s.Items)
		if err != nil {
			return "", err
		}
		return c.add(`"[" space (` + item + ` ("," space ` + item + `)*)? "]" space`), nil
	case "object":
		return c.object(s.Properties, s.Required)
	}
	return "", fmt.Errorf("testSchema: unsupported schema %s", doc)
}

// object returns the rule of an object of props, in the order written.
func (c *schemaConv) object(props json.RawMessage, required []string) (string, error) {
	keys, vals, err := orderedObject(props)
	if err != nil || len(keys) == 0 {
		return "object", err
	}
	members := make([]string, len(keys))
	for i, k := range keys {
		v, err := c.rule(vals[i])
		if err != nil {
			return "", err
		}
		kj, _ := json.Marshal(k)
		members[i] = lit(string(kj)) + ` space ":" space ` + v
	}
	// rest(i, first): the members from i on, first when none is written.
	memo := map[string]string{}
	var rest func(i int, first bool) string
	rest = func(i int, first bool) string {
		if i == len(keys) {
			return `""`
		}
		key := fmt.Sprint(i, first)
		if n, ok := memo[key]; ok {
			return n
		}
		with := members[i] + " " + rest(i+1, false)
		if !first {
			with = `"," space ` + with
		}
		if !slices.Contains(required, keys[i]) {
			with = "(" + with + ") | " + rest(i+1, first)
		}
		memo[key] = c.add(with)
		return memo[key]
	}
	return c.add(`"{" space ` + rest(0, true) + ` "}" space`), nil
}

// orderedObject returns the keys of a JSON object in the order written,
// and their values.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, tok.(string))
		vals = append(vals, v)
	}
	return keys, vals, nil
}

func TestGBNFMatcher(t *testing.T) {
	g, err := parseGBNF(`root ::= "a" b* ("c" | [x-z]{2}) "\n"? d?
b ::= "b"
d ::= [^a\]]`)
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{"ac": true, "abbc": true, "axy": true, "ac\n": true, "a": false, "aac": false, "axyz": true, "axya": false, "axyzz": false, "a]c": false, "ac!": true, "ac]": false, "aca": false} {
		if got := g.matches(s); got != want {
			t.Errorf("matches(%q) = %v, want %v", s, got, want)
		}
	}
	if _, err := parseGBNF(`root ::= "a`); err == nil {
		t.Error("an open literal parsed")
	}
	g, _ = parseGBNF(`root ::= missing`)
	if g.check() == nil {
		t.Error("a missing rule passed the check")
	}
}

func TestTestSchema(t *testing.T) {
	src, err := testSchema([]byte(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"array","items":{"type":"boolean"}}},"required":["b"]}`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := parseGBNF(src)
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{
		`{"b": 1}`: true, `{"a": "x", "b": 2, "c": [true, false]}`: true, `{"a":"x","b":2}`: true,
		`{"a": "x"}`: false, `{"b": 1, "a": "x"}`: false, `{"b": "1"}`: false, `{, "b": 1}`: false, `{"b": 1,}`: false,
	} {
		if got := g.matches(s); got != want {
			t.Errorf("matches(%s) = %v, want %v", s, got, want)
		}
	}
}

// TestRenameRules checks that renaming the converter's rules leaves its
// literals, classes, counts and comments alone.
func TestRenameRules(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"root ::= obj-1 space # a [comment]\nobj-1 ::= \"{\\\"x\\\" \" [^\"\\\\] char{0,4} \"]\"\n",
			"p-root ::= p-obj-1 p-space # a [comment]\np-obj-1 ::= \"{\\\"x\\\" \" [^\"\\\\] p-char{0,4} \"]\"\n"},
		{"root ::= \"a-b\" x-y [a-z]{1,2} # note root\nx-y ::= \"root\" | [^\\]root]",
			"p-root ::= \"a-b\" p-x-y [a-z]{1,2} # note root\np-x-y ::= \"root\" | [^\\]root]"},
		{`integral-part ::= [0] | [1-9] [0-9]{0,15}` + "\n" + `space ::= | " " | "\n"{1,2} [ \t]{0,20}`,
			`p-integral-part ::= [0] | [1-9] [0-9]{0,15}` + "\n" + `p-space ::= | " " | "\n"{1,2} [ \t]{0,20}`},
	} {
		if got := renameRules(tt.in, "p-"); got != tt.want {
			t.Errorf("renameRules:\n got %q\nwant %q", got, tt.want)
		}
	}
}
