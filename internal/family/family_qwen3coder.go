package family

import "strings"

// qwen3Coder is Qwen3-Coder: ChatML without thinking, calls written as
// <tool_call>\n<function=f>\n<parameter=p>\nvalue\n</parameter>\n</function>\n</tool_call>,
// a string's value as bare text, any other value as JSON.
var qwen3Coder = &Family{
	Name: "qwen3-coder",
	Match: func(arch, template string) bool {
		return isChatML(template) && strings.Contains(template, "<function=") &&
			strings.Contains(template, "<parameter=") && !strings.Contains(template, "<think>")
	},
	Tools: &Tools{Grammar: xmlCallsGrammar(false).build},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(qwenXMLMarkers(false), cfg)
	},
}

// qwenXMLMarkers are the markers of Qwen3-Coder's and Qwen3.5's output,
// with <think> sections when think.
func qwenXMLMarkers(think bool) markers {
	m := markers{callOpen: "<tool_call>", callClose: "</tool_call>", read: xmlCalls}
	if think {
		m.thinkOpen, m.thinkClose = "<think>", "</think>"
	}
	return m
}
