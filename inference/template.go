package inference

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/inferkit/inferkit/internal/family"
	"github.com/inferkit/inferkit/internal/jinja"
)

// chatTemplate renders a conversation into a model's prompt with the Jinja
// chat template from its GGUF, as Hugging Face's apply_chat_template does.
// It is safe for concurrent use.
type chatTemplate struct {
	tmpl     *jinja.Template
	bos, eos string
}

// newChatTemplate parses source, or ChatML when source is empty. bos and eos
// are the texts of the model's special tokens, for templates that write
// them.
func newChatTemplate(source, bos, eos string) (*chatTemplate, error) {
	if source == "" {
		source = family.ChatML
	}
	t, err := jinja.Parse(source)
	if err != nil {
		return nil, fmt.Errorf("inference: chat template: %w", err)
	}
	return &chatTemplate{tmpl: t, bos: bos, eos: eos}, nil
}

// render writes the prompt for msgs, ending with the opening of the
// assistant's turn. vars are the model family's thinking switches (see
// family.Thinking.Vars), set as the template's variables. Every string of msgs and tools passes through data on its way in
// (nil: as it is), so that the caller can tell request text from the
// template's markup.
//
// present is the model family's way of showing tools (see
// family.Tools.Present; nil for none): with tools, and a template that
// does not use its tools variable, it places them in the messages before
// the one render.
//
// An image part becomes the text image returns in its message's content
// (nil: the model reads no images, and an image fails).
func (t *chatTemplate) render(msgs []Message, tools []Tool, vars map[string]any, present func(messages, tools []any) []any, data func(string) string, image func() string) (string, error) {
	if data == nil {
		data = func(s string) string { return s }
	}
	vars = maps.Clone(vars)
	if vars == nil {
		vars = map[string]any{}
	}
	vars["add_generation_prompt"] = true
	vars["bos_token"] = t.bos
	vars["eos_token"] = t.eos
	list := make([]any, 0, len(msgs))
	for i, m := range msgs {
		v, err := messageVar(m, data, image)
		if err != nil {
			return "", fieldError(Field("Messages").At(i), "%v", err)
		}
		list = append(list, v)
	}
	if len(tools) > 0 {
		defs := make([]any, 0, len(tools))
		for i, tool := range tools {
			v, err := toolVar(tool, data)
			if err != nil {
				return "", fieldError(Field("Tools").At(i).Dot("Parameters"), "%v", err)
			}
			defs = append(defs, v)
		}
		vars["tools"] = defs
		if present != nil && !t.tmpl.Uses("tools") {
			list = present(list, defs)
		}
	}
	vars["messages"] = list
	out, err := t.tmpl.Render(vars)
	if err != nil {
		// A template's raise_exception rejects conversations it cannot
		// render, such as roles out of order: the request's fault.
		return "", fieldError(Field("Messages"), "the model's chat template: %v", err)
	}
	return out, nil
}

// messageVar is a message as Hugging Face templates read it: role,
// content, and where present reasoning_content, tool_calls, tool_call_id
// and name. Its strings pass through data.
func messageVar(m Message, data func(string) string, image func() string) (*jinja.Map, error) {
	switch m.Role {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
	default:
		return nil, fmt.Errorf("role %q", m.Role)
	}
	// Text parts pass through data run by run, joined, so that control
	// text split across parts is found whole.
	var text, run strings.Builder
	for _, p := range m.Content {
		if p.Image == nil {
			run.WriteString(p.Text)
			continue
		}
		if image == nil {
			return nil, fmt.Errorf("this model does not read images (it has no projector)")
		}
		text.WriteString(data(run.String()))
		run.Reset()
		text.WriteString(image())
	}
	text.WriteString(data(run.String()))
	v := jinja.NewMap()
	v.Set("role", string(m.Role))
	v.Set("content", text.String())
	if m.Reasoning != "" {
		v.Set("reasoning_content", data(m.Reasoning))
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]any, 0, len(m.ToolCalls))
		for _, c := range m.ToolCalls {
			fn := jinja.NewMap()
			fn.Set("name", data(c.Name))
			// Templates expect the arguments as an object (Qwen, Llama
			// write them with tojson); keep the text when it is not one.
			var args any = data(c.Arguments)
			if parsed, err := jinja.ParseJSON([]byte(c.Arguments)); err == nil {
				if _, ok := parsed.(*jinja.Map); ok {
					args = dataJSON(parsed, data)
				}
			}
			fn.Set("arguments", args)
			call := jinja.NewMap()
			call.Set("id", data(c.ID))
			call.Set("type", "function")
			call.Set("function", fn)
			calls = append(calls, call)
		}
		v.Set("tool_calls", calls)
	}
	if m.ToolCallID != "" {
		v.Set("tool_call_id", data(m.ToolCallID))
	}
	if m.Name != "" {
		v.Set("name", data(m.Name))
	}
	return v, nil
}

// toolVar is a tool in the OpenAI shape that templates read:
// {type: function, function: {name, description, parameters}}. Its
// strings pass through data.
func toolVar(t Tool, data func(string) string) (*jinja.Map, error) {
	fn := jinja.NewMap()
	fn.Set("name", data(t.Name))
	if t.Description != "" {
		fn.Set("description", data(t.Description))
	}
	if len(t.Parameters) > 0 {
		if !json.Valid(t.Parameters) {
			return nil, fmt.Errorf("parameters of %q are not JSON", t.Name)
		}
		params, err := jinja.ParseJSON(t.Parameters)
		if err != nil {
			return nil, err
		}
		fn.Set("parameters", dataJSON(params, data))
	}
	v := jinja.NewMap()
	v.Set("type", "function")
	v.Set("function", fn)
	return v, nil
}

// dataJSON returns a copy of the parsed JSON value v whose strings, keys
// included, have passed through data.
func dataJSON(v any, data func(string) string) any {
	switch v := v.(type) {
	case string:
		return data(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = dataJSON(x, data)
		}
		return out
	case *jinja.Map:
		out := jinja.NewMap()
		for k, x := range v.All() {
			out.Set(data(k), dataJSON(x, data))
		}
		return out
	}
	return v
}
