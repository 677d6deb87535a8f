package family

import (
	"encoding/json"
	"strings"
	"unicode"
)

// DeepSeek's call markers (the bars are U+FF5C, the spaces U+2581).
const (
	dsCallsBegin = "<｜tool▁calls▁begin｜>"
	dsCallsEnd   = "<｜tool▁calls▁end｜>"
	dsCallBegin  = "<｜tool▁call▁begin｜>"
	dsCallEnd    = "<｜tool▁call▁end｜>"
	dsSep        = "<｜tool▁sep｜>"
)

// DeepSeek's chat templates list no tools: the tools go at the end of the
// system prompt, as its model card's "## Tools" section (Present).

// isDeepSeek reports whether a template writes DeepSeek's turns and call
// markers: V3, R1 and its distillations (on Llama and Qwen
// architectures), V3.1.
func isDeepSeek(template string) bool {
	return strings.Contains(template, "<｜Assistant｜>") && strings.Contains(template, dsCallsBegin)
}

// isDeepSeekV31 reports whether a DeepSeek template writes V3.1's calls,
// name<｜tool▁sep｜>arguments, rather than V3's
// function<｜tool▁sep｜>name and a fenced JSON block.
func isDeepSeekV31(template string) bool {
	return strings.Contains(template, "tool['function']['name'] + '"+dsSep+"'")
}

// dsMarkers are DeepSeek's markers, with <think> sections when think;
// the body holds one or more calls, each between <｜tool▁call▁begin｜>
// and <｜tool▁call▁end｜>.
func dsMarkers(think bool) markers {
	m := markers{callOpen: dsCallsBegin, callClose: dsCallsEnd, read: deepSeekCalls}
	if think {
		m.thinkOpen, m.thinkClose = "<think>", "</think>"
	}
	return m
}

// deepSeekCalls reads the calls of a body in either form: V3 and R1's
// function<｜tool▁sep｜>name\n```json\n{...}\n``` or V3.1's
// name<｜tool▁sep｜>{...}. In a cut body, the call (or the marker) that
// the cut left without its end is dropped.
func deepSeekCalls(body string, _ []Tool, cut bool) ([]Call, bool) {
	var calls []Call
	s := body
	for strings.TrimSpace(s) != "" {
		call, rest, ok := cutTag(s, dsCallBegin, dsCallEnd)
		if !ok {
			if cut && startsCut(s, dsCallBegin) {
				break
			}
			return nil, false
		}
		s = rest
		name, args, ok := strings.Cut(call, dsSep)
		if !ok {
			return nil, false
		}
		if n, fenced, ok := strings.Cut(args, "\n"); name == "function" && ok {
			fenced = strings.TrimSpace(fenced)
			if !strings.HasPrefix(fenced, "```") || !strings.HasSuffix(fenced, "```") || len(fenced) < 6 {
				return nil, false
			}
			fenced = strings.TrimSuffix(strings.TrimPrefix(fenced, "```json"), "```")
			name, args = strings.TrimSpace(n), fenced
		}
		name = strings.TrimFunc(name, unicode.IsSpace)
		a, ok := compactArgs(json.RawMessage(args))
		if !ok || !validName(name) {
			return nil, false
		}
		calls = append(calls, Call{Name: name, Arguments: a})
	}
	return calls, len(calls) > 0
}

// deepSeekGrammar is the grammar of V3 and R1's calls, or with v31 of
// V3.1's.
func deepSeekGrammar(v31 bool) callsGrammar {
	c := callsGrammar{open: dsCallsBegin, close: dsCallsEnd, sep: "\n"}
	if v31 {
		c.sep = ""
		c.call = argsCall(func(t Tool) string { return dsCallBegin + t.Name + dsSep }, dsCallEnd)
	} else {
		c.call = argsCall(func(t Tool) string { return dsCallBegin + "function" + dsSep + t.Name + "\n```json\n" }, "\n```"+dsCallEnd)
	}
	return c
}

// deepSeekV3 is DeepSeek V3 (and V2.5-style chat models with its
// template): no thinking; calls as
// <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>name\n```json\n{...}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>.
var deepSeekV3 = &Family{
	Name: "deepseek-v3",
	Match: func(arch, template string) bool {
		return isDeepSeek(template) && !isDeepSeekV31(template) && !strings.Contains(template, "</think>")
	},
	Tools: &Tools{Grammar: deepSeekGrammar(false).build, Present: presentSystemText(deepSeekToolsText(false))},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(dsMarkers(false), cfg)
	},
}

// deepSeekR1 is DeepSeek R1 and its distillations: V3's calls, and a
// <think> section the model always opens itself; no template variable
// switches it off, so Vars has none.
var deepSeekR1 = &Family{
	Name: "deepseek-r1",
	Match: func(arch, template string) bool {
		return isDeepSeek(template) && !isDeepSeekV31(template) && strings.Contains(template, "</think>")
	},
	Thinking: &Thinking{Vars: func(bool, Effort) map[string]any { return nil }, Open: "<think>", Close: "\n</think>\n\n"},
	Tools:    &Tools{Grammar: deepSeekGrammar(false).build, Present: presentSystemText(deepSeekToolsText(false))},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(dsMarkers(true), cfg)
	},
}

// deepSeekV31 is DeepSeek V3.1: the thinking variable makes the
// generation prompt open <think> (else it writes </think>); calls as
// <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>name<｜tool▁sep｜>{...}<｜tool▁call▁end｜><｜tool▁calls▁end｜>.
var deepSeekV31 = &Family{
	Name: "deepseek-v3.1",
	Match: func(arch, template string) bool {
		return isDeepSeek(template) && isDeepSeekV31(template)
	},
	Thinking: &Thinking{Vars: func(on bool, _ Effort) map[string]any { return map[string]any{"thinking": on} }, Open: "<think>", Close: "</think>"},
	Tools:    &Tools{Grammar: deepSeekGrammar(true).build, Present: presentSystemText(deepSeekToolsText(true))},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(dsMarkers(true), cfg)
	},
}
