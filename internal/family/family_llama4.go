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
	Tools: &Tools{Grammar: func(tools []Tool, name string, single bool, schema func([]byte) (string, error)) (string, error) {
		if single || name != "" {
			return jsonObjectGrammar(tools, name, schema)
		}
		picked, err := pickTools(tools, name)
		if err != nil {
			return "", err
		}
		g, err := jsonCallGrammar(picked, "call", "parameters", schema)
		if err != nil {
			return "", err
		}
		return "root ::= call+\n" + g, nil
	}},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(llama4Syntax, cfg)
	},
}

// llama4Syntax is Llama 4's output.
var llama4Syntax = syntax{
	lead: []string{"<|python_start|>"},
	parse: func(body string) ([]Call, bool) {
		body = strings.TrimSpace(strings.Replace(body, "<|python_end|>", "", 1))
		return decodeJSONCalls(body, nil)
	},
	bare: decodeJSONCalls,
}
