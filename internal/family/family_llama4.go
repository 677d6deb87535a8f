package family

import "strings"

// llama4 is Meta's Llama 4 (Scout, Maverick). Its template, like Llama
// 3's, asks for a call as JSON {"name": ..., "parameters": {...}}, and
// renders a turn's calls one after another, after an empty
// <|python_start|><|python_end|>; so a call is a bare JSON answer that
// names an offered tool, or JSON after <|python_start|>. Several calls are
// JSON objects one after another. Llama 4 does not think.
//
// The engine stops at <|eot|> and <|eom|>. The template starts with
// bos_token itself.
var llama4 = &Family{
	Name: "llama4",
	Match: func(arch, template string) bool {
		return arch == "llama4" || strings.Contains(template, "<|header_start|>") && strings.Contains(template, "<|eot|>")
	},
	Tools: &Tools{Grammar: callsGrammar{oneIfNamed: true, call: jsonCallsGrammar("parameters", "", "")}.build},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(llama4Markers, cfg)
	},
}

// llama4Markers are Llama 4's: a call after <|python_start|> (up to
// <|python_end|>), or bare.
var llama4Markers = markers{
	lead: []string{"<|python_start|>"},
	read: func(body string, tools []Tool, cut bool) ([]Call, bool) {
		if cut {
			body = body[:len(body)-holdLen(body, []string{"<|python_end|>"})]
		}
		return jsonCalls(strings.TrimSpace(strings.Replace(body, "<|python_end|>", "", 1)), tools, cut)
	},
	bare: bareJSONCalls,
}
