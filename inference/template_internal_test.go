package inference

import "testing"

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
	got, err := tmpl.render(msgs, tools, nil, nil, nil)
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
	got, _ = tmpl.render(msgs[:2], nil, nil, nil, nil)
	if want := "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
