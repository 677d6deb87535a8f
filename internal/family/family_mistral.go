package family

import (
	"encoding/json"
	"strings"
)

// mistral is Mistral's models of the v3 tokenizer and its tool format:
// Mistral 7B v0.3, Mistral Nemo, Mistral Small 3 and 3.1. A turn's calls
// are [TOOL_CALLS] and a JSON array of {"name", "arguments"} objects (an
// "id" may come along). They do not think. The engine stops at </s>.
var mistral = &Family{
	Name: "mistral",
	Match: func(arch, template string) bool {
		return strings.Contains(template, "[TOOL_CALLS]") && !strings.Contains(template, "[ARGS]") &&
			!strings.Contains(template, "[THINK]")
	},
	Tools: &Tools{Grammar: callsGrammar{open: "[TOOL_CALLS][", close: "]", sep: ",", oneIfNamed: true,
		call: jsonCallsGrammar("arguments", "", "")}.build},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(markers{callOpen: "[TOOL_CALLS]", read: jsonCalls}, cfg)
	},
}

// ministral is Mistral's models of the v11 and later tokenizers: Ministral
// 3, Magistral, Mistral Small 3.2, Devstral 2. Each call is
// [TOOL_CALLS]NAME[ARGS]{...} (Mistral Small 3.2 may put [CALL_ID]ID
// before [ARGS]); reasoning models think in [THINK]...[/THINK], which
// their system prompt asks for: no template variable switches it. A
// template without tools (some copies of Ministral 3's) gets them in an
// [AVAILABLE_TOOLS] block (Present). The engine stops at </s>.
//
// Ollama's ministral parser was not taken: it ignores the end of the
// output (text held back as a possible marker, such as "Hello [TOOL_C", is
// never released, nor a call cut short), and it reports a malformed call
// or an unknown tool as an error instead of showing it as text.
var ministral = &Family{
	Name: "ministral",
	Match: func(arch, template string) bool {
		return strings.Contains(template, "[TOOL_CALLS]") &&
			(strings.Contains(template, "[ARGS]") || strings.Contains(template, "[THINK]"))
	},
	Thinking: &Thinking{
		Vars:  func(on bool, effort Effort) map[string]any { return map[string]any{} },
		Open:  "[THINK]",
		Close: "[/THINK]",
	},
	Tools: &Tools{Grammar: callsGrammar{oneIfNamed: true,
		call: argsCall(func(t Tool) string { return "[TOOL_CALLS]" + t.Name + "[ARGS]" }, "")}.build,
		Present: presentAvailableTools},
	NewParser: func(cfg ParserConfig) Parser {
		return newSplitter(markers{
			thinkOpen: "[THINK]", thinkClose: "[/THINK]", thinkAnywhere: true,
			callOpen: "[TOOL_CALLS]", read: ministralCalls,
		}, cfg)
	},
}

// ministralCalls reads NAME[ARGS]{...}, and any further calls each
// after [TOOL_CALLS]. In a cut body, the last call is dropped unless it
// reads whole.
func ministralCalls(body string, _ []Tool, cut bool) ([]Call, bool) {
	if cut {
		body = body[:len(body)-holdLen(body, []string{"[TOOL_CALLS]"})]
	}
	var calls []Call
	pieces := strings.Split(body, "[TOOL_CALLS]")
	for i, one := range pieces {
		c, ok := ministralCall(one)
		if !ok {
			if cut && i > 0 && i == len(pieces)-1 {
				break
			}
			return nil, false
		}
		calls = append(calls, c)
	}
	return calls, true
}

// ministralCall reads one NAME[ARGS]{...}.
func ministralCall(s string) (Call, bool) {
	name, args, ok := strings.Cut(s, "[ARGS]")
	if !ok {
		return Call{}, false
	}
	name, _, _ = strings.Cut(name, "[CALL_ID]")
	name = strings.TrimSpace(name)
	dec := json.NewDecoder(strings.NewReader(args))
	var raw json.RawMessage
	if name == "" || dec.Decode(&raw) != nil || strings.TrimSpace(args[dec.InputOffset():]) != "" {
		return Call{}, false
	}
	a, ok := compactArgs(raw)
	return Call{Name: name, Arguments: a}, ok
}
