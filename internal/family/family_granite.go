package family

import "strings"

// IBM Granite. Granite 3.x writes its calls as <|tool_call|> and a JSON
// list of {"name", "arguments"} objects, the rest of the turn; Granite
// 3.2 and 3.3 think when the template's thinking variable is true (3.2
// between "Here is my thought process:" and "Here is my response:", 3.3
// in <think></think> then <response></response>), and their templates
// drop the thinking instructions when tools are offered. Granite 4 writes
// each call as <tool_call>{"name", "arguments"}</tool_call>, as Hermes
// does, and does not think. All stop at <|end_of_text|>.

// graniteMatch recognises a Granite template; marker tells the versions
// apart.
func graniteMatch(marker string, not ...string) func(arch, template string) bool {
	return func(arch, template string) bool {
		if !strings.Contains(template, "<|start_of_role|>") || !strings.Contains(template, marker) {
			return false
		}
		for _, n := range not {
			if strings.Contains(template, n) {
				return false
			}
		}
		return true
	}
}

// graniteThinking is the thinking switch of Granite 3.2 and 3.3: the
// template variable thinking; effort does not apply.
func graniteThinking(open, close string) *Thinking {
	return &Thinking{
		Vars:  func(on bool, effort Effort) map[string]any { return map[string]any{"thinking": on} },
		Open:  open,
		Close: close,
	}
}

// granite3Grammar admits <|tool_call|> and a JSON list of calls.
var granite3Grammar = callsGrammar{open: "<|tool_call|>[", close: "]", sep: ",", oneIfNamed: true,
	call: jsonCallsGrammar("arguments", "", "")}

// granite3Markers are Granite 3's markers, thinking between open and
// close.
func granite3Markers(open, close string, drop ...string) markers {
	return markers{thinkOpen: open, thinkClose: close, callOpen: "<|tool_call|>", read: jsonCalls, drop: drop}
}

// granite33 is Granite 3.3: <think>...</think><response>...</response>.
var granite33 = &Family{
	Name:     "granite3.3",
	Match:    graniteMatch("<think></think>"),
	Thinking: graniteThinking("<think>", "</think><response>"),
	Tools:    &Tools{Grammar: granite3Grammar.build},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(granite3Markers("<think>", "</think>", "<response>", "</response>"), cfg)
	},
}

// granite32 is Granite 3.2, which marks its thinking in words.
var granite32 = &Family{
	Name:     "granite3.2",
	Match:    graniteMatch("Here is my thought process:"),
	Thinking: graniteThinking("Here is my thought process:", "Here is my response:"),
	Tools:    &Tools{Grammar: granite3Grammar.build},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(granite3Markers("Here is my thought process:", "Here is my response:"), cfg)
	},
}

// granite3 is Granite 3.0 and 3.1, which do not think.
var granite3 = &Family{
	Name:  "granite3",
	Match: graniteMatch("<|tool_call|>"),
	Tools: &Tools{Grammar: granite3Grammar.build},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(granite3Markers("", ""), cfg)
	},
}

// granite4 is Granite 4.
var granite4 = &Family{
	Name:  "granite4",
	Match: graniteMatch("<tool_call>"),
	// Hermes' calls, and several when no tool is named.
	Tools: &Tools{Grammar: callsGrammar{sep: "\n", oneIfNamed: true, call: hermesGrammar.call}.build},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(markers{callOpen: "<tool_call>", callClose: "</tool_call>", read: jsonCalls}, cfg)
	},
}
