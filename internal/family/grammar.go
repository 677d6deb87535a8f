package family

// This file holds the toolkit the families' grammars are built with: a
// builder of GBNF rules, the renaming of the rules a JSON Schema converts
// to, literals, the choice of tools, the members of an object, and
// callsGrammar, the shape every family's calls take (markers around all
// calls, a separator between them, a rule per tool for one call).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// grammar builds a GBNF grammar: a root and the rules it uses, some
// written here, some converted from JSON Schemas and renamed so that
// conversions do not collide.
type grammar struct {
	root  string // the root rule's body
	rules []string
	n     int
}

// add adds a rule of a fresh name made from base, and returns the name.
func (g *grammar) add(base, body string) string {
	g.n++
	name := fmt.Sprintf("%s%d", base, g.n)
	g.rules = append(g.rules, name+" ::= "+body)
	return name
}

// define adds the rule name once, and returns the name.
func (g *grammar) define(name, body string) string {
	if !slices.ContainsFunc(g.rules, func(r string) bool { return strings.HasPrefix(r, name+" ::= ") }) {
		g.rules = append(g.rules, name+" ::= "+body)
	}
	return name
}

// schema converts a JSON Schema with convert (the engine's converter,
// whose start rule is root), adds its rules renamed, and returns the name
// of its start rule. No schema admits any value.
func (g *grammar) schema(schema json.RawMessage, convert func([]byte) (string, error)) (string, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		schema = json.RawMessage(`{}`)
	}
	text, err := convert(schema)
	if err != nil {
		return "", fmt.Errorf("parameters: %w", err)
	}
	g.n++
	prefix := fmt.Sprintf("s%d-", g.n)
	g.rules = append(g.rules, strings.TrimSpace(renameRules(text, prefix)))
	return prefix + "root", nil
}

// String returns the grammar, root first.
func (g *grammar) String() string {
	return "root ::= " + g.root + "\n" + strings.Join(g.rules, "\n") + "\n"
}

// callsGrammar is the shape of a family's calls: open, one or more calls
// with sep between them, close. It is a Tools.Grammar through build.
type callsGrammar struct {
	// open and close are written around all the calls; "" for none.
	open, close string
	// sep is written between calls.
	sep string
	// one says the format holds one call a turn; oneIfNamed, that a named
	// tool is called once.
	one, oneIfNamed bool
	// call returns the rule body of one call of t.
	call func(g *grammar, t Tool, schema func([]byte) (string, error)) (string, error)
}

// build implements Tools.Grammar.
func (c callsGrammar) build(tools []Tool, name string, single bool, schema func([]byte) (string, error)) (string, error) {
	picked, err := pickTools(tools, name)
	if err != nil {
		return "", err
	}
	g := &grammar{}
	var alts []string
	for _, t := range picked {
		body, err := c.call(g, t, schema)
		if err != nil {
			return "", fmt.Errorf("family: tool %q: %w", t.Name, err)
		}
		alts = append(alts, g.add("call", body))
	}
	call := g.add("any-call", strings.Join(alts, " | "))
	single = single || c.one || c.oneIfNamed && name != ""
	root := call
	switch {
	case single:
	case c.sep == "":
		root = call + "+"
	default:
		root = call + " (" + lit(c.sep) + " " + call + ")*"
	}
	if c.open != "" {
		root = lit(c.open) + " " + root
	}
	if c.close != "" {
		root += " " + lit(c.close)
	}
	g.root = root
	return g.String(), nil
}

// pickTools returns the tools a grammar admits calls of: the tool name,
// or all of tools when name is "".
func pickTools(tools []Tool, name string) ([]Tool, error) {
	if name == "" {
		if len(tools) == 0 {
			return nil, fmt.Errorf("family: no tools to call")
		}
		return tools, nil
	}
	for _, t := range tools {
		if t.Name == name {
			return []Tool{t}, nil
		}
	}
	return nil, fmt.Errorf("family: tool %q is not among the tools", name)
}

// toolParams returns a tool's JSON Schema, an object of any fields when
// it has none.
func toolParams(t Tool) json.RawMessage {
	if len(bytes.TrimSpace(t.Parameters)) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	return t.Parameters
}

// object is the part of an object's JSON Schema that call syntaxes need.
type object struct {
	keys     []string // in the schema's order
	props    map[string]json.RawMessage
	required map[string]bool
}

// readObject reads an object schema; a schema without properties is an
// object of no fixed properties.
func readObject(schema json.RawMessage) (object, error) {
	o := object{props: map[string]json.RawMessage{}, required: map[string]bool{}}
	if len(bytes.TrimSpace(schema)) == 0 {
		return o, nil
	}
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return o, fmt.Errorf("parameters: %w", err)
	}
	for _, k := range s.Required {
		o.required[k] = true
	}
	if len(s.Properties) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(s.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return o, fmt.Errorf("parameters: properties is not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return o, fmt.Errorf("parameters: properties: %w", err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return o, fmt.Errorf("parameters: properties: %w", err)
		}
		k := tok.(string)
		o.keys = append(o.keys, k)
		o.props[k] = v
	}
	return o, nil
}

// sorted returns o with its keys sorted, as templates that sort them
// write them.
func (o object) sorted() object {
	o.keys = slices.Sorted(slices.Values(o.keys))
	return o
}

// members returns a rule for the members of o in its keys' order, each
// written by member and separated by sep: required ones always, optional
// ones perhaps. An object of no fixed properties has no members.
func (g *grammar) members(o object, sep string, member func(key string) (string, error)) (string, error) {
	// start: no member written yet; tail: some written.
	start, tail := `""`, `""`
	for i := len(o.keys) - 1; i >= 0; i-- {
		k := o.keys[i]
		m, err := member(k)
		if err != nil {
			return "", fmt.Errorf("parameter %q: %w", k, err)
		}
		var s, t string
		sepLit := ""
		if sep != "" {
			sepLit = lit(sep) + " "
		}
		if o.required[k] {
			s = m + " " + tail
			t = sepLit + m + " " + tail
		} else {
			s = "(" + m + " " + tail + " | " + start + ")"
			t = "(" + sepLit + m + ")? " + tail
		}
		start, tail = g.add("members", s), g.add("members", t)
	}
	return start, nil
}

// renameRules puts prefix before every rule name of a GBNF text, where it
// is defined and where it is used, leaving literals, character classes,
// repetition counts and comments alone.
func renameRules(text, prefix string) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '"' || c == '[':
			end := byte('"')
			if c == '[' {
				end = ']'
			}
			j := i + 1
			for j < len(text) && text[j] != end {
				if text[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(text))
			b.WriteString(text[i:j])
			i = j
		case c == '{' || c == '#':
			end := byte('}')
			if c == '#' {
				end = '\n'
			}
			j := strings.IndexByte(text[i:], end)
			if j < 0 {
				j = len(text) - i - 1
			}
			b.WriteString(text[i : i+j+1])
			i += j + 1
		case isNameByte(c):
			j := i
			for j < len(text) && isNameByte(text[j]) {
				j++
			}
			b.WriteString(prefix + text[i:j])
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// isNameByte reports whether c may be part of a GBNF rule name.
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// lit quotes s as a GBNF string literal.
func lit(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}
