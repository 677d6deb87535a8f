package family

import (
	"bytes"
	"encoding/json"
	"strings"
)

// nemotron is NVIDIA Nemotron 3 Nano (GGUF architectures nemotron_h and
// nemotron_h_moe with its template): ChatML turns; thinking switched by
// the template's enable_thinking (on unless set false), the generation
// prompt opening <think>\n when on and writing <think></think> when off;
// calls in Qwen3-Coder's XML,
//
//	<tool_call>
//	<function=NAME>
//	<parameter=KEY>
//	VALUE
//	</parameter>
//	</function>
//	</tool_call>
//
// a string VALUE raw, others as JSON. The model sometimes goes from
// thinking straight to a call without </think>. Nemotron Nano 2, whose
// template calls tools in <TOOLCALL>, is not this family.
var nemotron = &Family{
	Name: "nemotron",
	Match: func(arch, template string) bool {
		return strings.HasPrefix(arch, "nemotron") &&
			strings.Contains(template, "<function=") && strings.Contains(template, "<think>")
	},
	Thinking: &Thinking{
		Vars: func(on bool, _ Effort) map[string]any {
			return map[string]any{"enable_thinking": on}
		},
		Close: "</think>",
	},
	Tools:     &Tools{Grammar: nemotronGrammar},
	NewParser: newNemotronParser,
}

func newNemotronParser(cfg ParserConfig) Parser {
	types := map[string]map[string]string{} // tool → parameter → JSON type
	for _, t := range cfg.Tools {
		var s struct {
			Properties map[string]struct {
				Type json.RawMessage `json:"type"`
			} `json:"properties"`
		}
		_ = json.Unmarshal(t.Parameters, &s)
		types[t.Name] = map[string]string{}
		for k, p := range s.Properties {
			var typ string
			if json.Unmarshal(p.Type, &typ) == nil {
				types[t.Name][k] = typ
			}
		}
	}
	m := markup{
		thinkOpen:        "<think>",
		thinkClose:       "</think>",
		callEndsThinking: true,
		callOpen:         "<tool_call>",
		callClose:        "</tool_call>",
		parse:            func(body string) ([]Call, bool) { return parseXMLCalls(body, types) },
	}
	return newMarkupParser(m, cfg)
}

// parseXMLCalls reads the functions of a <tool_call> block. A value is a
// string where its tool says so or where it is not JSON.
func parseXMLCalls(body string, types map[string]map[string]string) ([]Call, bool) {
	var calls []Call
	rest := trimSpaceLeft(body)
	for rest != "" {
		name, inner, after, ok := xmlElement(rest, "function")
		if !ok {
			return nil, false
		}
		var args strings.Builder
		args.WriteByte('{')
		for inner = trimSpaceLeft(inner); inner != ""; inner = trimSpaceLeft(inner) {
			key, value, more, ok := xmlElement(inner, "parameter")
			if !ok {
				return nil, false
			}
			inner = more
			value = strings.TrimSuffix(strings.TrimPrefix(value, "\n"), "\n")
			if args.Len() > 1 {
				args.WriteByte(',')
			}
			writeJSONString(&args, key)
			args.WriteByte(':')
			if typ := types[name][key]; typ != "string" && json.Valid([]byte(value)) {
				args.WriteString(compactJSON(value))
			} else {
				writeJSONString(&args, value)
			}
		}
		args.WriteByte('}')
		calls = append(calls, Call{Name: name, Arguments: args.String()})
		rest = trimSpaceLeft(after)
	}
	return calls, len(calls) > 0
}

// xmlElement reads <tag=NAME>INNER</tag> at the start of s.
func xmlElement(s, tag string) (name, inner, rest string, ok bool) {
	open := "<" + tag + "="
	if !strings.HasPrefix(s, open) {
		return "", "", "", false
	}
	s = s[len(open):]
	gt := strings.IndexByte(s, '>')
	if gt <= 0 || strings.ContainsAny(s[:gt], "<\n") {
		return "", "", "", false
	}
	name, s = s[:gt], s[gt+1:]
	end := strings.Index(s, "</"+tag+">")
	if end < 0 {
		return "", "", "", false
	}
	return name, s[:end], s[end+len("</"+tag+">"):], true
}

// compactJSON returns valid JSON s without its white space.
func compactJSON(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

// nemotronGrammar admits <tool_call> blocks of one function each, a
// string parameter as raw text without "</", others as JSON by schema.
func nemotronGrammar(tools []Tool, name string, single bool, schema func([]byte) (string, error)) (string, error) {
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
		body, err := g.members(o, "", func(k string) (string, error) {
			var p struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(o.props[k], &p)
			v := "xml-text"
			if p.Type != "string" {
				if v, err = g.jsonRule(o.props[k], schema); err != nil {
					return "", err
				}
			}
			return lit("<parameter="+k+">\n") + " " + v + " " + lit("\n</parameter>\n"), nil
		})
		if err != nil {
			return "", err
		}
		alts = append(alts, g.add("function", lit("<function="+t.Name+">\n")+" "+body+" "+lit("</function>\n")))
	}
	g.rules = append(g.rules, `xml-text ::= ([^<] | "<" [^/])*`)
	return rooted(g, lit("<tool_call>\n")+" ("+strings.Join(alts, " | ")+") "+lit("</tool_call>"), "\n", single), nil
}
