package inference

import (
	"strings"
	"testing"

	"github.com/inferkit/inferkit/internal/family"
)

// The families the engine finds for inferkit's ChatML (hermes: calls, no
// thinking) and for a Qwen3 template (qwen3: calls and thinking).
var (
	hermesFamily = family.Lookup("llama", "")
	qwen3Family  = family.Lookup("qwen3", "<|im_start|>{{ tools }}<tool_call>{\"name\": ..., \"arguments\": ...}</tool_call><think>")
)

func TestTestFamilies(t *testing.T) {
	if hermesFamily == nil || hermesFamily.Name != "hermes" || qwen3Family == nil || qwen3Family.Name != "qwen3" {
		t.Fatalf("families %+v and %+v, want hermes and qwen3", hermesFamily, qwen3Family)
	}
}

// split feeds pieces through an output of family f (nil: plain text) and
// returns the reasoning, the answer, the calls as name(args), the stop
// string that ended it, and whether the output was thinking after each
// piece.
func split(f *family.Family, stops []string, opened bool, pieces ...string) (reasoning, text, calls, stop, thinking string) {
	o := newOutput(f, stops, weatherTools, opened)
	var r, x, c, th strings.Builder
	add := func(p piece) {
		r.WriteString(p.reasoning)
		x.WriteString(p.text)
		for _, call := range p.calls {
			c.WriteString(call.Name + "(" + call.Arguments + ")")
		}
	}
	for _, p := range pieces {
		got := o.push([]byte(p))
		add(got)
		if o.thinking() {
			th.WriteByte('T')
		} else {
			th.WriteByte('.')
		}
		if got.stopped {
			return r.String(), x.String(), c.String(), got.stop, th.String()
		}
	}
	add(o.flush(false))
	return r.String(), x.String(), c.String(), "", th.String()
}

var weatherTools = []Tool{{Name: "get_weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}

func TestOutput(t *testing.T) {
	call := "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>"
	tests := []struct {
		name                               string
		family                             *family.Family
		stops                              []string
		opened                             bool
		pieces                             []string
		reasoning, text, calls, stop, mode string
	}{
		{"plain text", nil, nil, false, []string{"Hello", " world"}, "", "Hello world", "", "", ".."},
		{"plain text keeps markers", nil, nil, false, []string{"<think>a</think>", "b"}, "", "<think>a</think>b", "", "", ".."},
		{"plain text stops", nil, []string{"STOP"}, false, []string{"a ST", "OP b"}, "", "a ", "", "STOP", ".."},
		{"thinking then answer", qwen3Family, nil, false, []string{"<think>", "\nplan\n", "</think>", "\n\n", "Answer."}, "plan", "Answer.", "", "", "TT..."},
		{"markers split across pieces", qwen3Family, nil, false, []string{"<th", "ink>a", "b</th", "ink>\n", "\nc"}, "ab", "c", "", "", ".TT.."},
		{"prompt opened thinking", qwen3Family, nil, true, []string{"x", "</think>", "y"}, "x", "y", "", "", "T.."},
		{"unfinished thinking", qwen3Family, nil, false, []string{"<think>still going"}, "still going", "", "", "", "T"},
		{"stop applies to the answer only", qwen3Family, []string{"STOP"}, false, []string{"<think>a STOP b</think>", "c STOP d"}, "a STOP b", "c ", "", "STOP", ".."},
		{"the engine's close text", qwen3Family, nil, true, []string{"x", "\n", "</think>", "\n\n", "y"}, "x", "y", "", "", "TT..."},
		{"a call", hermesFamily, nil, false, []string{"Let me check. <tool", "_call>\n{\"name\": \"get_weather\",", " \"arguments\": {\"city\": \"Oslo\"}}\n</tool_", "call>"}, "", "Let me check.", `get_weather({"city":"Oslo"})`, "", "...."},
		{"a call after thinking", qwen3Family, nil, false, []string{"<think>hm</think>", call}, "hm", "", `get_weather({"city":"Oslo"})`, "", ".."},
		{"a stop before a call drops it", hermesFamily, []string{"check"}, false, []string{"Let me check. " + call}, "", "Let me ", "", "check", "."},
		{"whole characters only", nil, nil, false, []string{"caf\xc3", "\xa9"}, "", "café", "", "", ".."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, text, calls, stop, mode := split(tt.family, tt.stops, tt.opened, tt.pieces...)
			if r != tt.reasoning || text != tt.text || calls != tt.calls || stop != tt.stop || mode != tt.mode {
				t.Errorf("got (%q, %q, %q, %q, %s), want (%q, %q, %q, %q, %s)", r, text, calls, stop, mode, tt.reasoning, tt.text, tt.calls, tt.stop, tt.mode)
			}
		})
	}
}

// TestOpensThinking: a prompt that ends inside a family's thinking
// section (its Open, after any Close) opens it, for markers of every
// shape the families use.
func TestOpensThinking(t *testing.T) {
	for _, tc := range []struct {
		open, close, prompt string
		want                bool
	}{
		{"<think>", "\n</think>\n\n", "<|im_start|>assistant\n<think>\n", true},
		{"<think>", "\n</think>\n\n", "<|im_start|>assistant\n<think>\n\n</think>\n\n", false},
		{"<think>", "\n</think>\n\n", "<|im_start|>assistant\n", false},
		{"[THINK]", "[/THINK]", "[INST]hi[/INST][THINK]", true},
		{"<|channel|>analysis<|message|>", "<|end|><|start|>assistant", "<|start|>assistant<|channel|>analysis<|message|>", true},
		{"<|channel>", "<channel|>", "<|turn>model\n<|channel>thought\n<channel|>", false},
	} {
		m := thinkMarksOf(&family.Family{Thinking: &family.Thinking{Open: tc.open, Close: tc.close}})
		if got := m.opensThinking(tc.prompt); got != tc.want {
			t.Errorf("opensThinking(%q) with %q…%q = %v, want %v", tc.prompt, tc.open, tc.close, got, tc.want)
		}
	}
	if got := thinkMarksOf(hermesFamily); got != (thinkMarks{}) {
		t.Errorf("a family that does not think: %+v", got)
	}
	if (thinkMarks{}).opensThinking("<think>\n") {
		t.Error("a family without markers opened thinking")
	}
}
