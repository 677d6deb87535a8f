package family

import (
	"fmt"
	"strings"
)

// isGLM reports whether a template writes GLM 4.5's turns and calls
// (<|assistant|>, <arg_key>).
func isGLM(template string) bool {
	return strings.Contains(template, "<|assistant|>") && strings.Contains(template, "<arg_key>")
}

// glmMarks are GLM's markers:
// <tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>,
// with or without newlines between the parts.
var glmMarks = callMarks{open: "<tool_call>", close: "</tool_call>", parse: glmCall}

// glmCall reads the body of a GLM call; a string's value is bare text,
// any other value JSON.
func glmCall(body string, tools []Tool) ([]Call, bool) {
	name, s := body, ""
	if at := strings.Index(body, "<arg_key>"); at >= 0 {
		name, s = body[:at], body[at:]
	}
	name = strings.TrimSpace(name)
	if !validName(name) {
		return nil, false
	}
	args := newArgsBuilder(name, tools)
	for strings.TrimSpace(s) != "" {
		key, rest, ok := cutTag(s, "<arg_key>", "</arg_key>")
		if !ok {
			return nil, false
		}
		value, rest, ok := cutTag(rest, "<arg_value>", "</arg_value>")
		if !ok {
			return nil, false
		}
		args.add(strings.TrimSpace(key), value)
		s = rest
	}
	return []Call{{Name: name, Arguments: args.String()}}, true
}

// glmGrammar returns the Grammar of GLM's calls, with newlines between
// their parts (4.5 and 4.6) or without (4.7).
func glmGrammar(newlines bool) func([]Tool, string, bool, func([]byte) (string, error)) (string, error) {
	nl := ""
	if newlines {
		nl = "\n"
	}
	return func(tools []Tool, name string, single bool, schema func([]byte) (string, error)) (string, error) {
		chosen, err := chosenTools(tools, name)
		if err != nil {
			return "", err
		}
		g := &grammarBuilder{}
		g.add("root", "")
		var alts []string
		for i, t := range chosen {
			args, err := g.textArgsRules(t, fmt.Sprintf("args%d", i),
				func(p string) string { return "<arg_key>" + p + "</arg_key>" + nl + "<arg_value>" }, "</arg_value>"+nl, schema)
			if err != nil {
				return "", err
			}
			rule := fmt.Sprintf("call%d", i)
			g.add(rule, gbnfLiteral("<tool_call>"+t.Name+nl)+" "+args+` "</tool_call>"`)
			alts = append(alts, rule)
		}
		g.add("call", strings.Join(alts, " | "))
		g.rules[0] = callsRoot("call", single, nl)
		g.rules = append(g.rules, textValueRule)
		return g.String(), nil
	}
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
	Thinking: &Thinking{Vars: enableThinking, Close: thinkClose},
	Tools:    &Tools{Grammar: glmGrammar(true)},
	NewParser: func(cfg ParserConfig) Parser {
		return newMarkedParser(cfg, glmMarks, true)
	},
}

// glm47 is GLM 4.7: the generation prompt opens <think> unless
// enable_thinking is false, when it writes </think>; calls without
// newlines between their parts.
var glm47 = &Family{
	Name: "glm-4.7",
	Match: func(arch, template string) bool {
		return isGLM(template) && !strings.Contains(template, "<think></think>")
	},
	Thinking: &Thinking{Vars: enableThinking, Close: thinkClose},
	Tools:    &Tools{Grammar: glmGrammar(false)},
	NewParser: func(cfg ParserConfig) Parser {
		return newMarkedParser(cfg, glmMarks, true)
	},
}
