package family

import "strings"

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
		Tools: &Tools{
			Grammar: func(tools []Tool, name string, single bool, schema func([]byte) (string, error)) (string, error) {
				calls, err := pythonCalls(tools, name, func(g *grammar, s []byte) (string, error) {
					return g.jsonRule(s, schema)
				})
				if err != nil {
					return "", err
				}
				list := "call"
				if !single {
					list = `call ("\n" call)*`
				}
				return "root ::= " + lit(olmo3Markup.callOpen) + " " + list + " " + lit(olmo3Markup.callClose) + "\n" +
					"call ::= " + strings.Join(calls.alts, " | ") + "\n" + calls.g.String(), nil
			},
		},
		NewParser: func(cfg ParserConfig) Parser { return newMarkupParser(olmo3Markup, cfg) },
	}
	olmo3Think = &Family{
		Name: "olmo3-think",
		Match: func(arch, template string) bool {
			return isOlmo(arch) && strings.Contains(template, "<|im_start|>") && strings.Contains(template, "<think>")
		},
		Thinking: &Thinking{
			Vars:  func(bool, Effort) map[string]any { return nil },
			Close: "</think>",
		},
		NewParser: func(cfg ParserConfig) Parser {
			return newMarkupParser(markup{thinkOpen: "<think>", thinkClose: "</think>"}, cfg)
		},
	}
)

func isOlmo(arch string) bool { return arch == "olmo2" || arch == "olmo3" }

var olmo3Markup = markup{
	callOpen:  "<function_calls>",
	callClose: "</function_calls>",
	parse:     func(body string) ([]Call, bool) { return parsePythonCalls(body, false) },
}
