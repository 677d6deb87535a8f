package inference

import (
	"strings"
	"testing"
)

var weatherTools = []Tool{{Name: "get_weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}

// scan feeds pieces through a toolScanner and returns the text and the
// calls as "name(args)".
func scan(f toolFamily, pieces ...string) (string, []string) {
	s := newToolScanner(f, weatherTools)
	var text strings.Builder
	var calls []string
	add := func(t string, cs []ToolCall) {
		text.WriteString(t)
		for _, c := range cs {
			calls = append(calls, c.Name+"("+c.Arguments+")")
		}
	}
	for _, p := range pieces {
		add(s.push(p))
	}
	add(s.flush(false))
	return text.String(), calls
}

// Outputs in each family's format, as the models write them.
func TestToolScanner(t *testing.T) {
	tests := []struct {
		name   string
		family toolFamily
		pieces []string
		text   string
		calls  []string
	}{
		{"plain text", hermesTools, []string{"It is ", "sunny."}, "It is sunny.", nil},
		{"hermes call", hermesTools, []string{"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"}, "", []string{`get_weather({"city":"Paris"})`}},
		{"hermes split markers", hermesTools, []string{"Let me check. <tool", "_call>\n{\"name\": \"get_weather\",", " \"arguments\": {\"city\": \"Oslo\"}}\n</tool_", "call>"}, "Let me check. ", []string{`get_weather({"city":"Oslo"})`}},
		{"hermes two calls", hermesTools, []string{"<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"A\"}}</tool_call>\n<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"B\"}}</tool_call>"}, "\n", []string{`get_weather({"city":"A"})`, `get_weather({"city":"B"})`}},
		{"hermes broken call stays text", hermesTools, []string{"<tool_call>{not json}</tool_call> ok"}, "<tool_call>{not json}</tool_call> ok", nil},
		{"hermes unclosed call", hermesTools, []string{"<tool_call>{\"name\":\"get_weather\",\"arguments\":{}}"}, "", []string{`get_weather({})`}},
		{"arguments as a string", hermesTools, []string{`<tool_call>{"name":"get_weather","arguments":"{\"city\": \"Rome\"}"}</tool_call>`}, "", []string{`get_weather({"city":"Rome"})`}},
		{"llama python tag", llamaTools, []string{"<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Lima\"}}"}, "", []string{`get_weather({"city":"Lima"})`}},
		{"llama bare json", llamaTools, []string{"{\"name\": \"get_weather\", ", "\"parameters\": {\"city\": \"Kyiv\"}}"}, "", []string{`get_weather({"city":"Kyiv"})`}},
		{"json answer that is not a call", llamaTools, []string{`{"answer": 42}`}, `{"answer": 42}`, nil},
		{"json naming an unknown tool", hermesTools, []string{`{"name": "rm_rf", "arguments": {}}`}, `{"name": "rm_rf", "arguments": {}}`, nil},
		{"mistral calls", mistralTools, []string{"[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Bern\"}}, ", "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Graz\"}}]"}, "", []string{`get_weather({"city":"Bern"})`, `get_weather({"city":"Graz"})`}},
		{"marker-like text", hermesTools, []string{"a <tool", "box> b"}, "a <toolbox> b", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, calls := scan(tt.family, tt.pieces...)
			if text != tt.text || strings.Join(calls, ";") != strings.Join(tt.calls, ";") {
				t.Errorf("got (%q, %q), want (%q, %q)", text, calls, tt.text, tt.calls)
			}
		})
	}
}

func TestToolFamilyOf(t *testing.T) {
	for tmpl, want := range map[string]toolFamily{
		`{{- "<tool_call>\n" }}`:                          hermesTools,
		`{{ "[TOOL_CALLS]" }}`:                            mistralTools,
		`<|python_tag|>{{ tool_call }}`:                   llamaTools,
		`Environment: ipython {"name": , "parameters": }`: llamaTools,
		``: hermesTools,
	} {
		if got := toolFamilyOf(tmpl); got != want {
			t.Errorf("toolFamilyOf(%q) = %v, want %v", tmpl, got, want)
		}
	}
}

// A call cut short by the token limit is dropped, not leaked as text; a
// bare JSON answer cut short stays text.
func TestToolScannerTruncated(t *testing.T) {
	s := newToolScanner(hermesTools, weatherTools)
	text, _ := s.push("Checking. <tool_call>{\"name\": \"get_wea")
	rest, calls := s.flush(true)
	if text+rest != "Checking. " || calls != nil {
		t.Errorf("got %q %v", text+rest, calls)
	}
	s = newToolScanner(llamaTools, weatherTools)
	s.push(`{"answer": 4`)
	if rest, _ := s.flush(true); rest != `{"answer": 4` {
		t.Errorf("bare JSON answer: %q", rest)
	}
}
