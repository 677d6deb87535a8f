package family

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// This file holds a small GBNF matcher for the tests of group C: enough of
// llama.cpp's grammar language (literals, character classes, rule
// references, groups, alternation, ?, *, +) to check that a grammar admits
// a call and refuses text that is not one. It is not the engine's parser;
// the cgo-side check of the same grammars comes when the engine wires the
// registry in.

type gnode struct {
	kind  byte // 'l' literal, 'c' class, 'r' rule, 's' sequence, 'a' alternatives, '?', '*', '+'
	lit   string
	neg   bool
	rng   [][2]rune
	name  string
	items []*gnode
}

type gbnfGrammar map[string]*gnode

func parseGBNF(t *testing.T, text string) gbnfGrammar {
	t.Helper()
	g := gbnfGrammar{}
	p := &gbnfParser{s: text}
	for {
		p.space(true)
		if p.i >= len(p.s) {
			break
		}
		name := p.name()
		p.space(false)
		if !strings.HasPrefix(p.s[p.i:], "::=") {
			t.Fatalf("gbnf: want ::= after %q at %d: %q", name, p.i, p.s[p.i:min(len(p.s), p.i+40)])
		}
		p.i += 3
		if _, dup := g[name]; dup {
			t.Fatalf("gbnf: rule %s defined twice", name)
		}
		g[name] = p.alts(t)
	}
	for name := range g {
		g.refs(t, g[name])
	}
	if g["root"] == nil {
		t.Fatal("gbnf: no root rule")
	}
	return g
}

func (g gbnfGrammar) refs(t *testing.T, n *gnode) {
	t.Helper()
	if n.kind == 'r' && g[n.name] == nil {
		t.Fatalf("gbnf: rule %s is used but not defined", n.name)
	}
	for _, c := range n.items {
		g.refs(t, c)
	}
}

type gbnfParser struct {
	s string
	i int
}

// space skips blanks, comments and, where newlines, line ends.
func (p *gbnfParser) space(newlines bool) {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\t' || c == '\r' || newlines && c == '\n':
			p.i++
		case c == '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

func (p *gbnfParser) name() string {
	start := p.i
	for p.i < len(p.s) && (isIdentByte(p.s[p.i]) || p.s[p.i] == '-') {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *gbnfParser) alts(t *testing.T) *gnode {
	n := &gnode{kind: 'a'}
	for {
		n.items = append(n.items, p.seq(t))
		p.space(false)
		if p.i < len(p.s) && p.s[p.i] == '|' {
			p.i++
			continue
		}
		return n
	}
}

func (p *gbnfParser) seq(t *testing.T) *gnode {
	n := &gnode{kind: 's'}
	for {
		p.space(false)
		// A line break ends the rule unless the next line goes on with it.
		if p.i < len(p.s) && p.s[p.i] == '\n' {
			j := p.i
			for j < len(p.s) && (p.s[j] == '\n' || p.s[j] == ' ' || p.s[j] == '\t') {
				j++
			}
			if j < len(p.s) && (p.s[j] == '|' || p.s[j] == ')') {
				p.i = j
				continue
			}
			return n
		}
		if p.i >= len(p.s) || p.s[p.i] == '|' || p.s[p.i] == ')' {
			return n
		}
		var item *gnode
		switch c := p.s[p.i]; {
		case c == '"':
			item = &gnode{kind: 'l', lit: p.literal(t)}
		case c == '[':
			item = p.class(t)
		case c == '(':
			p.i++
			item = p.alts(t)
			p.space(true)
			if p.i >= len(p.s) || p.s[p.i] != ')' {
				t.Fatalf("gbnf: unclosed group at %d", p.i)
			}
			p.i++
		default:
			name := p.name()
			if name == "" {
				t.Fatalf("gbnf: unexpected %q at %d", c, p.i)
			}
			item = &gnode{kind: 'r', name: name}
		}
		if p.i < len(p.s) && strings.IndexByte("?*+", p.s[p.i]) >= 0 {
			item = &gnode{kind: p.s[p.i], items: []*gnode{item}}
			p.i++
		} else if p.i < len(p.s) && p.s[p.i] == '{' {
			end := strings.IndexByte(p.s[p.i:], '}')
			var lo, hi int
			if _, err := fmt.Sscanf(p.s[p.i:p.i+end+1], "{%d,%d}", &lo, &hi); err != nil {
				if _, err := fmt.Sscanf(p.s[p.i:p.i+end+1], "{%d}", &lo); err != nil {
					t.Fatalf("gbnf: repetition %q: %v", p.s[p.i:p.i+end+1], err)
				}
				hi = lo
			}
			p.i += end + 1
			// x{lo,hi} is lo copies of x, then hi-lo optional ones.
			rep := &gnode{kind: 's'}
			for j := 0; j < hi; j++ {
				if j < lo {
					rep.items = append(rep.items, item)
				} else {
					rep.items = append(rep.items, &gnode{kind: '?', items: []*gnode{item}})
				}
			}
			item = rep
		}
		n.items = append(n.items, item)
	}
}

func (p *gbnfParser) char(t *testing.T) rune {
	if p.s[p.i] == '\\' {
		p.i += 2
		switch c := p.s[p.i-1]; c {
		case 'n':
			return '\n'
		case 'r':
			return '\r'
		case 't':
			return '\t'
		case 'x':
			var v rune
			scanHex(p.s[p.i:p.i+2], &v)
			p.i += 2
			return v
		default:
			return rune(c)
		}
	}
	r, size := utf8.DecodeRuneInString(p.s[p.i:])
	p.i += size
	return r
}

func (p *gbnfParser) literal(t *testing.T) string {
	p.i++
	var b strings.Builder
	for p.i < len(p.s) && p.s[p.i] != '"' {
		b.WriteRune(p.char(t))
	}
	if p.i >= len(p.s) {
		t.Fatal("gbnf: unclosed literal")
	}
	p.i++
	return b.String()
}

func (p *gbnfParser) class(t *testing.T) *gnode {
	p.i++
	n := &gnode{kind: 'c'}
	if p.i < len(p.s) && p.s[p.i] == '^' {
		n.neg = true
		p.i++
	}
	for p.i < len(p.s) && p.s[p.i] != ']' {
		lo := p.char(t)
		hi := lo
		if p.i+1 < len(p.s) && p.s[p.i] == '-' && p.s[p.i+1] != ']' {
			p.i++
			hi = p.char(t)
		}
		n.rng = append(n.rng, [2]rune{lo, hi})
	}
	if p.i >= len(p.s) {
		t.Fatal("gbnf: unclosed class")
	}
	p.i++
	return n
}

// matches reports whether the grammar admits all of s.
func (g gbnfGrammar) matches(s string) bool {
	steps := 0
	var match func(n *gnode, i int, k func(int) bool) bool
	match = func(n *gnode, i int, k func(int) bool) bool {
		if steps++; steps > 5_000_000 {
			panic(fmt.Sprintf("gbnf: too many steps matching %q", s))
		}
		switch n.kind {
		case 'l':
			return strings.HasPrefix(s[i:], n.lit) && k(i+len(n.lit))
		case 'c':
			if i >= len(s) {
				return false
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			in := false
			for _, rg := range n.rng {
				in = in || r >= rg[0] && r <= rg[1]
			}
			return in != n.neg && k(i+size)
		case 'r':
			return match(g[n.name], i, k)
		case 'a':
			for _, a := range n.items {
				if match(a, i, k) {
					return true
				}
			}
			return false
		case 's':
			var from func(j, at int) bool
			from = func(j, at int) bool {
				if j == len(n.items) {
					return k(at)
				}
				return match(n.items[j], at, func(next int) bool { return from(j+1, next) })
			}
			return from(0, i)
		case '?':
			return match(n.items[0], i, k) || k(i)
		case '*', '+':
			var more func(at int, count int) bool
			more = func(at int, count int) bool {
				if match(n.items[0], at, func(next int) bool { return next > at && more(next, count+1) }) {
					return true
				}
				return (n.kind == '*' || count > 0) && k(at)
			}
			return more(i, 0)
		}
		panic("gbnf: unknown node")
	}
	return match(g["root"], 0, func(end int) bool { return end == len(s) })
}

// fakeJSONSchema stands in for the engine's JSON Schema converter in
// grammar tests: it knows strings, integers, numbers and booleans, and
// admits any JSON scalar otherwise, naming helper rules as the real one
// does so that renaming is tested.
func fakeJSONSchema(schema []byte) (string, error) {
	s := string(schema)
	body := "string | number | boolean"
	switch {
	case strings.Contains(s, `"string"`):
		body = "string"
	case strings.Contains(s, `"integer"`):
		body = "integer"
	case strings.Contains(s, `"number"`):
		body = "number"
	case strings.Contains(s, `"boolean"`):
		body = "boolean"
	}
	return "root ::= " + body + " space\n" +
		`space ::= | " " | "\n" [ \t]{0,20}` + "\n" +
		`string ::= "\"" char* "\"" space` + "\n" +
		`char ::= [^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})` + "\n" +
		`integer ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) space` + "\n" +
		`number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? space` + "\n" +
		`boolean ::= ("true" | "false") space` + "\n", nil
}
