package family

import "strings"

// gemma4 is Gemma 4: <|turn>role ... <turn|> turns. It thinks in a
// channel, <|channel>thought\n ... <channel|>, when the template's
// enable_thinking puts <|think|> in the system turn (Gemma 4 31B's
// template writes an empty channel when it is off), and calls tools as
// <|tool_call>call:NAME{key:value,...}<tool_call|>, keys bare and sorted,
// strings between <|"|>, other values as JSON writes them.
var gemma4 = &Family{
	Name: "gemma4",
	Match: func(arch, template string) bool {
		return arch == "gemma4" ||
			strings.Contains(template, "<|turn>") && strings.Contains(template, "<turn|>")
	},
	Thinking: &Thinking{
		Vars: func(on bool, _ Effort) map[string]any {
			return map[string]any{"enable_thinking": on}
		},
		Close: gemma4Markup.thinkClose,
	},
	Tools: &Tools{
		Grammar: func(tools []Tool, name string, single bool, _ func([]byte) (string, error)) (string, error) {
			return keyedGrammar(gemma4Markup, gemma4Values, tools, name, single)
		},
	},
	NewParser: func(cfg ParserConfig) Parser { return newMarkupParser(gemma4Markup, cfg) },
}

var gemma4Markup = markup{
	thinkOpen:  "<|channel>",
	thinkClose: "<channel|>",
	thinkLabel: "thought\n",
	callOpen:   "<|tool_call>",
	callClose:  "<tool_call|>",
	parse:      func(body string) ([]Call, bool) { return parseKeyedCall(body, `<|"|>`) },
}

// keyedGrammar admits calls written call:NAME{key:value,...} between the
// markup's call markers, as Gemma 4 and FunctionGemma write them, one
// after another with nothing between.
func keyedGrammar(m markup, syn valueSyntax, tools []Tool, name string, single bool) (string, error) {
	tools, err := pickTools(tools, name)
	if err != nil {
		return "", err
	}
	g := &grammar{}
	var alts []string
	for _, t := range tools {
		o, err := readObject(t.Parameters)
		if err != nil {
			return "", err
		}
		body, err := g.members(o, ",", func(k string) (string, error) {
			v, err := g.valueRule(o.props[k], syn)
			return lit(k+":") + " " + v, err
		})
		if err != nil {
			return "", err
		}
		alts = append(alts, g.add("call", lit("call:"+t.Name+"{")+" "+body+` "}"`))
	}
	return rooted(g, lit(m.callOpen)+" ("+strings.Join(alts, " | ")+") "+lit(m.callClose), "", single), nil
}

// rooted returns the grammar with a root of one call, or of one or more
// separated by sep.
func rooted(g *grammar, call, sep string, single bool) string {
	root := "root ::= call\n"
	if !single {
		root = "root ::= call (" + lit(sep) + " call)*\n"
		if sep == "" {
			root = "root ::= call+\n"
		}
	}
	return root + "call ::= " + call + "\n" + g.String()
}
