package family

import "strings"

// gemma4 is Gemma 4: <|turn>role ... <turn|> turns. It thinks in a
// channel, <|channel>thought\n ... <channel|>, when the template's
// enable_thinking puts <|think|> in the system turn (Gemma 4 31B's
// template writes an empty channel when it is off), and calls tools as
// <|tool_call>call:NAME{key:value,...}<tool_call|>, keys bare and sorted,
// strings between <|"|>, other values as JSON writes them.
var gemma4 = &Family{
	Name: "gemma4",
	Match: func(arch, template string) bool {
		return arch == "gemma4" ||
			strings.Contains(template, "<|turn>") && strings.Contains(template, "<turn|>")
	},
	Thinking: &Thinking{
		Vars: func(on bool, _ Effort) map[string]any {
			return map[string]any{"enable_thinking": on}
		},
		Open:  gemma4Markers.thinkOpen,
		Close: gemma4Markers.thinkClose,
	},
	Tools:     &Tools{Grammar: keyedCallsGrammar(gemma4Markers.callOpen, gemma4Markers.callClose, gemma4Values).build},
	NewParser: func(cfg ParserConfig) Parser { return newSplitter(gemma4Markers, cfg) },
	// After a call the model may go on to write the tool's response,
	// which opens with <|tool_response>: the turn ends there.
	Stops: []string{"<|tool_response>"},
}

// gemma4Markers are Gemma 4's markers: a thought channel, which may open
// anywhere, and calls with strings between <|"|>.
var gemma4Markers = markers{
	thinkOpen:     "<|channel>",
	thinkClose:    "<channel|>",
	thinkAnywhere: true,
	thinkLabel:    "thought\n",
	callOpen:      "<|tool_call>",
	callClose:     "<tool_call|>",
	read:          keyedCall(`<|"|>`),
}
