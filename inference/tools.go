package inference

import (
	"crypto/rand"

	"github.com/inferkit/inferkit/internal/family"
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

// toolCalls gives the calls a family's parser read the ids the engine
// assigns them.
func toolCalls(calls []family.Call) []ToolCall {
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		out[i] = ToolCall{ID: "call_" + rand.Text()[:24], Name: c.Name, Arguments: c.Arguments}
	}
	return out
}
