package family

import "strings"

// qwen3 is Qwen3 (dense, MoE and Next): ChatML, <think> sections switched
// by enable_thinking (the generation prompt closes an empty one when it is
// false; when it is true the model opens its own), calls written as JSON
// in <tool_call> as Hermes does.
var qwen3 = &Family{
	Name: "qwen3",
	Match: func(arch, template string) bool {
		switch arch {
		case "qwen3", "qwen3moe", "qwen3next":
		default:
			return false
		}
		return isChatML(template) && strings.Contains(template, "<tool_call>") &&
			strings.Contains(template, "<think>") && !strings.Contains(template, "<function=")
	},
	Thinking: &Thinking{Vars: enableThinking, Open: "<think>", Close: "\n</think>\n\n"},
	Tools:    &Tools{Grammar: hermesGrammar.build},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(hermesMarkers, cfg)
	},
}
