package family

import "strings"

// hermes is the generic Hermes/ChatML family: ChatML turns, tools listed
// in <tools>, calls written as JSON in <tool_call> (Hermes 2 and 3,
// Qwen2.5, QwQ, Qwen3 Instruct-2507 and kin), and inferkit's own ChatML
// template, which the engine renders for a model whose GGUF carries none
// (the empty template). It matches any architecture, so it comes after
// the families whose templates also write <tool_call>.
var hermes = &Family{
	Name: "hermes",
	Match: func(arch, template string) bool {
		return template == "" || isChatML(template) &&
			strings.Contains(template, "<tool_call>") &&
			strings.Contains(template, `"arguments"`) &&
			!strings.Contains(template, "<function=")
	},
	Tools: &Tools{Grammar: hermesGrammar.build},
	NewParser: func(cfg ParserConfig) Parser {
		// Thinking is off for the family, yet a model of it (QwQ, a
		// distilled reasoner) may open a <think> section itself.
		return newSplitter(hermesMarkers, cfg)
	},
}

// ChatML is inferkit's own chat template, which the engine renders for a
// model whose GGUF carries none, and tiny test models carry: each
// message as <|im_start|>role\ncontent<|im_end|>, with tools, calls and
// results as Hermes-style models write them (<tools> in the system turn,
// calls as JSON in <tool_call>, results in <tool_response>). The hermes
// family matches it.
const ChatML = `{%- set ns = namespace(start=0) -%}
{%- if tools -%}
{{- '<|im_start|>system\n' -}}
{%- if messages and messages[0].role == 'system' -%}
{{- messages[0].content + '\n\n' -}}{%- set ns.start = 1 -%}
{%- endif -%}
{{- 'You may call the tools whose signatures are listed, as JSON, within <tools></tools>:\n<tools>' -}}
{%- for tool in tools -%}{{- '\n' + (tool | tojson) -}}{%- endfor -%}
{{- '\n</tools>\n\nTo call a tool, write a JSON object with its name and arguments within <tool_call></tool_call>:\n<tool_call>\n{"name": <tool name>, "arguments": <arguments object>}\n</tool_call><|im_end|>\n' -}}
{%- endif -%}
{%- for message in messages[ns.start:] -%}
{%- if message.role == 'tool' -%}
{{- '<|im_start|>user\n<tool_response>\n' + message.content + '\n</tool_response><|im_end|>\n' -}}
{%- else -%}
{{- '<|im_start|>' + message.role + '\n' + message.content -}}
{%- for call in message.tool_calls or [] -%}
{{- ('\n' if message.content or not loop.first else '') + '<tool_call>\n' + ({'name': call.function.name, 'arguments': call.function.arguments} | tojson) + '\n</tool_call>' -}}
{%- endfor -%}
{{- '<|im_end|>\n' -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}`

// isChatML reports whether a template writes ChatML turns.
func isChatML(template string) bool { return strings.Contains(template, "<|im_start|>") }

// enableThinking is the Vars of templates switched by enable_thinking.
func enableThinking(on bool, _ Effort) map[string]any {
	return map[string]any{"enable_thinking": on}
}

// hermesMarkers are the markers of calls written as JSON in <tool_call>,
// after a <think> section a model may open.
var hermesMarkers = markers{
	thinkOpen: "<think>", thinkClose: "</think>",
	callOpen: "<tool_call>", callClose: "</tool_call>", read: jsonCalls,
}

// hermesGrammar admits calls written as JSON in <tool_call>, each on lines
// of its own: <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>.
var hermesGrammar = callsGrammar{sep: "\n", call: jsonCallsGrammar("arguments", "<tool_call>\n", "\n</tool_call>")}
