package family

// This file holds what the families of <think> sections and marked calls
// share (Qwen, Hermes/ChatML, DeepSeek, GLM): the streaming splitter
// markedParser, the readers of calls written as XML-like parameters, and
// the grammar pieces that wrap a tool's JSON Schema rule in a family's
// markers.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The markers of a thinking section in every family of this file.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// callMarks is how a family writes its calls: the text between open and
// close is a body that parse reads into one or more calls.
type callMarks struct {
	open, close string
	// parse reads a body; tools are the offered tools, for the types of
	// parameters that are written as bare text.
	parse func(body string, tools []Tool) ([]Call, bool)
}

// markedParser splits an output into reasoning (a <think> section at the
// start, or from the start when the prompt opened it), answer text, and
// calls between a family's markers. Markers and the white space around
// them are part of neither text nor reasoning. A call is released once
// closed; a call that does not parse is released as the text it was.
type markedParser struct {
	marks callMarks
	tools []Tool
	think bool // the family may open a thinking section itself
	// startThinking: the prompt opened the thinking section, which an
	// output may still open again with <think>.
	startThinking bool

	phase    markedPhase
	pending  string          // text not yet released
	body     strings.Builder // the current call's body
	trimLead bool            // drop white space before the next text
	gap      string          // the white space dropped before the call
}

type markedPhase int

const (
	markedStart    markedPhase = iota // nothing but white space yet
	markedThinking                    // inside <think>
	markedText                        // the answer
	markedCall                        // inside a call's markers
)

// newMarkedParser returns a parser of calls written between marks; think
// says the family writes <think> sections.
func newMarkedParser(cfg ParserConfig, marks callMarks, think bool) *markedParser {
	p := &markedParser{marks: marks, tools: cfg.Tools, think: think, trimLead: true}
	// Some checkpoints write <think> again though the prompt opened it:
	// markedStart strips it, then thinks.
	p.startThinking = cfg.Thinking && think
	return p
}

// Push implements Parser.
func (p *markedParser) Push(text string) Output {
	p.pending += text
	var out Output
	p.step(&out)
	return out
}

// step releases what pending allows, moving through phases.
func (p *markedParser) step(out *Output) {
	for {
		switch p.phase {
		case markedStart:
			trimmed := strings.TrimLeftFunc(p.pending, unicode.IsSpace)
			if trimmed == "" {
				p.pending = ""
				return
			}
			if p.think || p.startThinking {
				if strings.HasPrefix(trimmed, thinkOpen) {
					p.pending = trimmed[len(thinkOpen):]
					p.phase, p.trimLead = markedThinking, true
					continue
				}
				if strings.HasPrefix(thinkOpen, trimmed) {
					return // may still become <think>
				}
			}
			p.pending = trimmed
			if p.startThinking {
				p.phase, p.trimLead = markedThinking, true
			} else {
				p.phase = markedText
			}
		case markedThinking:
			if p.trimLead {
				p.pending = strings.TrimLeftFunc(p.pending, unicode.IsSpace)
				if p.pending == "" {
					return
				}
				p.trimLead = false
			}
			if at := strings.Index(p.pending, thinkClose); at >= 0 {
				out.Reasoning += strings.TrimRightFunc(p.pending[:at], unicode.IsSpace)
				p.pending = p.pending[at+len(thinkClose):]
				p.phase, p.trimLead = markedText, true
				continue
			}
			keep := heldBack(p.pending, thinkClose)
			out.Reasoning += p.pending[:len(p.pending)-keep]
			p.pending = p.pending[len(p.pending)-keep:]
			return
		case markedText:
			if p.trimLead {
				p.pending = strings.TrimLeftFunc(p.pending, unicode.IsSpace)
				if p.pending == "" {
					return
				}
				p.trimLead = false
			}
			if at := strings.Index(p.pending, p.marks.open); at >= 0 {
				before := strings.TrimRightFunc(p.pending[:at], unicode.IsSpace)
				out.Text += before
				p.gap = p.pending[len(before):at]
				p.pending = p.pending[at+len(p.marks.open):]
				p.phase = markedCall
				continue
			}
			keep := heldBack(p.pending, p.marks.open)
			out.Text += p.pending[:len(p.pending)-keep]
			p.pending = p.pending[len(p.pending)-keep:]
			return
		case markedCall:
			p.body.WriteString(p.pending)
			p.pending = ""
			body := p.body.String()
			at := strings.Index(body, p.marks.close)
			if at < 0 {
				return
			}
			p.body.Reset()
			p.pending = body[at+len(p.marks.close):]
			p.phase = markedText
			if calls, ok := p.marks.parse(body[:at], p.tools); ok {
				out.Calls = append(out.Calls, calls...)
				p.trimLead = true
			} else {
				out.Text += p.gap + p.marks.open + body[:at+len(p.marks.close)]
			}
		}
	}
}

// Flush implements Parser.
func (p *markedParser) Flush(truncated bool) Output {
	var out Output
	switch p.phase {
	case markedStart:
		if p.startThinking {
			out.Reasoning = strings.TrimSpace(p.pending)
		} else {
			out.Text = strings.TrimSpace(p.pending)
		}
	case markedThinking:
		out.Reasoning = strings.TrimRightFunc(p.pending, unicode.IsSpace)
	case markedText:
		if !p.trimLead {
			out.Text = p.pending
		}
	case markedCall:
		body := p.body.String() + p.pending
		p.body.Reset()
		if calls, ok := p.marks.parse(body, p.tools); ok {
			out.Calls = calls
		} else if !truncated {
			out.Text = p.gap + p.marks.open + body
		}
	}
	p.pending = ""
	p.phase = markedText
	p.trimLead = true
	return out
}

// heldBack returns how many bytes at the end of s must be held back: the
// longest suffix that may still become marker, with the white space
// before it (white space before a marker is dropped), or else s's
// trailing white space.
func heldBack(s, marker string) int {
	keep := 0
	for k := min(len(marker)-1, len(s)); k > 0; k-- {
		if strings.HasSuffix(s, marker[:k]) {
			keep = k
			break
		}
	}
	rest := s[:len(s)-keep]
	return keep + len(rest) - len(strings.TrimRightFunc(rest, unicode.IsSpace))
}

// hermesCall reads a call written as JSON, {"name": ..., "arguments":
// {...}}, as Hermes, Qwen and inferkit's ChatML write them between
// <tool_call> and </tool_call>. Arguments written as a JSON string are
// taken as the object the string holds.
func hermesCall(body string, _ []Tool) ([]Call, bool) {
	var c struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal([]byte(body), &c) != nil || c.Name == "" {
		return nil, false
	}
	args, ok := compactArgs(c.Arguments)
	if !ok {
		return nil, false
	}
	return []Call{{Name: c.Name, Arguments: args}}, true
}

// compactArgs returns arguments as a compact JSON object: {} when absent,
// the object a JSON string holds when written as one.
func compactArgs(args json.RawMessage) (string, bool) {
	var text string
	if json.Unmarshal(args, &text) == nil {
		args = json.RawMessage(text)
	}
	if len(bytes.TrimSpace(args)) == 0 {
		return "{}", true
	}
	var buf bytes.Buffer
	if json.Compact(&buf, args) != nil || buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return "", false
	}
	return buf.String(), true
}

// argsBuilder writes the arguments of a call read from parameters written
// as text (Qwen3-Coder's <parameter=...>, GLM's <arg_value>), in the
// order written.
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
// string where its schema says string (or when it is not JSON), else as
// the JSON it is.
func (b *argsBuilder) add(key, raw string) {
	if b.buf.Len() > 1 {
		b.buf.WriteByte(',')
	}
	k, _ := json.Marshal(key)
	b.buf.Write(k)
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
	s, _ := json.Marshal(raw)
	b.buf.Write(s)
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

// cutTag returns the text of s between open and close, which must start
// s once white space is trimmed, and what follows close.
func cutTag(s, open, close string) (inner, rest string, ok bool) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	if !strings.HasPrefix(s, open) {
		return "", "", false
	}
	inner, rest, ok = strings.Cut(s[len(open):], close)
	return inner, rest, ok
}

// validName reports whether a tool name read from a call's text is one:
// not empty, with no white space or markup in it.
func validName(name string) bool {
	return name != "" && utf8.ValidString(name) && !strings.ContainsFunc(name, func(r rune) bool {
		return unicode.IsSpace(r) || r == '<' || r == '>'
	})
}

// chosenTools returns the tools a grammar admits calls of: the tool
// name, or all of tools when name is "".
func chosenTools(tools []Tool, name string) ([]Tool, error) {
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

// params returns a tool's JSON Schema, an object of any fields when it
// has none.
func params(t Tool) json.RawMessage {
	if len(bytes.TrimSpace(t.Parameters)) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	return t.Parameters
}

// grammarBuilder gathers the rules of a grammar whose parts come from
// several conversions of JSON Schemas, each of whose rule names get a
// prefix of their own so that they do not collide.
type grammarBuilder struct {
	rules []string
	n     int
}

// schemaRule converts a JSON Schema with schema and returns the name of
// the rule that admits it.
func (g *grammarBuilder) schemaRule(js []byte, schema func([]byte) (string, error)) (string, error) {
	text, err := schema(js)
	if err != nil {
		return "", err
	}
	g.n++
	prefix := fmt.Sprintf("t%d-", g.n)
	g.rules = append(g.rules, prefixRules(strings.TrimSpace(text), prefix))
	return prefix + "root", nil
}

// add adds a rule.
func (g *grammarBuilder) add(name, body string) {
	g.rules = append(g.rules, name+" ::= "+body)
}

// String returns the grammar, root first.
func (g *grammarBuilder) String() string {
	return strings.Join(g.rules, "\n") + "\n"
}

// prefixRules renames every rule of a GBNF grammar, where it is defined
// and where it is used, by putting prefix before its name. String
// literals, character classes and repetition counts are left alone.
func prefixRules(g, prefix string) string {
	var out strings.Builder
	isName := func(c byte) bool {
		return c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; i < len(g); {
		c := g[i]
		switch {
		case c == '"' || c == '[':
			end := byte('"')
			if c == '[' {
				end = ']'
			}
			j := i + 1
			for j < len(g) && g[j] != end {
				if g[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(g))
			out.WriteString(g[i:j])
			i = j
		case c == '{':
			j := strings.IndexByte(g[i:], '}')
			if j < 0 {
				j = len(g) - i - 1
			}
			out.WriteString(g[i : i+j+1])
			i += j + 1
		case c == '#':
			j := strings.IndexByte(g[i:], '\n')
			if j < 0 {
				j = len(g) - i
			}
			out.WriteString(g[i : i+j])
			i += j
		case isName(c) && c != '-' && (c < '0' || c > '9'):
			j := i
			for j < len(g) && isName(g[j]) {
				j++
			}
			out.WriteString(prefix)
			out.WriteString(g[i:j])
			i = j
		default:
			out.WriteByte(c)
			i++
		}
	}
	return out.String()
}

// gbnfLiteral quotes s as a GBNF string literal.
func gbnfLiteral(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// property is one parameter of a tool's schema, in the schema's order.
type property struct {
	name     string
	schema   json.RawMessage
	required bool
}

// properties returns a tool's parameters in the order its schema lists
// them.
func properties(t Tool) ([]property, error) {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(params(t), &s); err != nil {
		return nil, fmt.Errorf("family: tool %q: parameters: %w", t.Name, err)
	}
	if len(s.Properties) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(s.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("family: tool %q: properties is not an object", t.Name)
	}
	var props []property
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("family: tool %q: properties: %w", t.Name, err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("family: tool %q: properties: %w", t.Name, err)
		}
		name := tok.(string)
		props = append(props, property{name: name, schema: v, required: slices.Contains(s.Required, name)})
	}
	return props, nil
}

// textArgsRules adds the rules of a call's parameters written as text,
// each as open(name) value close: a string parameter's value as bare
// text with no '<' in it, any other as the JSON its schema admits. It
// returns the rule's name: parameters in the schema's order, the
// required ones always, the others optionally.
func (g *grammarBuilder) textArgsRules(t Tool, rule string, open func(name string) string, close string, schema func([]byte) (string, error)) (string, error) {
	props, err := properties(t)
	if err != nil {
		return "", err
	}
	var seq []string
	for _, p := range props {
		var value string
		if types := schemaTypes(p.schema); len(types) == 1 && types[0] == "string" {
			value = "textvalue"
		} else if value, err = g.schemaRule(p.schema, schema); err != nil {
			return "", fmt.Errorf("family: tool %q: parameter %q: %w", t.Name, p.name, err)
		}
		part := gbnfLiteral(open(p.name)) + " " + value + " " + gbnfLiteral(close)
		if !p.required {
			part = "(" + part + ")?"
		}
		seq = append(seq, part)
	}
	if len(seq) == 0 {
		seq = []string{`""`}
	}
	g.add(rule, strings.Join(seq, " "))
	return rule, nil
}

// textValueRule is the rule of a string parameter's bare text.
const textValueRule = `textvalue ::= [^<]*`

// callsRoot returns the root rule of one call, or of one or more calls
// with sep between them.
func callsRoot(call string, single bool, sep string) string {
	if single {
		return "root ::= " + call
	}
	if sep == "" {
		return "root ::= " + call + "+"
	}
	return "root ::= " + call + " (" + gbnfLiteral(sep) + " " + call + ")*"
}

// isChatML reports whether a template writes ChatML turns.
func isChatML(template string) bool { return strings.Contains(template, "<|im_start|>") }

// enableThinking is the Vars of templates switched by enable_thinking.
func enableThinking(on bool, _ Effort) map[string]any {
	return map[string]any{"enable_thinking": on}
}

// hermesMarks are the markers of calls written as JSON in <tool_call>.
var hermesMarks = callMarks{open: "<tool_call>", close: "</tool_call>", parse: hermesCall}

// hermesGrammar admits calls written as JSON in <tool_call>, each on lines
// of its own: <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>.
func hermesGrammar(tools []Tool, name string, single bool, schema func([]byte) (string, error)) (string, error) {
	chosen, err := chosenTools(tools, name)
	if err != nil {
		return "", err
	}
	g := &grammarBuilder{}
	g.add("root", "")
	var alts []string
	for i, t := range chosen {
		args, err := g.schemaRule(params(t), schema)
		if err != nil {
			return "", fmt.Errorf("family: tool %q: parameters: %w", t.Name, err)
		}
		n, _ := json.Marshal(t.Name)
		rule := fmt.Sprintf("call%d", i)
		g.add(rule, gbnfLiteral(`{"name": `+string(n)+`, "arguments": `)+" "+args+` "}"`)
		alts = append(alts, rule)
	}
	g.add("call", `"<tool_call>\n" (`+strings.Join(alts, " | ")+`) "\n</tool_call>"`)
	g.rules[0] = callsRoot("call", single, "\n")
	return g.String(), nil
}

// qwenXMLMarks are the markers of calls written as Qwen3-Coder and
// Qwen3.5 write them:
// <tool_call>\n<function=f>\n<parameter=p>\nvalue\n</parameter>\n</function>\n</tool_call>.
var qwenXMLMarks = callMarks{open: "<tool_call>", close: "</tool_call>", parse: qwenXMLCall}

// qwenXMLCall reads the body of a Qwen3-Coder call. A value loses the
// one newline on either side that the format puts there.
func qwenXMLCall(body string, tools []Tool) ([]Call, bool) {
	s := strings.TrimSpace(body)
	if !strings.HasPrefix(s, "<function=") || !strings.HasSuffix(s, "</function>") {
		return nil, false
	}
	s = strings.TrimSuffix(s[len("<function="):], "</function>")
	name, s, ok := strings.Cut(s, ">")
	if !ok || !validName(name) {
		return nil, false
	}
	args := newArgsBuilder(name, tools)
	for strings.TrimSpace(s) != "" {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		if !strings.HasPrefix(s, "<parameter=") {
			return nil, false
		}
		key, rest, ok := strings.Cut(s[len("<parameter="):], ">")
		if !ok || !validName(key) {
			return nil, false
		}
		value, rest, ok := strings.Cut(rest, "</parameter>")
		if !ok {
			return nil, false
		}
		value = strings.TrimPrefix(value, "\n")
		value = strings.TrimSuffix(value, "\n")
		args.add(key, value)
		s = rest
	}
	return []Call{{Name: name, Arguments: args.String()}}, true
}

// qwenXMLGrammar admits calls as qwenXMLCall reads them, as the template
// writes them; a string parameter's value has no '<' in it.
func qwenXMLGrammar(tools []Tool, name string, single bool, schema func([]byte) (string, error)) (string, error) {
	chosen, err := chosenTools(tools, name)
	if err != nil {
		return "", err
	}
	g := &grammarBuilder{}
	g.add("root", "")
	var alts []string
	for i, t := range chosen {
		args, err := g.textArgsRules(t, fmt.Sprintf("args%d", i),
			func(p string) string { return "<parameter=" + p + ">\n" }, "\n</parameter>\n", schema)
		if err != nil {
			return "", err
		}
		rule := fmt.Sprintf("call%d", i)
		g.add(rule, gbnfLiteral("<function="+t.Name+">\n")+" "+args+` "</function>"`)
		alts = append(alts, rule)
	}
	g.add("call", `"<tool_call>\n" (`+strings.Join(alts, " | ")+`) "\n</tool_call>"`)
	g.rules[0] = callsRoot("call", single, "\n")
	g.rules = append(g.rules, textValueRule)
	return g.String(), nil
}
