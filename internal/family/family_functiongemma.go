package family

import "strings"

// functionGemma is FunctionGemma, a Gemma 3 model tuned to call
// functions: its template declares them as
// <start_function_declaration>declaration:NAME{...} and it calls them as
// <start_function_call>call:NAME{key:value,...}<end_function_call>, keys
// bare and sorted, strings between <escape>. It does not think. It shares
// Gemma 3's architecture and turns, so it comes before gemma3.
var functionGemma = &Family{
	Name: "functiongemma",
	Match: func(arch, template string) bool {
		return strings.Contains(template, "<start_function_call>") ||
			strings.Contains(template, "<start_function_declaration>")
	},
	Tools:     &Tools{Grammar: keyedCallsGrammar(functionGemmaMarkers.callOpen, functionGemmaMarkers.callClose, functionGemmaValues).build},
	NewParser: func(cfg ParserConfig) Parser { return newSplitter(functionGemmaMarkers, cfg) },
	// After a call the model may go on to write the function's
	// response, which opens with <start_function_response>: the turn
	// ends there.
	Stops: []string{"<start_function_response>"},
}

// functionGemmaMarkers are FunctionGemma's call markers.
var functionGemmaMarkers = markers{
	callOpen:  "<start_function_call>",
	callClose: "<end_function_call>",
	read:      keyedCall("<escape>"),
}
