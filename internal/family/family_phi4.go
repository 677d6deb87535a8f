package family

import "strings"

// Microsoft's Phi-4. Phi-4-mini calls tools: its template puts a system
// message's "tools" (a JSON string, which Present writes: the tools'
// {name, description, parameters}) between <|tool|> and <|/tool|>, and it writes each call as <|tool_call|>JSON<|/tool_call|>,
// the JSON a {"name", "arguments"} object or a list of them. Phi-4-reasoning
// and Phi-4-mini-reasoning think in <think>...</think>, which their
// system prompt always asks for (no template variable switches it). Phi-4
// itself does neither. They stop at <|end|> or <|im_end|>.

// phi4Mini is Phi-4-mini.
var phi4Mini = &Family{
	Name: "phi4-mini",
	Match: func(arch, template string) bool {
		return strings.Contains(template, "<|assistant|>") && strings.Contains(template, "<|tool|>") &&
			!strings.Contains(template, "<think>") && !strings.Contains(template, "math expert")
	},
	Tools: &Tools{Grammar: callsGrammar{oneIfNamed: true,
		call: jsonCallsGrammar("arguments", "<|tool_call|>", "<|/tool_call|>")}.build,
		Present: presentSystemField},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(markers{callOpen: "<|tool_call|>", callClose: "<|/tool_call|>", read: jsonCalls}, cfg)
	},
}

// phi4Reasoning is Phi-4-reasoning and Phi-4-mini-reasoning.
var phi4Reasoning = &Family{
	Name: "phi4-reasoning",
	Match: func(arch, template string) bool {
		return strings.Contains(template, "<|im_sep|>") && strings.Contains(template, "<think>") ||
			strings.Contains(template, "<|assistant|>") && strings.Contains(template, "Phi, an AI math expert")
	},
	Thinking: &Thinking{
		Vars:  func(on bool, effort Effort) map[string]any { return map[string]any{} },
		Open:  "<think>",
		Close: "</think>",
	},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(markers{thinkOpen: "<think>", thinkClose: "</think>"}, cfg)
	},
}

// phi4 is Phi-4 (14B): ChatML turns split by <|im_sep|>, plain text.
var phi4 = &Family{
	Name: "phi4",
	Match: func(arch, template string) bool {
		return strings.Contains(template, "<|im_start|>") && strings.Contains(template, "<|im_sep|>")
	},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(markers{}, ParserConfig{})
	},
}
