package family

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// This file holds what the families of group C (Gemma 3 and 4,
// FunctionGemma, LFM2, Olmo 3, Nemotron) share: a streaming parser for
// output whose thinking and calls are delimited by markers, and a grammar
// builder for call syntaxes that are not JSON.
//
// The pinned Ollama module has parsers for Gemma 4, FunctionGemma, LFM2,
// Olmo 3 and Nemotron 3 Nano, but they are not used: importing
// model/parsers needs go.sum entries this module lacks, and they do not
// meet our bar (a call that does not parse is dropped, not shown as text;
// a call cut at the end of the output is repaired and released rather than
// dropped when the token limit cut it). Their formats, as their renderers
// and tests show them, are what these parsers read.

// markup describes how a family marks thinking and calls in its output.
type markup struct {
	// thinkOpen and thinkClose delimit a thinking section; "" if the
	// family does not think.
	thinkOpen, thinkClose string
	// thinkLabel is dropped when it starts a thinking section, as the
	// channel name "thought\n" after Gemma 4's <|channel>.
	thinkLabel string
	// callEndsThinking says a call marker also ends a thinking section,
	// as Nemotron sometimes skips </think>.
	callEndsThinking bool
	// callOpen and callClose delimit one block of calls.
	callOpen, callClose string
	// parse reads the body of a block of calls; false when it is not one.
	parse func(body string) ([]Call, bool)
}

type markupState int

const (
	inText markupState = iota
	inThinking
	inCall
)

// markupParser splits output by a markup. Text and reasoning are released
// as they come, but for what may still become a marker and the white space
// before it: white space next to a marker is dropped. A block of calls is
// released whole when it closes; one that does not parse is released as
// the text it was written as.
type markupParser struct {
	m        markup
	state    markupState
	buf      string // unreleased output of the current state
	trimming bool   // dropping white space at the start of a section
	labeled  bool   // the thinking label has been looked for
}

func newMarkupParser(m markup, cfg ParserConfig) *markupParser {
	p := &markupParser{m: m, trimming: true}
	if cfg.Thinking && m.thinkOpen != "" {
		p.state = inThinking
		p.labeled = true
	}
	return p
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func trimSpaceLeft(s string) string {
	return strings.TrimLeft(s, " \t\r\n")
}

func trimSpaceRight(s string) string {
	return strings.TrimRight(s, " \t\r\n")
}

// firstMarker finds the first of markers in s: its index and the marker,
// or -1.
func firstMarker(s string, markers ...string) (int, string) {
	at, which := -1, ""
	for _, m := range markers {
		if m == "" {
			continue
		}
		if i := strings.Index(s, m); i >= 0 && (at < 0 || i < at) {
			at, which = i, m
		}
	}
	return at, which
}

// releasable returns how much of s may be released now: all but a suffix
// that may still become one of markers and the white space before it.
func releasable(s string, markers ...string) int {
	keep := 0
	for _, m := range markers {
		if m == "" {
			continue
		}
		for k := min(len(m)-1, len(s)); k > keep; k-- {
			if strings.HasSuffix(s, m[:k]) {
				keep = k
				break
			}
		}
	}
	n := len(s) - keep
	for n > 0 && isSpace(s[n-1]) {
		n--
	}
	return n
}

func (p *markupParser) Push(text string) Output {
	p.buf += text
	var out Output
	for p.step(&out) {
	}
	return out
}

// step handles what buf holds in the current state and reports whether
// the state changed, so that there may be more to do.
func (p *markupParser) step(out *Output) bool {
	if p.trimming {
		p.buf = trimSpaceLeft(p.buf)
		if p.buf == "" {
			return false
		}
		p.trimming = false
	}
	switch p.state {
	case inThinking:
		if !p.labeled && p.m.thinkLabel != "" {
			switch {
			case strings.HasPrefix(p.buf, p.m.thinkLabel):
				p.buf = trimSpaceLeft(p.buf[len(p.m.thinkLabel):])
			case strings.HasPrefix(p.m.thinkLabel, p.buf):
				return false // may still be the label
			}
		}
		p.labeled = true
		ends := []string{p.m.thinkClose}
		if p.m.callEndsThinking {
			ends = append(ends, p.m.callOpen)
		}
		at, marker := firstMarker(p.buf, ends...)
		if at < 0 {
			n := releasable(p.buf, ends...)
			out.Reasoning += p.buf[:n]
			p.buf = p.buf[n:]
			return false
		}
		out.Reasoning += trimSpaceRight(p.buf[:at])
		p.buf = p.buf[at+len(marker):]
		p.state, p.trimming = inText, true
		if marker == p.m.callOpen {
			p.state, p.trimming = inCall, false
		}
		return true
	case inCall:
		at := strings.Index(p.buf, p.m.callClose)
		if at < 0 {
			return false
		}
		body := p.buf[:at]
		p.buf = p.buf[at+len(p.m.callClose):]
		calls, ok := p.m.parse(body)
		if ok {
			out.Calls = append(out.Calls, calls...)
		} else {
			out.Text += p.m.callOpen + body + p.m.callClose
		}
		// White space after a call goes with it; after text, it is text.
		p.state, p.trimming = inText, ok
		return true
	}
	at, marker := firstMarker(p.buf, p.m.thinkOpen, p.m.callOpen)
	if at < 0 {
		n := releasable(p.buf, p.m.thinkOpen, p.m.callOpen)
		out.Text += p.buf[:n]
		p.buf = p.buf[n:]
		return false
	}
	out.Text += trimSpaceRight(p.buf[:at])
	p.buf = p.buf[at+len(marker):]
	if marker == p.m.thinkOpen {
		p.state, p.trimming, p.labeled = inThinking, true, false
	} else {
		p.state = inCall
	}
	return true
}

func (p *markupParser) Flush(truncated bool) Output {
	var out Output
	rest := p.buf
	p.buf = ""
	switch p.state {
	case inThinking:
		out.Reasoning = trimSpaceRight(rest)
	case inCall:
		if truncated {
			break // a call cut short is no call, nor text
		}
		if calls, ok := p.m.parse(rest); ok {
			out.Calls = calls
		} else {
			out.Text = p.m.callOpen + rest
		}
	default:
		if !p.trimming {
			out.Text = rest
		}
	}
	p.state, p.trimming = inText, true
	return out
}

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
	for r.i < len(r.s) && isSpace(r.s[r.i]) {
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
func writeJSONString(b *strings.Builder, s string) {
	var q bytes.Buffer
	enc := json.NewEncoder(&q)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Write(bytes.TrimSuffix(q.Bytes(), []byte("\n")))
}

// parseKeyedCall reads a call written as call:NAME{key:value,...}, as
// Gemma 4 and FunctionGemma write them, with strings between delim.
func parseKeyedCall(body, delim string) ([]Call, bool) {
	r := &litReader{s: body, syn: litSyntax{delim: delim, bareKeys: true}}
	if !r.eat("call:") {
		return nil, false
	}
	name := r.ident("-.")
	if name == "" || !r.eat("{") {
		return nil, false
	}
	var args strings.Builder
	if !r.members(&args, "}", ":") {
		return nil, false
	}
	if r.space(); r.i != len(r.s) {
		return nil, false
	}
	return []Call{{Name: name, Arguments: args.String()}}, true
}

// parsePythonCalls reads calls written as Python function calls,
// NAME(key=value, ...), separated by commas or new lines and, when
// bracketed, in a list: [a(x=1), b()], as LFM2 and Olmo 3 write them.
func parsePythonCalls(body string, bracketed bool) ([]Call, bool) {
	r := &litReader{s: body, syn: litSyntax{python: true}}
	if bracketed && !r.eat("[") {
		return nil, false
	}
	var calls []Call
	for {
		r.space()
		if bracketed && r.eat("]") {
			break
		}
		if !bracketed && r.i == len(r.s) {
			break
		}
		if len(calls) > 0 {
			r.eat(",")
		}
		name := r.ident("-.")
		if name == "" || !r.eat("(") {
			return nil, false
		}
		var args strings.Builder
		if !r.members(&args, ")", "=") {
			return nil, false
		}
		calls = append(calls, Call{Name: name, Arguments: args.String()})
	}
	if r.space(); r.i != len(r.s) || len(calls) == 0 {
		return nil, false
	}
	return calls, true
}

// grammar builds a GBNF grammar rule by rule.
type grammar struct {
	rules []string
	n     int
}

// add adds a rule of a fresh name made from base and returns the name.
func (g *grammar) add(base, body string) string {
	g.n++
	name := fmt.Sprintf("%s%d", base, g.n)
	g.rules = append(g.rules, name+" ::= "+body)
	return name
}

func (g *grammar) String() string { return strings.Join(g.rules, "\n") + "\n" }

// lit quotes s as a GBNF literal.
func lit(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

// pickTools returns the tools a grammar admits calls of: the one named, or
// all of them when name is "".
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

// object is the part of a JSON Schema object that call syntaxes need.
type object struct {
	keys     []string // sorted, as the families' templates write them
	props    map[string]json.RawMessage
	required map[string]bool
}

// readObject reads an object schema; nil or a schema without properties
// is an object of no fixed properties.
func readObject(schema json.RawMessage) (object, error) {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	o := object{props: map[string]json.RawMessage{}, required: map[string]bool{}}
	if len(schema) == 0 {
		return o, nil
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return o, fmt.Errorf("family: parameters: %w", err)
	}
	for k, v := range s.Properties {
		o.keys = append(o.keys, k)
		o.props[k] = v
	}
	sort.Strings(o.keys)
	for _, k := range s.Required {
		o.required[k] = true
	}
	return o, nil
}

// members returns a rule body for the members of o in key order, each
// written by member and separated by sep: required ones always, optional
// ones perhaps. An object of no fixed properties has no members.
func (g *grammar) members(o object, sep string, member func(key string) (string, error)) (string, error) {
	// start(i): no member written yet; tail(i): some written.
	start, tail := `""`, `""`
	for i := len(o.keys) - 1; i >= 0; i-- {
		k := o.keys[i]
		m, err := member(k)
		if err != nil {
			return "", err
		}
		var s, t string
		if o.required[k] {
			s = m + " " + tail
			t = lit(sep) + " " + m + " " + tail
		} else {
			s = "(" + m + " " + tail + " | " + start + ")"
			t = "(" + lit(sep) + " " + m + ")? " + tail
		}
		start, tail = g.add("members", s), g.add("members", t)
	}
	return start, nil
}

// valueSyntax is how a family writes literal values, for valueRule.
type valueSyntax struct {
	str       string // rule body of a string
	t, f, nul string // true, false, null
	sep       string // between items and members
	key       func(k string) string
	colon     string // between a key and its value
	anyKey    string // rule body of any key
}

// The syntaxes of Gemma 4, FunctionGemma and LFM2 values.
var (
	gemma4Values = valueSyntax{
		str: `"<|\"|>" ([^<] | "<" [^|])* "<|\"|>"`, t: "true", f: "false", nul: "null",
		sep: ",", key: lit, colon: ":", anyKey: `[a-zA-Z_] [a-zA-Z0-9_]*`,
	}
	functionGemmaValues = valueSyntax{
		str: `"<escape>" ([^<] | "<" [^e])* "<escape>"`, t: "true", f: "false", nul: "null",
		sep: ",", key: lit, colon: ":", anyKey: `[a-zA-Z_] [a-zA-Z0-9_]*`,
	}
	pythonValues = valueSyntax{
		str: `"'" ([^'\\\n] | "\\" [^\n])* "'"`, t: "True", f: "False", nul: "None",
		sep: ", ", key: func(k string) string { return lit(`"` + k + `"`) }, colon: ": ",
		anyKey: `"\"" [^"\\\n]* "\""`,
	}
)

const (
	intBody = `"-"? ("0" | [1-9] [0-9]*)`
	numBody = intBody + ` ("." [0-9]+)? ([eE] [-+]? [0-9]+)?`
)

// valueRule returns a rule name for values of schema written in syn. It
// knows the types, enums, consts, items, properties and anyOf / oneOf of
// JSON Schema; what it does not know admits any value.
func (g *grammar) valueRule(schema json.RawMessage, syn valueSyntax) (string, error) {
	var s struct {
		Type  json.RawMessage   `json:"type"`
		Enum  []json.RawMessage `json:"enum"`
		Const json.RawMessage   `json:"const"`
		Items json.RawMessage   `json:"items"`
		AnyOf []json.RawMessage `json:"anyOf"`
		OneOf []json.RawMessage `json:"oneOf"`
	}
	if len(schema) > 0 {
		if err := json.Unmarshal(schema, &s); err != nil {
			return "", fmt.Errorf("family: parameters: %w", err)
		}
	}
	if s.Const != nil {
		s.Enum = append(s.Enum, s.Const)
	}
	if len(s.Enum) > 0 {
		var alts []string
		for _, e := range s.Enum {
			a, err := g.literal(e, syn)
			if err != nil {
				return "", err
			}
			alts = append(alts, a)
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
	if json.Unmarshal(s.Type, &one) == nil {
		types = []string{one}
	} else {
		_ = json.Unmarshal(s.Type, &types)
	}
	if len(types) == 0 {
		return g.anyValue(syn), nil
	}
	var alts []string
	for _, t := range types {
		switch t {
		case "string":
			alts = append(alts, syn.str)
		case "integer":
			alts = append(alts, intBody)
		case "number":
			alts = append(alts, numBody)
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
	g.rules = append(g.rules,
		name+" ::= "+syn.str+" | "+numBody+" | "+lit(syn.t)+" | "+lit(syn.f)+" | "+lit(syn.nul)+
			` | "[" (`+name+" ("+lit(syn.sep)+" "+name+`)*)? "]" | `+name+"-object",
		name+`-object ::= "{" (`+name+"-member ("+lit(syn.sep)+" "+name+`-member)*)? "}"`,
		name+"-member ::= "+syn.anyKey+" "+lit(syn.colon)+" "+name)
	return name
}

// literal writes the JSON value v in syn, as a GBNF literal.
func (g *grammar) literal(v json.RawMessage, syn valueSyntax) (string, error) {
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return "", fmt.Errorf("family: parameters: %w", err)
	}
	switch x := x.(type) {
	case string:
		open, close := "", ""
		switch syn.str {
		case gemma4Values.str:
			open, close = `<|"|>`, `<|"|>`
		case functionGemmaValues.str:
			open, close = "<escape>", "<escape>"
		default:
			q := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(x)
			return lit("'" + q + "'"), nil
		}
		return lit(open + x + close), nil
	case bool:
		if x {
			return lit(syn.t), nil
		}
		return lit(syn.f), nil
	case nil:
		return lit(syn.nul), nil
	case float64:
		return lit(string(v)), nil
	}
	return "", fmt.Errorf("family: parameters: enum value %s is not a string, number, boolean or null", v)
}

// jsonRule converts schema to GBNF with the engine's converter and adds
// its rules, renamed so that they do not meet the rules of other calls,
// returning the name of its start rule.
func (g *grammar) jsonRule(schema json.RawMessage, convert func([]byte) (string, error)) (string, error) {
	if len(schema) == 0 {
		schema = json.RawMessage(`{}`)
	}
	text, err := convert(schema)
	if err != nil {
		return "", fmt.Errorf("family: parameters: %w", err)
	}
	g.n++
	prefix := fmt.Sprintf("j%d-", g.n)
	g.rules = append(g.rules, strings.TrimRight(renameRules(text, prefix), "\n"))
	return prefix + "root", nil
}

// renameRules puts prefix before every rule name in a GBNF text, leaving
// literals, character classes, repetition counts and comments alone.
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
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
			j := i
			for j < len(text) && (isIdentByte(text[j]) || text[j] == '-') {
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
