package family

import "strings"

// qwen3Coder is Qwen3-Coder: ChatML without thinking, calls written as
// <tool_call>\n<function=f>\n<parameter=p>\nvalue\n</parameter>\n</function>\n</tool_call>,
// a string's value as bare text, any other value as JSON.
var qwen3Coder = &Family{
	Name: "qwen3-coder",
	Match: func(arch, template string) bool {
		return isChatML(template) && strings.Contains(template, "<function=") &&
			strings.Contains(template, "<parameter=") && !strings.Contains(template, thinkOpen)
	},
	Tools: &Tools{Grammar: qwenXMLGrammar},
	NewParser: func(cfg ParserConfig) Parser {
		return newMarkedParser(cfg, qwenXMLMarks, false)
	},
}
