package family

import (
	"encoding/json"
	"strings"
)

// Ways of presenting tools (Tools.Present) to families whose chat
// templates do not render the tools variable.

// fields is a template value of named fields, as the engine gives Present
// its messages and tools (an ordered map).
type fields interface {
	Get(key string) (any, bool)
	Set(key string, value any)
}

// field is the string field key of v, a fields or a map[string]any; ""
// if none.
func field(v any, key string) string {
	var x any
	switch v := v.(type) {
	case fields:
		x, _ = v.Get(key)
	case map[string]any:
		x = v[key]
	}
	s, _ := x.(string)
	return s
}

// toolsJSON is tools as a compact JSON array, each tool in the shape that
// fn returns of it.
func toolsJSON(tools []any, fn func(any) any) string {
	list := make([]any, 0, len(tools))
	for _, t := range tools {
		list = append(list, fn(t))
	}
	return compactJSON(list)
}

// compactJSON is v as compact JSON, with <, > and & as they are (the
// templates' tojson does not escape them).
func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "null"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// openAITool is a tool as the engine sets it: {type, function}.
func openAITool(t any) any { return t }

// functionTool is a tool's function alone: {name, description,
// parameters}.
func functionTool(t any) any {
	if m, ok := t.(fields); ok {
		if fn, ok := m.Get("function"); ok {
			return fn
		}
	}
	return t
}

// systemMessage returns messages with a system message, and its index:
// the first, or a new empty one inserted first.
func systemMessage(messages []any) ([]any, int) {
	for i, m := range messages {
		if field(m, "role") == "system" {
			return messages, i
		}
	}
	m := map[string]any{"role": "system", "content": ""}
	return append([]any{m}, messages...), 0
}

// set sets the field key of v, a fields or a map[string]any.
func set(v any, key string, value any) {
	switch v := v.(type) {
	case fields:
		v.Set(key, value)
	case map[string]any:
		v[key] = value
	}
}

// presentSystemField sets the first system message's "tools" field to the
// tools' functions as a JSON string, as Phi-4-mini's template reads them
// (its model card's json.dumps of [{name, description, parameters}]).
func presentSystemField(messages, tools []any) []any {
	if len(tools) == 0 {
		return messages
	}
	messages, i := systemMessage(messages)
	set(messages[i], "tools", toolsJSON(tools, functionTool))
	return messages
}

// presentSystemText returns a Present that adds text(tools) to the end of
// the system prompt: to the last system message after a blank line, or
// as a system message of its own first when there is none.
func presentSystemText(text func(tools []any) string) func(messages, tools []any) []any {
	return func(messages, tools []any) []any {
		if len(tools) == 0 {
			return messages
		}
		last := -1
		for i, m := range messages {
			if field(m, "role") == "system" {
				last = i
			}
		}
		if last < 0 {
			return append([]any{map[string]any{"role": "system", "content": text(tools)}}, messages...)
		}
		set(messages[last], "content", field(messages[last], "content")+"\n\n"+text(tools))
		return messages
	}
}

// deepSeekToolsText is DeepSeek's tool section of the system prompt, as
// DeepSeek V3.1's model card gives it: each tool under "### name" with
// its description and parameters' schema, then the call format, format
// (V3.1's name<｜tool▁sep｜>arguments, or V3's fenced form).
func deepSeekToolsText(v31 bool) func(tools []any) string {
	return func(tools []any) string {
		var b strings.Builder
		b.WriteString("## Tools\nYou have access to the following tools:\n")
		for _, t := range tools {
			fn := functionTool(t)
			var params any = map[string]any{"type": "object"}
			if m, ok := fn.(fields); ok {
				if p, ok := m.Get("parameters"); ok {
					params = p
				}
			}
			b.WriteString("\n### " + field(fn, "name") + "\nDescription: " + field(fn, "description") + "\n\nParameters: " + compactJSON(params) + "\n")
		}
		b.WriteString("\nIMPORTANT: ALWAYS adhere to this exact format for tool use:\n")
		if v31 {
			b.WriteString(dsCallsBegin + dsCallBegin + "tool_call_name" + dsSep + "tool_call_arguments" + dsCallEnd + "{additional_tool_calls}" + dsCallsEnd + "\n\n" +
				"Where:\n\n- `tool_call_name` must be an exact match to one of the available tools\n" +
				"- `tool_call_arguments` must be valid JSON that strictly follows the tool's Parameters Schema\n" +
				"- For multiple tool calls, chain them directly without separators or spaces\n")
		} else {
			b.WriteString(dsCallsBegin + dsCallBegin + "function" + dsSep + "tool_call_name\n```json\ntool_call_arguments\n```" + dsCallEnd + "{additional_tool_calls}" + dsCallsEnd + "\n\n" +
				"Where:\n\n- `tool_call_name` must be an exact match to one of the available tools\n" +
				"- `tool_call_arguments` must be valid JSON that strictly follows the tool's Parameters Schema\n" +
				"- For multiple tool calls, chain them with a newline as separator\n")
		}
		return b.String()
	}
}

// presentAvailableTools writes Mistral's [AVAILABLE_TOOLS][...][/AVAILABLE_TOOLS]
// block, the tools in the OpenAI shape, at the start of the first user
// message. Ministral 3's full template writes the block after the system
// prompt, before the first turn; a message can reach no nearer than the
// start of that turn's text.
func presentAvailableTools(messages, tools []any) []any {
	if len(tools) == 0 {
		return messages
	}
	for _, m := range messages {
		if field(m, "role") == "user" {
			set(m, "content", "[AVAILABLE_TOOLS]"+toolsJSON(tools, openAITool)+"[/AVAILABLE_TOOLS]"+field(m, "content"))
			break
		}
	}
	return messages
}
