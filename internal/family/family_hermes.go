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
	Tools: &Tools{Grammar: hermesGrammar},
	NewParser: func(cfg ParserConfig) Parser {
		// Thinking is off for the family, yet a model of it (QwQ, a
		// distilled reasoner) may open a <think> section itself.
		return newMarkedParser(cfg, hermesMarks, true)
	},
}
