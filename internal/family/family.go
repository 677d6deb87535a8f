// Package family holds what inferkit knows of each model family: how to
// recognise it from a GGUF's architecture and chat template, how its
// thinking is switched and closed, the grammar that forces its tool calls,
// and the parser that splits its streamed output into text, reasoning and
// calls. One file per family; Lookup is the one registry. A model that no
// family recognises is reported as such, never guessed: its tools and
// thinking are off.
//
// A new family touches three places: its file (family_NAME.go, its
// Family value), its line in registry.go (before any family whose
// markers its template also holds), and its golden cases (rows of
// goldenCases in golden_test.go, with the model outputs they stream under
// testdata/NAME, written with -update).
//
// The package is pure Go. Where the pinned Ollama module has a parser for
// a family (model/parsers, harmony), the family wraps it behind Parser.
package family

import (
	"encoding/json"
)

// Tool is a tool a request offers.
type Tool struct {
	// Name is the function's name.
	Name string
	// Description says what it does; "" if none.
	Description string
	// Parameters is its JSON Schema; nil means an object of any fields.
	Parameters json.RawMessage
}

// Call is a tool call the model wrote.
type Call struct {
	// Name is the tool's name.
	Name string
	// Arguments is a compact JSON object.
	Arguments string
}

// Output is what a Parser releases: whole UTF-8 characters of answer text
// and reasoning, and whole calls.
type Output struct {
	Text, Reasoning string
	Calls           []Call
}

// Parser splits one streamed output. It is not safe for concurrent use.
type Parser interface {
	// Push adds the next piece of output text (whole UTF-8 characters)
	// and returns what it releases. Text that may still become a marker
	// or a call is held back.
	Push(text string) Output
	// Flush ends the output and releases what is held: a call that
	// parses, else its text. truncated says the token limit cut the
	// output, so that a call cut short is dropped rather than shown as
	// text.
	Flush(truncated bool) Output
	// Thinking reports whether the output pushed so far is inside a
	// thinking section: the engine counts a thinking budget by it, and
	// lets a grammar constrain only the answer.
	Thinking() bool
	// Calling is the text of the call the output pushed so far is
	// inside, held until it ends ("" outside a call); a format that names
	// the call outside that text (harmony's recipient) puts the name
	// first. The engine bounds a call by it where no grammar does.
	Calling() string
}

// ParserConfig configures a Parser.
type ParserConfig struct {
	// Tools are the tools offered; a family that writes calls as bare
	// JSON takes only calls of these for calls. With none, nothing is
	// read as a call: what the model writes as one is answer text.
	Tools []Tool
	// Thinking says the output starts inside a thinking section: the
	// rendered prompt opened it.
	Thinking bool
}

// Effort is how much a request asks a model to think.
type Effort string

// Efforts; EffortDefault is the family's own default.
const (
	EffortDefault Effort = ""
	EffortLow     Effort = "low"
	EffortMedium  Effort = "medium"
	EffortHigh    Effort = "high"
)

// Thinking is how a family reasons before it answers.
type Thinking struct {
	// Vars returns the chat template's variables that switch thinking on
	// or off, at an effort (such as enable_thinking, reasoning_effort).
	Vars func(on bool, effort Effort) map[string]any
	// Open is the marker that opens a thinking section, as the output
	// or the end of a rendered prompt writes it: the engine looks for it
	// at the prompt's end and writes it to open a section.
	Open string
	// Close is the text that ends a thinking section, which the engine
	// writes to cut thinking short (a budget spent, an answer forced by
	// a grammar); "" if the family cannot be cut short.
	Close string
}

// Tools is how a family calls tools.
type Tools struct {
	// Grammar returns a GBNF grammar that admits only calls: of the tool
	// name, or of any of tools when name is ""; one call when single,
	// else one or more. schema converts a JSON Schema to GBNF whose
	// start rule is root.
	Grammar func(tools []Tool, name string, single bool, schema func([]byte) (string, error)) (string, error)
	// Present shows the model the tools, for a family whose chat template
	// does not render its tools variable; nil for one whose template
	// does. It takes the template's messages and tools as the engine
	// sets them, in Hugging Face's shapes (a message's role and content,
	// a tool's {type, function: {name, description, parameters}}), their
	// request text already passed through the engine's data guard, and
	// returns the messages to render: with the tools placed where the
	// template or the model reads them. It may change the messages it is
	// given. What it adds besides the tools' own values is markup.
	Present func(messages, tools []any) []any
}

// Family is one model family.
type Family struct {
	// Name identifies it in logs and ModelInfo, such as "qwen3".
	Name string
	// Match reports whether a model is of the family, from its GGUF's
	// general.architecture and its chat template.
	Match func(arch, template string) bool
	// Thinking is nil for a family that does not think.
	Thinking *Thinking
	// Tools is nil for a family that does not call tools.
	Tools *Tools
	// NewParser returns a parser of one output.
	NewParser func(ParserConfig) Parser
	// Stops are markers the family writes after a call or at the end of
	// its turn that llama.cpp does not take for the end of generation
	// (they may be ordinary text to it): the engine ends the output at
	// the first of them as at an end-of-generation token, in addition to
	// a request's stop strings. The marker and what follows are dropped;
	// the output ends as the turn's end, not at a request's stop
	// sequence. nil for none.
	Stops []string
}

// Lookup returns the family of a model, or nil when none recognises it.
// Families are tried in registry order, the more specific first.
func Lookup(arch, template string) *Family {
	for _, f := range registry() {
		if f.Match(arch, template) {
			return f
		}
	}
	return nil
}
