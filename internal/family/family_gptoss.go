package family

import (
	"encoding/json"
	"strings"

	"github.com/ollama/ollama/harmony"
)

// gptOSS is OpenAI's gpt-oss, which writes the harmony format: messages
// <|start|>assistant<|channel|>CHANNEL<|message|>...<|end|>, where the
// analysis channel is reasoning, the final channel the answer, and a
// commentary message to=functions.NAME a call, whose JSON arguments end
// with <|call|>. The rendered prompt ends with <|start|>assistant, so the
// output starts at the channel.
//
// It always reasons; reasoning_effort (low, medium, high) in the template
// sets how much. Thinking off asks for low effort. <|return|> and <|call|>
// end a turn: the engine stops at them (they are end-of-generation tokens)
// and does not pass them on; <|end|> is not one.
//
// The parser is the harmony package's HarmonyParser (the message and
// header splitter); this file routes its channels. It releases one call at
// the end of the output, or at each message end when the engine passes
// <|end|> on.
var gptOSS = &Family{
	Name: "gpt-oss",
	Match: func(arch, template string) bool {
		return arch == "gpt-oss" || strings.Contains(template, "<|channel|>") &&
			strings.Contains(template, "<|start|>assistant") && strings.Contains(template, "<|message|>")
	},
	Thinking: &Thinking{
		Vars: func(on bool, effort Effort) map[string]any {
			switch {
			case !on:
				effort = EffortLow
			case effort == EffortDefault:
				return map[string]any{}
			}
			return map[string]any{"reasoning_effort": string(effort)}
		},
		// The analysis message ends and a new assistant message starts, at
		// its channel: the model then writes final (or, under a tool
		// grammar, is made to write commentary to=functions.NAME).
		Open:  "<|channel|>analysis<|message|>",
		Close: "<|end|><|start|>assistant",
	},
	Tools: &Tools{Grammar: gptOSSGrammar.build},
	NewParser: func(cfg ParserConfig) Parser {
		p := &harmonyParser{calls: len(cfg.Tools) > 0, hp: &harmony.HarmonyParser{
			MessageStartTag: "<|start|>",
			MessageEndTag:   "<|end|>",
			HeaderEndTag:    "<|message|>",
		}}
		if cfg.Thinking {
			p.hp.AddContent("<|start|>assistant<|channel|>analysis<|message|>")
			p.state = harmonyThinking
		} else {
			p.hp.AddImplicitStart()
		}
		return p
	},
}

// gptOSSGrammar admits one call, as gpt-oss writes it after the Close
// text: the channel header naming the function, then its arguments. The
// harmony format holds one call per turn.
var gptOSSGrammar = callsGrammar{one: true, call: argsCall(func(t Tool) string {
	return "<|channel|>commentary to=functions." + t.Name + " <|constrain|>json<|message|>"
}, "")}

type harmonyState int

const (
	harmonyText harmonyState = iota
	harmonyThinking
	harmonyCall
	harmonyCut // a call the token limit cut: dropped
)

// harmonyParser routes the messages of the harmony package's parser.
type harmonyParser struct {
	hp    *harmony.HarmonyParser
	calls bool // tools were offered: messages to functions are calls
	state harmonyState
	name  string          // the function of the call being read
	args  strings.Builder // its arguments
}

// Thinking implements Parser.
func (p *harmonyParser) Thinking() bool { return p.state == harmonyThinking }

// Calling implements Parser: the function named by the recipient of the
// call the output is inside, and its arguments so far.
func (p *harmonyParser) Calling() string {
	if p.state == harmonyCall {
		return p.name + " " + p.args.String()
	}
	return ""
}

// Push implements Parser.
func (p *harmonyParser) Push(text string) Output {
	var out Output
	p.route(p.hp.AddContent(text), &out)
	return out
}

// Flush implements Parser: a message the output left open is ended, so
// that the parser releases what it held back; a call is released whole,
// or dropped when the token limit cut it.
func (p *harmonyParser) Flush(truncated bool) Output {
	var out Output
	if truncated && p.state == harmonyCall {
		p.state = harmonyCut
	}
	p.route(p.hp.AddContent("<|end|>"), &out)
	return out
}

func (p *harmonyParser) route(events []harmony.HarmonyEvent, out *Output) {
	for _, e := range events {
		switch e := e.(type) {
		case harmony.HarmonyEventHeaderComplete:
			h := e.Header
			switch {
			case h.Recipient != "" && p.calls:
				p.state, p.name = harmonyCall, strings.TrimPrefix(h.Recipient, "functions.")
				p.args.Reset()
			case h.Channel == "analysis":
				p.state = harmonyThinking
			default: // final, or commentary meant for the user
				p.state = harmonyText
			}
		case harmony.HarmonyEventContentEmitted:
			switch p.state {
			case harmonyThinking:
				out.Reasoning += e.Content
			case harmonyCall:
				p.args.WriteString(e.Content)
			case harmonyCut:
			default:
				out.Text += e.Content
			}
		case harmony.HarmonyEventMessageEnd:
			if p.state == harmonyCall {
				if args, ok := compactArgs(json.RawMessage(p.args.String())); ok {
					out.Calls = append(out.Calls, Call{Name: p.name, Arguments: args})
				} else {
					out.Text += p.args.String() // malformed: shown as text
				}
			}
			p.state = harmonyText
		}
	}
}
