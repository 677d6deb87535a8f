package inference

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
)

// ToolChoice says whether and which tools the model must call. The zero
// value is ToolAuto.
type ToolChoice struct {
	Mode ToolMode
	// Name is the tool to call, for ToolFunction.
	Name string
	// Single allows at most one call: the turn ends once it is written
	// (the wire's parallel_tool_calls false).
	Single bool
}

// ToolMode is how a request lets the model use its tools.
type ToolMode string

// The tool modes.
const (
	// ToolAuto: the model answers, calls tools, or both.
	ToolAuto ToolMode = ""
	// ToolNone: the model answers; its tools are not shown to it.
	ToolNone ToolMode = "none"
	// ToolRequired: the model calls one or more tools.
	ToolRequired ToolMode = "required"
	// ToolFunction: the model calls the tool named by ToolChoice.Name.
	ToolFunction ToolMode = "function"
)

// shownTools are the tools the model sees: none with ToolNone.
func (r Request) shownTools() []Tool {
	if r.ToolChoice.Mode == ToolNone {
		return nil
	}
	return r.Tools
}

// toolFamily is how a model writes its tool calls.
type toolFamily int

const (
	// hermesTools: <tool_call>{"name": ..., "arguments": {...}}</tool_call>,
	// as Qwen, Hermes and our ChatML write them.
	hermesTools toolFamily = iota
	// llamaTools: a JSON object {"name": ..., "parameters": {...}},
	// after <|python_tag|> or alone, as Llama 3.x writes them.
	llamaTools
	// mistralTools: [TOOL_CALLS] and a JSON array of {"name", "arguments"}.
	mistralTools
)

// toolFamilyOf tells a model's tool-call family from its chat template.
func toolFamilyOf(template string) toolFamily {
	switch {
	case strings.Contains(template, "[TOOL_CALLS]"):
		return mistralTools
	case strings.Contains(template, "<tool_call>"):
		return hermesTools
	case strings.Contains(template, "<|python_tag|>"), strings.Contains(template, `"parameters"`) && strings.Contains(template, "ipython"):
		return llamaTools
	}
	return hermesTools
}

// argsKey is the key of a call's arguments in the family's JSON.
func (f toolFamily) argsKey() string {
	if f == llamaTools {
		return "parameters"
	}
	return "arguments"
}

// toolGrammar returns a GBNF grammar that admits only calls of tools, in
// the family's format: one call of the named tool, or one or more calls of
// any of them. schemaGrammar converts a JSON Schema to GBNF.
func toolGrammar(f toolFamily, tools []Tool, choice ToolChoice, schemaGrammar func([]byte) (string, error)) (string, error) {
	var alts []json.RawMessage
	for _, t := range tools {
		if choice.Mode == ToolFunction && t.Name != choice.Name {
			continue
		}
		params := json.RawMessage(t.Parameters)
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object"}`)
		}
		name, _ := json.Marshal(t.Name)
		alts = append(alts, json.RawMessage(fmt.Sprintf(
			`{"type":"object","properties":{"name":{"const":%s},%q:%s},"required":["name",%q],"additionalProperties":false}`,
			name, f.argsKey(), params, f.argsKey())))
	}
	if len(alts) == 0 {
		return "", fieldError("ToolChoice", "names %q, which is not among the tools", choice.Name)
	}
	schema, _ := json.Marshal(map[string]any{"oneOf": alts})
	g, err := schemaGrammar(schema)
	if err != nil {
		return "", fieldError("Tools", "parameters: %v", err)
	}
	// The converter names its start rule root; the call becomes one rule
	// of a grammar that wraps it in the family's markers.
	const rule = "inferkitcall"
	g = strings.Replace(g, "root ::=", rule+" ::=", 1)
	var root string
	switch {
	case f == mistralTools && (choice.Mode == ToolFunction || choice.Single):
		root = `root ::= "[TOOL_CALLS][" ` + rule + ` "]"`
	case f == mistralTools:
		root = `root ::= "[TOOL_CALLS][" ` + rule + ` ("," ` + rule + `)* "]"`
	case f == llamaTools || choice.Mode == ToolFunction || choice.Single:
		root = "root ::= " + rule
		if f == hermesTools {
			root = `root ::= "<tool_call>\n" ` + rule + ` "\n</tool_call>"`
		}
	default:
		root = `root ::= "<tool_call>\n" ` + rule + ` "\n</tool_call>" ("\n<tool_call>\n" ` + rule + ` "\n</tool_call>")*`
	}
	return root + "\n" + g, nil
}

// The markers that start a call, by family.
var toolOpen = map[toolFamily]string{hermesTools: "<tool_call>", llamaTools: "<|python_tag|>", mistralTools: "[TOOL_CALLS]"}

const hermesClose = "</tool_call>"

// toolScanner takes the answer text of a model offered tools and separates
// its tool calls from its text, as the text streams. Text that may still
// become a call is held back; a call is released whole once it is closed
// (or at the end, for families that do not close them).
type toolScanner struct {
	family  toolFamily
	offered map[string]bool
	open    string

	mode    scanMode
	started bool // non-space text seen
	pending string
	call    strings.Builder
	raw     strings.Builder // the text of the current call, markers included
}

type scanMode int

const (
	scanText scanMode = iota
	scanCall          // inside <tool_call>...</tool_call>
	scanRest          // the rest of the answer is a call
)

func newToolScanner(f toolFamily, tools []Tool) *toolScanner {
	offered := map[string]bool{}
	for _, t := range tools {
		offered[t.Name] = true
	}
	return &toolScanner{family: f, offered: offered, open: toolOpen[f]}
}

// push adds answer text and returns the text and calls it releases.
func (s *toolScanner) push(text string) (string, []ToolCall) {
	switch s.mode {
	case scanCall:
		s.call.WriteString(text)
		s.raw.WriteString(text)
		body := s.call.String()
		end := strings.Index(body, hermesClose)
		if end < 0 {
			return "", nil
		}
		s.mode = scanText
		s.call.Reset()
		raw := s.raw.String()
		s.raw.Reset()
		var calls []ToolCall
		var out string
		if c, ok := s.parse(body[:end], true); ok {
			calls = c
		} else {
			out = raw[:len(raw)-len(body)+end+len(hermesClose)]
		}
		more, moreCalls := s.push(body[end+len(hermesClose):])
		return out + more, append(calls, moreCalls...)
	case scanRest:
		s.call.WriteString(text)
		s.raw.WriteString(text)
		return "", nil
	}
	s.pending += text
	if !s.started {
		trimmed := strings.TrimLeft(s.pending, " \t\r\n")
		if trimmed == "" {
			return "", nil
		}
		if strings.HasPrefix(s.open, trimmed) {
			return "", nil // may still become the marker
		}
		s.started = true
		if !strings.HasPrefix(trimmed, s.open) && (trimmed[0] == '{' || trimmed[0] == '[') {
			// A bare JSON answer may be a call (Llama 3, or any model
			// that writes calls as JSON): decide at the end.
			s.mode = scanRest
			s.raw.WriteString(s.pending)
			s.call.WriteString(trimmed)
			s.pending = ""
			return "", nil
		}
	}
	if at := strings.Index(s.pending, s.open); at >= 0 {
		before, after := s.pending[:at], s.pending[at+len(s.open):]
		s.pending = ""
		s.raw.WriteString(s.open)
		if s.family == hermesTools {
			s.mode = scanCall
		} else {
			s.mode = scanRest
		}
		rest, calls := s.push(after)
		return before + rest, calls
	}
	// Hold back what may be the start of the marker.
	keep := 0
	for k := min(len(s.open)-1, len(s.pending)); k > 0; k-- {
		if strings.HasSuffix(s.pending, s.open[:k]) {
			keep = k
			break
		}
	}
	out := s.pending[:len(s.pending)-keep]
	s.pending = s.pending[len(s.pending)-keep:]
	return out, nil
}

// flush releases what is held once the answer has ended: a call that
// parses, or else its text as it was written. A call cut short by the
// token limit after its marker is not text, and is dropped.
func (s *toolScanner) flush(truncated bool) (string, []ToolCall) {
	out := s.pending
	s.pending = ""
	if s.mode == scanText {
		return out, nil
	}
	body, raw := s.call.String(), s.raw.String()
	s.call.Reset()
	s.raw.Reset()
	marked := s.mode == scanCall || strings.HasPrefix(raw, s.open)
	s.mode = scanText
	if calls, ok := s.parse(body, marked); ok {
		return out, calls
	}
	if truncated && marked {
		return out, nil
	}
	return out + raw, nil
}

// parse reads one call object, or an array of them. Without a marker, a
// JSON answer is a call only when it names offered tools.
func (s *toolScanner) parse(body string, marked bool) ([]ToolCall, bool) {
	body = strings.TrimSpace(body)
	var objs []json.RawMessage
	if strings.HasPrefix(body, "[") {
		if json.Unmarshal([]byte(body), &objs) != nil || len(objs) == 0 {
			return nil, false
		}
	} else {
		objs = []json.RawMessage{json.RawMessage(body)}
	}
	calls := make([]ToolCall, 0, len(objs))
	for _, o := range objs {
		var c struct {
			Name       string          `json:"name"`
			Arguments  json.RawMessage `json:"arguments"`
			Parameters json.RawMessage `json:"parameters"`
		}
		if json.Unmarshal(o, &c) != nil || c.Name == "" || !marked && !s.offered[c.Name] {
			return nil, false
		}
		args := c.Arguments
		if args == nil {
			args = c.Parameters
		}
		var text string
		if json.Unmarshal(args, &text) == nil {
			args = json.RawMessage(text) // arguments written as a JSON string
		}
		var compact bytes.Buffer
		if len(args) == 0 {
			compact.WriteString("{}")
		} else if json.Compact(&compact, args) != nil {
			return nil, false
		}
		calls = append(calls, ToolCall{ID: "call_" + rand.Text()[:24], Name: c.Name, Arguments: compact.String()})
	}
	return calls, true
}
