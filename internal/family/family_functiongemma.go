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
	Tools: &Tools{
		Grammar: func(tools []Tool, name string, single bool, _ func([]byte) (string, error)) (string, error) {
			return keyedGrammar(functionGemmaMarkup, functionGemmaValues, tools, name, single)
		},
	},
	NewParser: func(cfg ParserConfig) Parser { return newMarkupParser(functionGemmaMarkup, cfg) },
}

var functionGemmaMarkup = markup{
	callOpen:  "<start_function_call>",
	callClose: "<end_function_call>",
	parse:     func(body string) ([]Call, bool) { return parseKeyedCall(body, "<escape>") },
}
