package inference

import (
	"strings"

	"github.com/inferkit/inferkit/internal/family"
	"github.com/inferkit/inferkit/internal/runner"
)

// newOutput returns the runner's output splitter of f's format for a
// request with the given stop strings and tools; thinking says the prompt
// itself opened the thinking section.
func newOutput(f *family.Family, stops []string, tools []Tool, thinking bool) *runner.Output {
	return runner.NewOutput(f, stops, familyTools(tools), thinking)
}

// thinkMarks are the markers that open and close a family's thinking
// section, as the engine finds them in a prompt and an output; "" where
// the family does not say.
type thinkMarks struct{ open, close string }

// thinkMarksOf returns a family's thinking markers: its Open, and the
// text of its Close without the white space around it.
func thinkMarksOf(f *family.Family) thinkMarks {
	if f == nil || f.Thinking == nil {
		return thinkMarks{}
	}
	return thinkMarks{open: f.Thinking.Open, close: strings.TrimSpace(f.Thinking.Close)}
}

// opensThinking reports whether a rendered prompt ends inside a thinking
// section, as templates that start the model's turn with <think> do.
func (m thinkMarks) opensThinking(prompt string) bool {
	if m.open == "" || m.close == "" {
		return false
	}
	open := strings.LastIndex(prompt, m.open)
	return open >= 0 && open > strings.LastIndex(prompt, m.close)
}
