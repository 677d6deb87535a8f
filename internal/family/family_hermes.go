package family

import "strings"

// hermes is the generic Hermes/ChatML family: ChatML turns, tools listed
// in <tools>, calls written as JSON in <tool_call> (Hermes 2 and 3,
// Qwen2.5, QwQ, Qwen3 Instruct-2507 and kin), and inferkit's own ChatML
// template, which the engine renders for a model whose GGUF carries none
// (the empty template). It matches any architecture, so it comes after
// the families whose templates also write <tool_call>.
var hermes = &Family{
	Name: "hermes",
	Match: func(arch, template string) bool {
		return template == "" || isChatML(template) &&
			strings.Contains(template, "<tool_call>") &&
			strings.Contains(template, `"arguments"`) &&
			!strings.Contains(template, "<function=")
	},
	Tools: &Tools{Grammar: hermesGrammar.build},
	NewParser: func(cfg ParserConfig) Parser {
		// Thinking is off for the family, yet a model of it (QwQ, a
		// distilled reasoner) may open a <think> section itself.
		return newSplitter(hermesMarkers, cfg)
	},
}

// isChatML reports whether a template writes ChatML turns.
func isChatML(template string) bool { return strings.Contains(template, "<|im_start|>") }

// enableThinking is the Vars of templates switched by enable_thinking.
func enableThinking(on bool, _ Effort) map[string]any {
	return map[string]any{"enable_thinking": on}
}

// hermesMarkers are the markers of calls written as JSON in <tool_call>,
// after a <think> section a model may open.
var hermesMarkers = markers{
	thinkOpen: "<think>", thinkClose: "</think>",
	callOpen: "<tool_call>", callClose: "</tool_call>", read: jsonCalls,
}

// hermesGrammar admits calls written as JSON in <tool_call>, each on lines
// of its own: <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>.
var hermesGrammar = callsGrammar{sep: "\n", call: jsonCallsGrammar("arguments", "<tool_call>\n", "\n</tool_call>")}
