package family

import (
	"encoding/json"
	"strings"
)

// olmo3 and olmo3Think are Ai2's Olmo 3 (GGUF architecture olmo2, which
// Olmo 3 converts to, or olmo3): ChatML turns. The instruct models list
// tools in <functions> ... </functions> in the system turn and call them
// as <function_calls>NAME(key=value, ...)</function_calls>, keys sorted,
// values as JSON writes them, several calls on separate lines. The Think
// models have no tools (their template says so) and always think: the
// generation prompt opens <think>, so their parser starts in thinking
// (ParserConfig.Thinking true), and no variable switches it off.
var (
	olmo3 = &Family{
		Name: "olmo3",
		Match: func(arch, template string) bool {
			return isOlmo(arch) && !strings.Contains(template, "<think>") &&
				(strings.Contains(template, "<function_calls>") || strings.Contains(template, "<functions>"))
		},
		Tools: &Tools{Grammar: callsGrammar{
			open: olmo3Markers.callOpen, close: olmo3Markers.callClose, sep: "\n",
			call: pythonCall(func(g *grammar, schema json.RawMessage, convert func([]byte) (string, error)) (string, error) {
				return g.schema(schema, convert)
			}),
		}.build},
		NewParser: func(cfg ParserConfig) Parser { return newSplitter(olmo3Markers, cfg) },
	}
	olmo3Think = &Family{
		Name: "olmo3-think",
		Match: func(arch, template string) bool {
			return isOlmo(arch) && strings.Contains(template, "<|im_start|>") && strings.Contains(template, "<think>")
		},
		Thinking: &Thinking{
			Vars:  func(bool, Effort) map[string]any { return nil },
			Open:  "<think>",
			Close: "</think>",
		},
		NewParser: func(cfg ParserConfig) Parser {
			return newSplitter(markers{thinkOpen: "<think>", thinkClose: "</think>", thinkAnywhere: true}, cfg)
		},
	}
)

func isOlmo(arch string) bool { return arch == "olmo2" || arch == "olmo3" }

// olmo3Markers are Olmo 3's call markers.
var olmo3Markers = markers{
	callOpen:  "<function_calls>",
	callClose: "</function_calls>",
	read:      pythonCalls(false),
}
