package family

import "strings"

// isGLM reports whether a template writes GLM 4.5's turns and calls
// (<|assistant|>, <arg_key>).
func isGLM(template string) bool {
	return strings.Contains(template, "<|assistant|>") && strings.Contains(template, "<arg_key>")
}

// glmMarkers are GLM's markers:
// <tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>,
// with or without newlines between the parts, after a <think> section.
var glmMarkers = markers{
	thinkOpen: "<think>", thinkClose: "</think>",
	callOpen: "<tool_call>", callClose: "</tool_call>", read: glmCall,
}

// glmStops are the turns GLM opens after its own: <|observation|>, a
// tool's result after a call, and <|user|>. A GGUF may not mark them as
// end-of-generation tokens.
var glmStops = []string{"<|observation|>", "<|user|>"}

// glmGrammar is the grammar of GLM's calls, with newlines between their
// parts (4.5 and 4.6) or without (4.7).
func glmGrammar(newlines bool) callsGrammar {
	nl := ""
	if newlines {
		nl = "\n"
	}
	return callsGrammar{sep: nl, call: func(g *grammar, t Tool, schema func([]byte) (string, error)) (string, error) {
		args, err := taggedArgs(g, t, false, func(k string) string { return "<arg_key>" + k + "</arg_key>" + nl + "<arg_value>" }, "</arg_value>"+nl, schema)
		if err != nil {
			return "", err
		}
		return lit("<tool_call>"+t.Name+nl) + " " + args + ` "</tool_call>"`, nil
	}}
}

// glm45 is GLM 4.5 and 4.6: <think> sections the model opens itself
// after <|assistant|>, which enable_thinking false closes at once in the
// prompt (and marks the user's turn /nothink); calls with newlines
// between their parts.
var glm45 = &Family{
	Name: "glm-4.5",
	Match: func(arch, template string) bool {
		return isGLM(template) && strings.Contains(template, "<think></think>")
	},
	Thinking: &Thinking{Vars: enableThinking, Open: "<think>", Close: "</think>"},
	Tools:    &Tools{Grammar: glmGrammar(true).build},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(glmMarkers, cfg)
	},
	Stops: glmStops,
}

// glm47 is GLM 4.7: the generation prompt opens <think> unless
// enable_thinking is false, when it writes </think>; calls without
// newlines between their parts.
var glm47 = &Family{
	Name: "glm-4.7",
	Match: func(arch, template string) bool {
		return isGLM(template) && !strings.Contains(template, "<think></think>")
	},
	Thinking: &Thinking{Vars: enableThinking, Open: "<think>", Close: "</think>"},
	Tools:    &Tools{Grammar: glmGrammar(false).build},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(glmMarkers, cfg)
	},
	Stops: glmStops,
}
