package family

// This file holds calls whose arguments are written as tagged text, a
// string's value bare and any other as JSON: Qwen3-Coder's, Qwen3.5's and
// Nemotron's
//
//	<function=NAME>
//	<parameter=KEY>
//	VALUE
//	</parameter>
//	</function>
//
// and GLM's NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>; their
// readers and grammar rules.

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// xmlCalls reads the functions of a <tool_call> body. A value loses the
// one newline on either side that the format puts there. In a cut body,
// the function that the cut left without its end is dropped.
func xmlCalls(body string, tools []Tool, cut bool) ([]Call, bool) {
	var calls []Call
	for rest := trimSpace(body); rest != ""; rest = trimSpace(rest) {
		name, inner, after, ok := xmlElement(rest, "function")
		if !ok {
			if cut && startsCut(rest, "<function=") {
				break
			}
			return nil, false
		}
		args := newArgsBuilder(name, tools)
		for inner = trimSpace(inner); inner != ""; inner = trimSpace(inner) {
			key, value, more, ok := xmlElement(inner, "parameter")
			if !ok {
				return nil, false
			}
			args.add(key, strings.TrimSuffix(strings.TrimPrefix(value, "\n"), "\n"))
			inner = more
		}
		calls = append(calls, Call{Name: name, Arguments: args.String()})
		rest = after
	}
	return calls, len(calls) > 0
}

// xmlElement reads <tag=NAME>INNER</tag> at the start of s.
func xmlElement(s, tag string) (name, inner, rest string, ok bool) {
	open := "<" + tag + "="
	if !strings.HasPrefix(s, open) {
		return "", "", "", false
	}
	name, s, ok = strings.Cut(s[len(open):], ">")
	if !ok || !validName(name) {
		return "", "", "", false
	}
	inner, rest, ok = strings.Cut(s, "</"+tag+">")
	return name, inner, rest, ok
}

// glmCall reads the body of a GLM call, which holds one.
func glmCall(body string, tools []Tool, _ bool) ([]Call, bool) {
	name, s := body, ""
	if at := strings.Index(body, "<arg_key>"); at >= 0 {
		name, s = body[:at], body[at:]
	}
	name = strings.TrimSpace(name)
	if !validName(name) {
		return nil, false
	}
	args := newArgsBuilder(name, tools)
	for strings.TrimSpace(s) != "" {
		key, rest, ok := cutTag(s, "<arg_key>", "</arg_key>")
		if !ok {
			return nil, false
		}
		value, rest, ok := cutTag(rest, "<arg_value>", "</arg_value>")
		if !ok {
			return nil, false
		}
		args.add(strings.TrimSpace(key), value)
		s = rest
	}
	return []Call{{Name: name, Arguments: args.String()}}, true
}

// startsCut reports whether s, less white space before it, starts with
// open or is cut short in it: the start of an element that the token
// limit cut.
func startsCut(s, open string) bool {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	return strings.HasPrefix(s, open) || strings.HasPrefix(open, s)
}

// cutTag returns the text of s between open and close, which must start
// s once white space is trimmed, and what follows close.
func cutTag(s, open, close string) (inner, rest string, ok bool) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	if !strings.HasPrefix(s, open) {
		return "", "", false
	}
	return strings.Cut(s[len(open):], close)
}

// validName reports whether a name read from a call's text is one: not
// empty, with no white space or markup in it.
func validName(name string) bool {
	return name != "" && utf8.ValidString(name) && !strings.ContainsFunc(name, func(r rune) bool {
		return unicode.IsSpace(r) || r == '<' || r == '>'
	})
}

// argsBuilder writes the arguments of a call read from parameters written
// as text, in the order written.
type argsBuilder struct {
	buf   bytes.Buffer
	props map[string]json.RawMessage // the tool's parameter schemas
}

// newArgsBuilder returns a builder for the arguments of the tool name.
func newArgsBuilder(name string, tools []Tool) *argsBuilder {
	b := &argsBuilder{}
	for _, t := range tools {
		if t.Name == name {
			var s struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			_ = json.Unmarshal(t.Parameters, &s)
			b.props = s.Properties
		}
	}
	b.buf.WriteByte('{')
	return b
}

// add writes the parameter key, whose value was written as raw: as a
// string where its schema says string (or when it is not JSON of the
// schema's types), else as the JSON it is.
func (b *argsBuilder) add(key, raw string) {
	if b.buf.Len() > 1 {
		b.buf.WriteByte(',')
	}
	writeJSONString(&b.buf, key)
	b.buf.WriteByte(':')
	types := schemaTypes(b.props[key])
	if !slices.Contains(types, "string") || len(types) > 1 {
		v := strings.TrimSpace(raw)
		if slices.Contains(types, "boolean") && (v == "True" || v == "False") {
			v = strings.ToLower(v) // Python's str() of a bool
		}
		var compact bytes.Buffer
		if json.Compact(&compact, []byte(v)) == nil && (len(types) == 0 || jsonTypeIn(compact.Bytes(), types)) {
			b.buf.Write(compact.Bytes())
			return
		}
	}
	writeJSONString(&b.buf, raw)
}

// String returns the arguments as a compact JSON object.
func (b *argsBuilder) String() string { return b.buf.String() + "}" }

// schemaTypes returns the types a JSON Schema allows ("type" as a string
// or a list), none when it does not say.
func schemaTypes(schema json.RawMessage) []string {
	var s struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(schema, &s) != nil || s.Type == nil {
		return nil
	}
	var one string
	if json.Unmarshal(s.Type, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(s.Type, &many)
	return many
}

// jsonTypeIn reports whether the JSON value v is of one of the schema
// types.
func jsonTypeIn(v []byte, types []string) bool {
	var t string
	switch c := v[0]; {
	case c == '{':
		t = "object"
	case c == '[':
		t = "array"
	case c == '"':
		t = "string"
	case c == 't' || c == 'f':
		t = "boolean"
	case c == 'n':
		t = "null"
	default:
		t = "number"
		if !bytes.ContainsAny(v, ".eE") && slices.Contains(types, "integer") {
			return true
		}
	}
	return slices.Contains(types, t)
}

// taggedText is a string's value written as bare text between tags: no
// "</" in it, which may start the closing tag, and no way to escape one.
var taggedText = textSyntax{
	char:  `[^<] | "<"+ [^/<]`,
	plain: `[^<]`,
	write: func(s string) (string, bool) { return s, !strings.Contains(s, "</") },
}

// taggedArgs returns the rule body of a call's parameters, each written
// as open(key), its value, close: a string's value as bare text that its
// schema bounds (see textRule), any other as the JSON its schema admits;
// in the schema's order, or sorted.
func taggedArgs(g *grammar, t Tool, sorted bool, open func(key string) string, close string, schema func([]byte) (string, error)) (string, error) {
	o, err := readObject(toolParams(t))
	if err != nil {
		return "", err
	}
	if sorted {
		o = o.sorted()
	}
	return g.members(o, "", func(k string) (string, error) {
		var value string
		if types := schemaTypes(o.props[k]); len(types) == 1 && types[0] == "string" {
			s, err := readScalar(o.props[k])
			if err != nil {
				return "", err
			}
			if value, err = g.textRule(s, taggedText); err != nil {
				return "", err
			}
		} else if value, err = g.schema(o.props[k], schema); err != nil {
			return "", err
		}
		return lit(open(k)) + " " + value + " " + lit(close), nil
	})
}

// xmlCallsGrammar is the grammar of calls written as xmlCalls reads them,
// each in its own <tool_call>, the parameters in the schema's order or
// sorted.
func xmlCallsGrammar(sorted bool) callsGrammar {
	return callsGrammar{
		sep: "\n",
		call: func(g *grammar, t Tool, schema func([]byte) (string, error)) (string, error) {
			args, err := taggedArgs(g, t, sorted, func(k string) string { return "<parameter=" + k + ">\n" }, "\n</parameter>\n", schema)
			if err != nil {
				return "", err
			}
			return lit("<tool_call>\n<function="+t.Name+">\n") + " " + args + " " + lit("</function>\n</tool_call>"), nil
		},
	}
}
