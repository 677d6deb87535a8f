package inference

import (
	"strings"
	"testing"
)

// split feeds pieces through an output and returns the reasoning, the
// answer, and the stop string that ended it.
func split(stops []string, opened bool, pieces ...string) (reasoning, text, stop string) {
	o := newOutput(stops, opened)
	var r, t strings.Builder
	for _, p := range pieces {
		got := o.push([]byte(p))
		r.WriteString(got.reasoning)
		t.WriteString(got.text)
		if got.stopped {
			return r.String(), t.String(), got.stop
		}
	}
	got := o.flush()
	r.WriteString(got.reasoning)
	t.WriteString(got.text)
	return r.String(), t.String(), ""
}

func TestOutputReasoning(t *testing.T) {
	tests := []struct {
		name            string
		stops           []string
		opened          bool
		pieces          []string
		reasoning, text string
		stop            string
	}{
		{"no thinking", nil, false, []string{"Hello", " world"}, "", "Hello world", ""},
		{"thinking then answer", nil, false, []string{"<think>", "\nplan\n", "</think>", "\n\n", "Answer."}, "\nplan\n", "Answer.", ""},
		{"markers split across pieces", nil, false, []string{"<th", "ink>a", "b</th", "ink>\n", "\nc"}, "ab", "c", ""},
		{"leading white space", nil, false, []string{"\n", " <think>x</think>y"}, "x", "y", ""},
		{"prompt opened thinking", nil, true, []string{"x", "</think>", "y"}, "x", "y", ""},
		{"unfinished thinking", nil, false, []string{"<think>still going"}, "still going", "", ""},
		{"text that starts like the marker", nil, false, []string{"<thin", "g>"}, "", "<thing>", ""},
		{"short answer that is a marker prefix", nil, false, []string{"<"}, "", "<", ""},
		{"stop applies to the answer only", []string{"STOP"}, false, []string{"<think>a STOP b</think>", "c STOP d"}, "a STOP b", "c ", "STOP"},
		{"no marker mid-answer", nil, false, []string{"a <think>b</think>"}, "", "a <think>b</think>", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, text, stop := split(tt.stops, tt.opened, tt.pieces...)
			if r != tt.reasoning || text != tt.text || stop != tt.stop {
				t.Errorf("got (%q, %q, %q), want (%q, %q, %q)", r, text, stop, tt.reasoning, tt.text, tt.stop)
			}
		})
	}
}

func TestOpensThinking(t *testing.T) {
	for prompt, want := range map[string]bool{
		"<|im_start|>assistant\n":                          false,
		"<|im_start|>assistant\n<think>\n":                 true,
		"<|im_start|>assistant\n<think>\n\n</think>\n\n":   false,
		"<think>a</think> user turn <|im_start|>assistant": false,
	} {
		if got := opensThinking(prompt); got != want {
			t.Errorf("opensThinking(%q) = %v", prompt, got)
		}
	}
}
