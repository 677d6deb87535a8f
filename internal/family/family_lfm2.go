package family

import "strings"

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
		NewParser: func(cfg ParserConfig) Parser { return newMarkupParser(lfm2Markup, cfg) },
	}
	lfm2Thinking = &Family{
		Name: "lfm2-thinking",
		Match: func(arch, template string) bool {
			return isLFM2(arch, template) && strings.Contains(template, "<think>")
		},
		Thinking: &Thinking{
			Vars:  func(bool, Effort) map[string]any { return nil },
			Close: lfm2Markup.thinkClose,
		},
		Tools:     lfm2Tools,
		NewParser: func(cfg ParserConfig) Parser { return newMarkupParser(lfm2Markup, cfg) },
	}
)

func isLFM2(arch, template string) bool {
	return strings.HasPrefix(arch, "lfm2") ||
		strings.Contains(template, "<|tool_call_start|>") || strings.Contains(template, "<|tool_list_start|>")
}

var lfm2Markup = markup{
	thinkOpen:  "<think>",
	thinkClose: "</think>",
	callOpen:   "<|tool_call_start|>",
	callClose:  "<|tool_call_end|>",
	parse:      func(body string) ([]Call, bool) { return parsePythonCalls(body, true) },
}

var lfm2Tools = &Tools{
	Grammar: func(tools []Tool, name string, single bool, _ func([]byte) (string, error)) (string, error) {
		calls, err := pythonCalls(tools, name, func(g *grammar, schema []byte) (string, error) {
			return g.valueRule(schema, pythonValues)
		})
		if err != nil {
			return "", err
		}
		g := calls.g
		list := "call"
		if !single {
			list = `call ("," " " call)*`
		}
		return "root ::= " + lit(lfm2Markup.callOpen+"[") + " " + list + " " + lit("]"+lfm2Markup.callClose) + "\n" +
			"call ::= " + strings.Join(calls.alts, " | ") + "\n" + g.String(), nil
	},
}

// pyCalls are the rules of Python calls of tools.
type pyCalls struct {
	g    *grammar
	alts []string
}

// pythonCalls builds a rule per tool of a call NAME(key=value, ...),
// each value's rule made by value.
func pythonCalls(tools []Tool, name string, value func(*grammar, []byte) (string, error)) (pyCalls, error) {
	tools, err := pickTools(tools, name)
	if err != nil {
		return pyCalls{}, err
	}
	g := &grammar{}
	var alts []string
	for _, t := range tools {
		o, err := readObject(t.Parameters)
		if err != nil {
			return pyCalls{}, err
		}
		body, err := g.members(o, ", ", func(k string) (string, error) {
			v, err := value(g, o.props[k])
			return lit(k+"=") + " " + v, err
		})
		if err != nil {
			return pyCalls{}, err
		}
		alts = append(alts, g.add("call", lit(t.Name+"(")+" "+body+` ")"`))
	}
	return pyCalls{g, alts}, nil
}
