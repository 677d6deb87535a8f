package family

import "strings"

// qwen35 is Qwen3.5: ChatML with a thinking section the generation prompt
// opens (<think>\n) unless enable_thinking is false, when it writes an
// empty one, and calls written as Qwen3-Coder writes them
// (<tool_call><function=f><parameter=p>...). Its architectures, qwen35 and
// qwen35moe, are its own; a template of its kind under another
// architecture is one too.
var qwen35 = &Family{
	Name: "qwen3.5",
	Match: func(arch, template string) bool {
		if arch == "qwen35" || arch == "qwen35moe" {
			return true
		}
		return isChatML(template) && strings.Contains(template, "<function=") &&
			strings.Contains(template, "<parameter=") && strings.Contains(template, "<think>")
	},
	Thinking: &Thinking{Vars: enableThinking, Open: "<think>", Close: "\n</think>\n\n"},
	Tools:    &Tools{Grammar: xmlCallsGrammar(false).build},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(qwenXMLMarkers(true), cfg)
	},
}
