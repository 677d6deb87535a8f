package family

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// This file holds what the families of gpt-oss, Llama, Mistral, Granite
// and Phi-4 share: a streaming splitter driven by a family's markers, the
// decoding of JSON calls, and the pieces of their grammars.

// syntax is how a family marks thinking and calls in its output; a
// splitter follows it.
type syntax struct {
	// thinkOpen and thinkClose mark a thinking section; none when nil.
	thinkOpen, thinkClose []string
	// thinkAnywhere lets a thinking section open inside the answer (a
	// special token such as [THINK]), not only at its start.
	thinkAnywhere bool
	// callOpen starts a call in the answer; "" for a family without
	// marked calls.
	callOpen string
	// callClose ends a call; "" means the call runs to the end of the
	// output (the rest is parsed as one or more calls).
	callClose string
	// lead are markers that, at the start of the answer, say that what
	// follows is a call written as bare JSON (Llama 4's <|python_start|>).
	lead []string
	// parse reads the body of a marked call.
	parse func(body string) ([]Call, bool)
	// bare reads an answer that starts with JSON as calls, of offered
	// tools only; nil when the family never writes bare calls. Such an
	// answer is held to its end when tools are offered.
	bare func(body string, offered map[string]bool) ([]Call, bool)
	// drop are markers removed from the answer text (Granite's
	// <response>).
	drop []string
}

type phase int

const (
	phaseStart     phase = iota // nothing yet; thinking may open
	phaseThink                  // inside thinking
	phaseAnswer                 // white space before the answer
	phaseText                   // answer text
	phaseCall                   // inside a call closed by callClose
	phaseRest                   // the rest of the output is a call
	phaseAfterCall              // white space after a call
)

// splitter is the Parser of the families that write their markers as
// plain text in the output: it splits thinking, text and calls by a
// syntax. Text that may still become a marker is held back.
type splitter struct {
	syn     syntax
	offered map[string]bool
	phase   phase
	pending string
	raw     strings.Builder // the call's text, markers included
	body    strings.Builder // the call's body
	marked  bool            // the call in phaseRest followed a marker
	// thinking says reasoning text has begun in phaseThink.
	thinking bool
}

func newSplitter(syn syntax, cfg ParserConfig) *splitter {
	s := &splitter{syn: syn, offered: map[string]bool{}}
	for _, t := range cfg.Tools {
		s.offered[t.Name] = true
	}
	if cfg.Thinking && len(syn.thinkOpen) > 0 {
		s.phase = phaseThink
	}
	return s
}

// Push implements Parser.
func (s *splitter) Push(text string) Output {
	var out Output
	s.pending += text
	s.run(&out)
	return out
}

// run advances over pending as far as it is unambiguous.
func (s *splitter) run(out *Output) {
	for {
		switch s.phase {
		case phaseStart:
			trimmed := trimSpace(s.pending)
			if trimmed == "" {
				return
			}
			if m := prefixOf(trimmed, s.syn.thinkOpen); m != "" {
				s.phase, s.pending = phaseThink, trimmed[len(m):]
				continue
			}
			if maybePrefix(trimmed, s.syn.thinkOpen) {
				return
			}
			s.phase = phaseAnswer
		case phaseThink:
			if !s.thinking {
				// White space that opens the section is not reasoning.
				if s.pending = trimSpace(s.pending); s.pending == "" {
					return
				}
				s.thinking = true
			}
			at, m := firstMarker(s.pending, s.syn.thinkClose)
			if at < 0 {
				out.Reasoning += s.release(s.syn.thinkClose)
				return
			}
			out.Reasoning += strings.TrimRight(s.pending[:at], " \t\r\n")
			s.phase, s.pending, s.thinking = phaseAnswer, s.pending[at+len(m):], false
		case phaseAnswer, phaseAfterCall:
			trimmed := trimSpace(s.pending)
			if trimmed == "" {
				s.pending = ""
				return
			}
			s.pending = trimmed
			if s.phase == phaseAnswer {
				if m := prefixOf(trimmed, s.syn.lead); m != "" {
					s.raw.WriteString(m)
					s.phase, s.pending, s.marked = phaseRest, "", true
					s.body.WriteString(trimmed[len(m):])
					continue
				}
				if maybePrefix(trimmed, s.syn.lead) {
					return
				}
				if s.syn.bare != nil && len(s.offered) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
					s.raw.WriteString(trimmed)
					s.body.WriteString(trimmed)
					s.phase, s.pending, s.marked = phaseRest, "", false
					continue
				}
			}
			s.phase = phaseText
		case phaseText:
			markers := s.textMarkers()
			at, m := firstMarker(s.pending, markers)
			if at < 0 {
				out.Text += s.release(markers)
				return
			}
			before := strings.TrimRight(s.pending[:at], " \t\r\n")
			space := s.pending[len(before):at]
			out.Text += before
			s.pending = s.pending[at+len(m):]
			switch {
			case m == s.syn.callOpen:
				// The white space before a call is its text, shown only
				// if the call is not one.
				s.raw.WriteString(space + m)
				if s.syn.callClose != "" {
					s.phase = phaseCall
				} else {
					s.phase, s.marked = phaseRest, true
				}
			case contains(s.syn.thinkOpen, m):
				s.phase = phaseThink
			}
			// A dropped marker is skipped.
		case phaseCall:
			at := strings.Index(s.pending, s.syn.callClose)
			if at < 0 {
				return
			}
			body := s.pending[:at]
			s.pending = s.pending[at+len(s.syn.callClose):]
			if calls, ok := s.syn.parse(body); ok {
				out.Calls = append(out.Calls, calls...)
				s.phase = phaseAfterCall
			} else {
				out.Text += s.raw.String() + body + s.syn.callClose
				s.phase = phaseText
			}
			s.raw.Reset()
		case phaseRest:
			s.raw.WriteString(s.pending)
			s.body.WriteString(s.pending)
			s.pending = ""
			return
		}
	}
}

// release takes from pending what cannot be the start of one of markers,
// nor white space that a marker may follow (and that it then drops).
func (s *splitter) release(markers []string) string {
	keep := holdLen(s.pending, markers)
	free := s.pending[:len(s.pending)-keep]
	out := strings.TrimRight(free, " \t\r\n")
	s.pending = s.pending[len(out):]
	return out
}

// textMarkers are the markers looked for in the answer text.
func (s *splitter) textMarkers() []string {
	var ms []string
	if s.syn.callOpen != "" {
		ms = append(ms, s.syn.callOpen)
	}
	if s.syn.thinkAnywhere {
		ms = append(ms, s.syn.thinkOpen...)
	}
	return append(ms, s.syn.drop...)
}

// Flush implements Parser.
func (s *splitter) Flush(truncated bool) Output {
	var out Output
	pending := s.pending
	s.pending = ""
	switch s.phase {
	case phaseStart, phaseText:
		out.Text = pending
	case phaseThink:
		out.Reasoning = pending
	case phaseCall:
		raw := s.raw.String()
		s.raw.Reset()
		if calls, ok := s.syn.parse(pending); ok {
			out.Calls = calls // the end of output closed it
		} else if !truncated {
			out.Text = raw + pending
		}
	case phaseRest:
		raw, body := s.raw.String(), s.body.String()
		s.raw.Reset()
		s.body.Reset()
		var calls []Call
		var ok bool
		if s.marked {
			calls, ok = s.syn.parse(body)
		} else {
			calls, ok = s.syn.bare(body, s.offered)
		}
		switch {
		case ok:
			out.Calls = calls
		case truncated && s.marked:
		default:
			out.Text = raw
		}
	}
	s.phase = phaseText
	return out
}

// trimSpace drops leading white space.
func trimSpace(s string) string { return strings.TrimLeft(s, " \t\r\n") }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// prefixOf returns the marker that s starts with, or "".
func prefixOf(s string, markers []string) string {
	for _, m := range markers {
		if strings.HasPrefix(s, m) {
			return m
		}
	}
	return ""
}

// maybePrefix reports whether s may still grow into one of markers.
func maybePrefix(s string, markers []string) bool {
	for _, m := range markers {
		if len(s) < len(m) && strings.HasPrefix(m, s) {
			return true
		}
	}
	return false
}

// firstMarker returns where the earliest of markers occurs in s, and
// which; -1 if none does.
func firstMarker(s string, markers []string) (int, string) {
	at, which := -1, ""
	for _, m := range markers {
		if i := strings.Index(s, m); i >= 0 && (at < 0 || i < at) {
			at, which = i, m
		}
	}
	return at, which
}

// holdLen is the length of the longest end of s that may be the start of
// one of markers.
func holdLen(s string, markers []string) int {
	keep := 0
	for _, m := range markers {
		for k := min(len(m)-1, len(s)); k > keep; k-- {
			if strings.HasSuffix(s, m[:k]) {
				keep = k
				break
			}
		}
	}
	return keep
}

// jsonCall is a call as the JSON-writing families write it.
type jsonCall struct {
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
	// Function holds the call in OpenAI's shape,
	// {"type": "function", "function": {...}}.
	Function *jsonCall `json:"function"`
}

// call converts a decoded call, with its arguments compacted; false if it
// names no function or its arguments are not a JSON object.
func (c jsonCall) call() (Call, bool) {
	if c.Function != nil && c.Name == "" {
		return c.Function.call()
	}
	args := c.Arguments
	if args == nil {
		args = c.Parameters
	}
	if c.Name == "" {
		return Call{}, false
	}
	a, ok := compactArgs(args)
	return Call{Name: c.Name, Arguments: a}, ok
}

// compactArgs returns arguments as a compact JSON object; arguments
// written as a JSON string holding the object are unwrapped, and none are
// {}.
func compactArgs(args json.RawMessage) (string, bool) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		return "{}", true
	}
	var text string
	if json.Unmarshal(args, &text) == nil {
		args = json.RawMessage(text)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		return "", false
	}
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		return "", false
	}
	return b.String(), true
}

// decodeJSONCalls reads body as one or more JSON calls: objects or arrays
// of objects, one after another, apart by white space, ";" or ",". Every
// call must name a function (of offered, when offered is not nil), and
// nothing else may follow.
func decodeJSONCalls(body string, offered map[string]bool) ([]Call, bool) {
	dec := json.NewDecoder(strings.NewReader(body))
	var calls []Call
	for {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		var objs []jsonCall
		if v[0] == '[' {
			if json.Unmarshal(v, &objs) != nil {
				return nil, false
			}
		} else {
			var o jsonCall
			if json.Unmarshal(v, &o) != nil {
				return nil, false
			}
			objs = []jsonCall{o}
		}
		for _, o := range objs {
			c, ok := o.call()
			if !ok || offered != nil && !offered[c.Name] {
				return nil, false
			}
			calls = append(calls, c)
		}
		// Skip the separators Llama writes between calls.
		rest := body[dec.InputOffset():]
		sep := strings.TrimLeft(rest, " \t\r\n;,")
		if sep == "" {
			return calls, len(calls) > 0
		}
		dec = json.NewDecoder(strings.NewReader(sep))
		body = sep
	}
	return nil, false
}

// Grammar helpers.

// argsSchema is a tool's parameters, or an object of any fields.
func argsSchema(t Tool) json.RawMessage {
	if len(t.Parameters) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	return t.Parameters
}

// pickTools returns the tools a grammar admits calls of: the one named,
// or all.
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

// jsonCallGrammar returns GBNF whose rule rule admits one JSON call
// object {"name": ..., argsKey: {...}} of tools.
func jsonCallGrammar(tools []Tool, rule, argsKey string, schema func([]byte) (string, error)) (string, error) {
	var alts []json.RawMessage
	for _, t := range tools {
		name, _ := json.Marshal(t.Name)
		alts = append(alts, json.RawMessage(fmt.Sprintf(
			`{"type":"object","properties":{"name":{"const":%s},%q:%s},"required":["name",%q],"additionalProperties":false}`,
			name, argsKey, argsSchema(t), argsKey)))
	}
	doc, _ := json.Marshal(map[string]any{"oneOf": alts})
	g, err := schema(doc)
	if err != nil {
		return "", fmt.Errorf("family: tool parameters: %w", err)
	}
	return prefixRules(g, rule+"-", rule), nil
}

// argsGrammars returns GBNF with a rule per tool, named in rules, that
// admits the tool's arguments object.
func argsGrammars(tools []Tool, schema func([]byte) (string, error)) (rules []string, g string, err error) {
	var b strings.Builder
	for i, t := range tools {
		one, err := schema(argsSchema(t))
		if err != nil {
			return nil, "", fmt.Errorf("family: parameters of %s: %w", t.Name, err)
		}
		rule := fmt.Sprintf("args%d", i)
		rules = append(rules, rule)
		b.WriteString(prefixRules(one, rule+"-", rule))
		b.WriteString("\n")
	}
	return rules, b.String(), nil
}

// prefixRules renames every rule of grammar g by prefix, and its root to
// root, so that grammars from several conversions can share one file.
// Names are read outside string literals, character classes, repetition
// counts and comments, as GBNF writes them.
func prefixRules(g, prefix, root string) string {
	var b strings.Builder
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
			b.WriteString(g[i:j])
			i = j
		case c == '{':
			j := strings.IndexByte(g[i:], '}')
			if j < 0 {
				j = len(g) - i - 1
			}
			b.WriteString(g[i : i+j+1])
			i += j + 1
		case c == '#':
			j := strings.IndexByte(g[i:], '\n')
			if j < 0 {
				j = len(g) - i
			}
			b.WriteString(g[i : i+j])
			i += j
		case isNameByte(c):
			j := i
			for j < len(g) && isNameByte(g[j]) {
				j++
			}
			if name := g[i:j]; name == "root" {
				b.WriteString(root)
			} else {
				b.WriteString(prefix + name)
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// lit quotes s as a GBNF string literal.
func lit(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}
