package family

import "strings"

// llama3 is Meta's Llama 3.1, 3.2 and 3.3 (and their fine-tunes that keep
// the template, such as Llama-3.1-Nemotron). A call is a JSON object
// {"name": ..., "parameters": {...}}, written alone as the answer or after
// <|python_tag|>; a bare JSON answer is a call only when it names an
// offered tool. The template renders one call per assistant turn, so the
// grammar admits one. Llama 3 does not think.
//
// The engine stops at <|eot_id|> and <|eom_id|> (the end of a turn that
// called a tool), both end-of-generation tokens. The template starts with
// bos_token itself.
var llama3 = &Family{
	Name: "llama3",
	Match: func(arch, template string) bool {
		return strings.Contains(template, "<|start_header_id|>") && strings.Contains(template, "<|eot_id|>") &&
			(strings.Contains(template, "<|python_tag|>") || strings.Contains(template, "ipython")) &&
			!strings.Contains(template, "<TOOLCALL>") // Nemotron's own call format
	},
	Tools: &Tools{Grammar: callsGrammar{one: true, call: jsonCallsGrammar("parameters", "", "")}.build},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(llamaMarkers, cfg)
	},
}

// llamaMarkers are Llama 3's: calls after <|python_tag|>, or bare.
var llamaMarkers = markers{callOpen: "<|python_tag|>", read: jsonCalls, bare: bareJSONCalls}
