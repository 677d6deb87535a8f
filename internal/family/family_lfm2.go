package family

import (
	"encoding/json"
	"strings"
)

// lfm2 and lfm2Thinking are Liquid's LFM2 and LFM2.5: ChatML turns, tools
// listed in the system turn, calls written as a Python list,
// <|tool_call_start|>[NAME(key=value, ...), ...]<|tool_call_end|>, strings
// single-quoted. The thinking models (their template reads the thinking
// of past turns) open <think> ... </think> themselves; no template
// variable switches it.
var (
	lfm2 = &Family{
		Name: "lfm2",
		Match: func(arch, template string) bool {
			return isLFM2(arch, template) && !strings.Contains(template, "<think>")
		},
		Tools:     lfm2Tools,
		NewParser: func(cfg ParserConfig) Parser { return newSplitter(lfm2Markers, cfg) },
	}
	lfm2Thinking = &Family{
		Name: "lfm2-thinking",
		Match: func(arch, template string) bool {
			return isLFM2(arch, template) && strings.Contains(template, "<think>")
		},
		Thinking: &Thinking{
			Vars:  func(bool, Effort) map[string]any { return nil },
			Open:  lfm2Markers.thinkOpen,
			Close: lfm2Markers.thinkClose,
		},
		Tools:     lfm2Tools,
		NewParser: func(cfg ParserConfig) Parser { return newSplitter(lfm2Markers, cfg) },
	}
)

func isLFM2(arch, template string) bool {
	return strings.HasPrefix(arch, "lfm2") ||
		strings.Contains(template, "<|tool_call_start|>") || strings.Contains(template, "<|tool_list_start|>")
}

// lfm2Markers are LFM2's markers: a <think> section, which may open
// anywhere, and a Python list of calls.
var lfm2Markers = markers{
	thinkOpen:     "<think>",
	thinkClose:    "</think>",
	thinkAnywhere: true,
	callOpen:      "<|tool_call_start|>",
	callClose:     "<|tool_call_end|>",
	read:          pythonCalls(true),
}

// lfm2Tools writes a list of calls, values as Python writes them.
var lfm2Tools = &Tools{Grammar: callsGrammar{
	open: lfm2Markers.callOpen + "[", close: "]" + lfm2Markers.callClose, sep: ", ",
	call: pythonCall(func(g *grammar, schema json.RawMessage, _ func([]byte) (string, error)) (string, error) {
		return g.valueRule(schema, pythonValues)
	}),
}.build}
