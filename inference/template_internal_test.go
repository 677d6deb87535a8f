package inference

import (
	"fmt"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/internal/jinja"
)

func TestChatMLTools(t *testing.T) {
	tmpl, err := newChatTemplate("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{
		Text(RoleSystem, "Be brief."),
		Text(RoleUser, "Weather in Paris?"),
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city":"Paris","unit":"c"}`}}},
		{Role: RoleTool, ToolCallID: "c1", Content: []Part{{Text: `{"temp":21}`}}},
	}
	tools := []Tool{{Name: "get_weather", Description: "Current weather.", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}
	got, err := tmpl.render(msgs, tools, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nBe brief.\n\n" +
		"You may call the tools whose signatures are listed, as JSON, within <tools></tools>:\n<tools>\n" +
		`{"type": "function", "function": {"name": "get_weather", "description": "Current weather.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}` +
		"\n</tools>\n\nTo call a tool, write a JSON object with its name and arguments within <tool_call></tool_call>:\n<tool_call>\n" +
		`{"name": <tool name>, "arguments": <arguments object>}` + "\n</tool_call><|im_end|>\n" +
		"<|im_start|>user\nWeather in Paris?<|im_end|>\n" +
		"<|im_start|>assistant\n<tool_call>\n" + `{"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}` + "\n</tool_call><|im_end|>\n" +
		"<|im_start|>user\n<tool_response>\n{\"temp\":21}\n</tool_response><|im_end|>\n" +
		"<|im_start|>assistant\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// Without tools, plain ChatML.
	got, _ = tmpl.render(msgs[:2], nil, nil, nil, nil, nil)
	if want := "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestRenderPresent checks that a family's Tools.Present places the tools
// only for a template that does not use its tools variable, and that it
// gets the tools' strings as data passed them.
func TestRenderPresent(t *testing.T) {
	present := func(messages, tools []any) []any {
		return append(messages, map[string]any{"role": "user", "content": fmt.Sprintf("%d tools", len(tools))})
	}
	msgs := []Message{Text(RoleUser, "Hi")}
	tools := []Tool{{Name: "get_<x>"}}
	data := func(s string) string { return strings.ReplaceAll(s, "<x>", "[x]") }
	chatml, err := newChatTemplate("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	with, _ := chatml.render(msgs, tools, nil, present, data, nil)
	without, _ := chatml.render(msgs, tools, nil, nil, data, nil)
	if with != without || !strings.Contains(with, "get_[x]") {
		t.Errorf("a template that shows tools: with Present %q, without %q", with, without)
	}
	plain, err := newChatTemplate("{% for m in messages %}{{ m.content }};{% endfor %}", "", "")
	if err != nil {
		t.Fatal(err)
	}
	show := func(messages, tools []any) []any {
		fn, _ := tools[0].(*jinja.Map).Get("function")
		name, _ := fn.(*jinja.Map).Get("name")
		return append(messages, map[string]any{"role": "user", "content": name})
	}
	if got, _ := plain.render(msgs, tools, nil, show, data, nil); got != "Hi;get_[x];" {
		t.Errorf("a template without tools: %q", got)
	}
	if got, _ := plain.render(msgs, nil, nil, show, data, nil); got != "Hi;" {
		t.Errorf("no tools: %q", got)
	}
}
