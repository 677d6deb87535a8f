package inference

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/internal/family"
	"github.com/inferkit/inferkit/internal/runner"
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
	add := func(p runner.Piece) {
		r.WriteString(p.Reasoning)
		x.WriteString(p.Text)
		for _, call := range p.Calls {
			c.WriteString(call.Name + "(" + call.Arguments + ")")
		}
	}
	for _, p := range pieces {
		got := o.Push([]byte(p))
		add(got)
		if o.Thinking() {
			th.WriteByte('T')
		} else {
			th.WriteByte('.')
		}
		if got.Stopped {
			return r.String(), x.String(), c.String(), got.Stop, th.String()
		}
	}
	add(o.Flush(false))
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

// A family's stop ends the whole output as the end of its turn: what came
// before it is released (calls in the same piece included), the marker
// and what follows are dropped, and it is no request's stop sequence.
func TestFamilyStops(t *testing.T) {
	lookup := func(name string) *family.Family {
		b, err := os.ReadFile(filepath.Join("..", "internal", "family", "testdata", "templates", name))
		if err != nil {
			t.Fatal(err)
		}
		return family.Lookup("llama", string(b))
	}
	glm, gemma := lookup("glm-4.7-flash.jinja"), lookup("gemma4-31b.jinja")
	if glm == nil || glm.Name != "glm-4.7" || gemma == nil || gemma.Name != "gemma4" {
		t.Fatalf("families %v and %v", glm, gemma)
	}
	tests := []struct {
		name                   string
		family                 *family.Family
		stops                  []string
		opened                 bool
		pieces                 []string
		reasoning, text, calls string
		ended                  bool
	}{
		{"glm answer then a user turn", glm, nil, true, []string{"plan", "</think>", "Answer.", "<|us", "er|>", "\nmore"}, "plan", "Answer.", "", true},
		{"glm call then an observation, in one piece", glm, nil, true,
			[]string{"</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Oslo</arg_value></tool_call><|observation|>\n<tool_response>sunny"},
			"", "", `get_weather({"city":"Oslo"})`, true},
		{"glm with a request's stop too", glm, []string{"STOP"}, true, []string{"</think>a", "<|user|>", "STOP"}, "", "a", "", true},
		{"glm marker prefix released at the end", glm, nil, true, []string{"</think>a <|us"}, "", "a <|us", "", false},
		{"gemma4 call then a response", gemma, nil, false,
			[]string{`<|tool_call>call:get_weather{city:<|"|>Oslo<|"|>}<tool_call|>`, "<|tool_", "response>response:get_weather{value:1}"},
			"", "", `get_weather({"city":"Oslo"})`, true},
		{"without the family, the marker is text", nil, nil, false, []string{"a<|user|>b"}, "", "a<|user|>b", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOutput(tt.family, tt.stops, weatherTools, tt.opened)
			var r, x, c strings.Builder
			add := func(p runner.Piece) {
				r.WriteString(p.Reasoning)
				x.WriteString(p.Text)
				for _, call := range p.Calls {
					c.WriteString(call.Name + "(" + call.Arguments + ")")
				}
			}
			ended := false
			for _, s := range tt.pieces {
				p := o.Push([]byte(s))
				add(p)
				if p.Stopped {
					t.Fatalf("a stop sequence %q", p.Stop)
				}
				if p.Ended {
					ended = true
					break // the runner finishes the turn
				}
			}
			add(o.Flush(false))
			if r.String() != tt.reasoning || x.String() != tt.text || c.String() != tt.calls || ended != tt.ended {
				t.Errorf("got (%q, %q, %q, ended %v), want (%q, %q, %q, ended %v)", r.String(), x.String(), c.String(), ended, tt.reasoning, tt.text, tt.calls, tt.ended)
			}
		})
	}
}
