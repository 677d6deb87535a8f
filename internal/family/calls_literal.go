package family

// This file holds literal values as the call syntaxes that are not JSON
// write them (Gemma's <|"|> and <escape> strings and bare keys, Python's
// quotes, True, False and None): litReader reads them as JSON, and
// valueRule writes the grammar of a JSON Schema's values in them.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// litSyntax is how a family writes literal argument values.
type litSyntax struct {
	// delim is a string delimiter within which text is raw, as Gemma 4's
	// <|"|>; "" if none.
	delim string
	// python admits single-quoted strings and True, False and None.
	python bool
	// bareKeys admits object keys written as bare identifiers.
	bareKeys bool
}

// litReader reads literal values and writes them as JSON.
type litReader struct {
	s   string
	i   int
	syn litSyntax
}

func (r *litReader) space() {
	for r.i < len(r.s) && strings.IndexByte(spaces, r.s[r.i]) >= 0 {
		r.i++
	}
}

func (r *litReader) eat(tok string) bool {
	r.space()
	if strings.HasPrefix(r.s[r.i:], tok) {
		r.i += len(tok)
		return true
	}
	return false
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// ident reads a bare identifier; extra are further bytes it may hold.
func (r *litReader) ident(extra string) string {
	r.space()
	start := r.i
	for r.i < len(r.s) && (isIdentByte(r.s[r.i]) || strings.IndexByte(extra, r.s[r.i]) >= 0) {
		r.i++
	}
	return r.s[start:r.i]
}

// str reads a string literal.
func (r *litReader) str() (string, bool) {
	r.space()
	rest := r.s[r.i:]
	if r.syn.delim != "" && strings.HasPrefix(rest, r.syn.delim) {
		end := strings.Index(rest[len(r.syn.delim):], r.syn.delim)
		if end < 0 {
			return "", false
		}
		r.i += 2*len(r.syn.delim) + end
		return rest[len(r.syn.delim) : len(r.syn.delim)+end], true
	}
	if rest == "" || rest[0] != '"' && !(r.syn.python && rest[0] == '\'') {
		return "", false
	}
	quote := rest[0]
	var b strings.Builder
	for j := 1; j < len(rest); j++ {
		c := rest[j]
		switch {
		case c == quote:
			r.i += j + 1
			return b.String(), true
		case c == '\\' && j+1 < len(rest):
			j++
			switch rest[j] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'u':
				var u rune
				if j+4 < len(rest) && scanHex(rest[j+1:j+5], &u) {
					b.WriteRune(u)
					j += 4
				} else {
					b.WriteString(`\u`)
				}
			default:
				b.WriteByte(rest[j])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

func scanHex(s string, u *rune) bool {
	var v rune
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			v = v*16 + rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v*16 + rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v*16 + rune(c-'A'+10)
		default:
			return false
		}
	}
	*u = v
	return true
}

// value reads one value and writes it to b as JSON.
func (r *litReader) value(b *strings.Builder) bool {
	r.space()
	if r.i >= len(r.s) {
		return false
	}
	if s, ok := r.str(); ok {
		writeJSONString(b, s)
		return true
	}
	switch c := r.s[r.i]; {
	case c == '[':
		r.i++
		b.WriteByte('[')
		for n := 0; ; n++ {
			if r.eat("]") {
				break
			}
			if n > 0 {
				if !r.eat(",") {
					return false
				}
				if r.eat("]") {
					break // a trailing comma
				}
				b.WriteByte(',')
			}
			if !r.value(b) {
				return false
			}
		}
		b.WriteByte(']')
		return true
	case c == '{':
		r.i++
		return r.members(b, "}", ":")
	case c == '-' || c >= '0' && c <= '9':
		start := r.i
		for r.i < len(r.s) && strings.IndexByte("+-.eE0123456789", r.s[r.i]) >= 0 {
			r.i++
		}
		num := r.s[start:r.i]
		if !json.Valid([]byte(num)) {
			return false
		}
		b.WriteString(num)
		return true
	}
	word := r.ident("")
	switch {
	case word == "true" || word == "false" || word == "null":
		b.WriteString(word)
	case r.syn.python && (word == "True" || word == "False"):
		b.WriteString(strings.ToLower(word))
	case r.syn.python && word == "None":
		b.WriteString("null")
	default:
		return false
	}
	return true
}

// members reads the members of an object up to end, keys separated from
// values by sep, after its opening, and writes the object to b.
func (r *litReader) members(b *strings.Builder, end, sep string) bool {
	b.WriteByte('{')
	for n := 0; ; n++ {
		if r.eat(end) {
			break
		}
		if n > 0 {
			if !r.eat(",") {
				return false
			}
			if r.eat(end) {
				break
			}
			b.WriteByte(',')
		}
		key, ok := r.str()
		if !ok && (r.syn.bareKeys || sep == "=") {
			key = r.ident("")
			ok = key != ""
		}
		if !ok || !r.eat(sep) {
			return false
		}
		writeJSONString(b, key)
		b.WriteByte(':')
		if !r.value(b) {
			return false
		}
	}
	b.WriteByte('}')
	return true
}

// writeJSONString writes s as a JSON string, leaving <, > and & as they
// are.
func writeJSONString(b io.Writer, s string) {
	var q bytes.Buffer
	enc := json.NewEncoder(&q)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	_, _ = b.Write(bytes.TrimSuffix(q.Bytes(), []byte("\n")))
}

// valueSyntax is how a family writes literal values, for valueRule.
type valueSyntax struct {
	text      textSyntax // strings
	t, f, nul string     // true, false, null
	sep       string     // between items and members
	key       func(k string) string
	colon     string // between a key and its value
	anyKey    string // rule body of any key
}

// The syntaxes of Gemma 4, FunctionGemma and LFM2 values. A delimited
// string holds no "<" that may start its delimiter; a Python string, no
// quote or new line but escaped.
var (
	gemma4Values = valueSyntax{
		text: textSyntax{delim: `<|"|>`, char: `[^<] | "<"+ [^|<]`, plain: `[^<]`, write: delimited(`<|"|>`)},
		t:    "true", f: "false", nul: "null",
		sep: ",", key: lit, colon: ":", anyKey: `[a-zA-Z_] [a-zA-Z0-9_]*`,
	}
	functionGemmaValues = valueSyntax{
		text: textSyntax{delim: "<escape>", char: `[^<] | "<"+ [^e<]`, plain: `[^<]`, write: delimited("<escape>")},
		t:    "true", f: "false", nul: "null",
		sep: ",", key: lit, colon: ":", anyKey: `[a-zA-Z_] [a-zA-Z0-9_]*`,
	}
	pythonValues = valueSyntax{
		text: textSyntax{delim: "'", char: `[^'\\\n] | "\\" [^\n]`, plain: `[^'\\\n] | "\\" [^\n]`,
			write: func(s string) (string, bool) {
				return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'", true
			}},
		t: "True", f: "False", nul: "None",
		sep: ", ", key: func(k string) string { return lit(`"` + k + `"`) }, colon: ": ",
		anyKey: `"\"" [^"\\\n]* "\""`,
	}
)

// valueRule returns a rule name for values of schema written in syn. It
// knows the types, enums, consts, items, properties and anyOf / oneOf of
// JSON Schema, and bounds strings and numbers as scalarSchema says; what
// it does not know admits any value.
func (g *grammar) valueRule(schema json.RawMessage, syn valueSyntax) (string, error) {
	var s struct {
		Items json.RawMessage   `json:"items"`
		AnyOf []json.RawMessage `json:"anyOf"`
		OneOf []json.RawMessage `json:"oneOf"`
	}
	sc, err := readScalar(schema)
	if err != nil {
		return "", err
	}
	if len(schema) > 0 {
		if err := json.Unmarshal(schema, &s); err != nil {
			return "", fmt.Errorf("parameters: %w", err)
		}
	}
	if len(sc.Enum) > 0 {
		var alts []string
		for _, e := range sc.Enum {
			a, ok, err := g.literal(e, syn)
			if err != nil {
				return "", err
			}
			if ok {
				alts = append(alts, a)
			}
		}
		if len(alts) == 0 {
			return "", fmt.Errorf("parameters: no value of the enum can be written")
		}
		return g.add("enum", strings.Join(alts, " | ")), nil
	}
	if alts := append(s.AnyOf, s.OneOf...); len(alts) > 0 {
		var names []string
		for _, a := range alts {
			n, err := g.valueRule(a, syn)
			if err != nil {
				return "", err
			}
			names = append(names, n)
		}
		return g.add("alt", strings.Join(names, " | ")), nil
	}
	var types []string
	var one string
	if json.Unmarshal(sc.Type, &one) == nil {
		types = []string{one}
	} else {
		_ = json.Unmarshal(sc.Type, &types)
	}
	if len(types) == 0 {
		return g.anyValue(syn), nil
	}
	var alts []string
	for _, t := range types {
		switch t {
		case "string":
			str, err := g.textRule(scalarSchema{MinLength: sc.MinLength, MaxLength: sc.MaxLength}, syn.text)
			if err != nil {
				return "", err
			}
			alts = append(alts, str)
		case "integer":
			alts = append(alts, intBody(sc.bounds()))
		case "number":
			alts = append(alts, numBody(sc.bounds()))
		case "boolean":
			alts = append(alts, lit(syn.t)+" | "+lit(syn.f))
		case "null":
			alts = append(alts, lit(syn.nul))
		case "array":
			item, err := g.valueRule(s.Items, syn)
			if err != nil {
				return "", err
			}
			alts = append(alts, `"[" (`+item+" ("+lit(syn.sep)+" "+item+`)*)? "]"`)
		case "object":
			o, err := readObject(schema)
			if err != nil {
				return "", err
			}
			if len(o.keys) == 0 {
				alts = append(alts, g.anyValue(syn)+"-object") // see anyValue
				continue
			}
			body, err := g.members(o, syn.sep, func(k string) (string, error) {
				v, err := g.valueRule(o.props[k], syn)
				return syn.key(k) + " " + lit(syn.colon) + " " + v, err
			})
			if err != nil {
				return "", err
			}
			alts = append(alts, `"{" `+body+` "}"`)
		default:
			alts = append(alts, g.anyValue(syn))
		}
	}
	return g.add("value", "("+strings.Join(alts, ") | (")+")"), nil
}

// anyValue returns the rule of any value in syn, and defines with it the
// rule of the same name ending -object, of any object.
func (g *grammar) anyValue(syn valueSyntax) string {
	const name = "any-value"
	for _, r := range g.rules {
		if strings.HasPrefix(r, name+" ::=") {
			return name
		}
	}
	str, _ := g.textRule(scalarSchema{}, syn.text) // no enum: no error
	g.rules = append(g.rules,
		name+" ::= "+str+" | "+numBody(nil, nil)+" | "+lit(syn.t)+" | "+lit(syn.f)+" | "+lit(syn.nul)+
			` | "[" (`+name+" ("+lit(syn.sep)+" "+name+`)*)? "]" | `+name+"-object",
		name+`-object ::= "{" (`+name+"-member ("+lit(syn.sep)+" "+name+`-member)*)? "}"`,
		name+"-member ::= "+syn.anyKey+" "+lit(syn.colon)+" "+name)
	return name
}

// literal writes the JSON value v in syn, as a GBNF literal; false for a
// string that syn cannot write.
func (g *grammar) literal(v json.RawMessage, syn valueSyntax) (string, bool, error) {
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return "", false, fmt.Errorf("parameters: %w", err)
	}
	switch x := x.(type) {
	case string:
		w, ok := syn.text.write(x)
		return lit(w), ok, nil
	case bool:
		if x {
			return lit(syn.t), true, nil
		}
		return lit(syn.f), true, nil
	case nil:
		return lit(syn.nul), true, nil
	case float64:
		return lit(string(v)), true, nil
	}
	return "", false, fmt.Errorf("parameters: enum value %s is not a string, number, boolean or null", v)
}
