package family

import "strings"

// nemotron is NVIDIA Nemotron 3 Nano (GGUF architectures nemotron_h and
// nemotron_h_moe with its template): ChatML turns; thinking switched by
// the template's enable_thinking (on unless set false), the generation
// prompt opening <think>\n when on and writing <think></think> when off;
// calls in Qwen3-Coder's XML,
//
//	<tool_call>
//	<function=NAME>
//	<parameter=KEY>
//	VALUE
//	</parameter>
//	</function>
//	</tool_call>
//
// a string VALUE raw, others as JSON. The model sometimes goes from
// thinking straight to a call without </think>. Nemotron Nano 2, whose
// template calls tools in <TOOLCALL>, is not this family.
var nemotron = &Family{
	Name: "nemotron",
	Match: func(arch, template string) bool {
		return strings.HasPrefix(arch, "nemotron") &&
			strings.Contains(template, "<function=") && strings.Contains(template, "<think>")
	},
	Thinking: &Thinking{
		Vars: func(on bool, _ Effort) map[string]any {
			return map[string]any{"enable_thinking": on}
		},
		Open:  "<think>",
		Close: "</think>",
	},
	Tools:     &Tools{Grammar: xmlCallsGrammar(true).build},
	NewParser: func(cfg ParserConfig) Parser { return newSplitter(nemotronMarkers, cfg) },
}

// nemotronMarkers are Nemotron's: a <think> section, which a call may
// end, and Qwen3-Coder's calls.
var nemotronMarkers = markers{
	thinkOpen:        "<think>",
	thinkClose:       "</think>",
	thinkAnywhere:    true,
	callEndsThinking: true,
	callOpen:         "<tool_call>",
	callClose:        "</tool_call>",
	read:             xmlCalls,
}
