package family

import "testing"

func TestQwen3Golden(t *testing.T) {
	tools := []Tool{weatherTool}
	testGolden(t, qwen3, "qwen3", []goldenCase{
		// enable_thinking true: the prompt ends with <|im_start|>assistant\n
		// and the model opens its own <think>.
		{"think_text_calls", ParserConfig{Tools: tools}, "<think>\nThe user wants the weather in Paris and Tokyo for three days. I'll call get_weather for each city.\n</think>\n\nI'll check both cities.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"東京\", \"days\": 3, \"metric\": true}}\n</tool_call>"},
		// A prompt that opened the section itself.
		{"prompt_opened", ParserConfig{Thinking: true}, "Okay, 2 + 2 = 4.\n</think>\n\nThe answer is **4**. ✅"},
		// enable_thinking false: the prompt wrote <think>\n\n</think>\n\n.
		{"thinking_off", ParserConfig{Tools: tools}, "Bonjour ! Use a < b, <tool> and <think> as text; tool_call too."},
	})
}

func TestQwen3Broken(t *testing.T) {
	testBroken(t, qwen3, brokenCase{
		malformed:   "Hi <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {city: Paris}}\n</tool_call> bye",
		wantText:    "Hi <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {city: Paris}}\n</tool_call> bye",
		cut:         "Hi <tool_call>\n{\"name\": \"get_weather\", \"argu",
		wantCutText: "Hi",
	})
}

func TestQwen3Grammar(t *testing.T) {
	testGrammar(t, qwen3, grammarCase{
		call: "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
		want: Call{Name: "get_weather", Arguments: `{"city":"Paris"}`},
	})
}

func TestQwen3Thinking(t *testing.T) {
	if v := qwen3.Thinking.Vars(false, EffortDefault); v["enable_thinking"] != false {
		t.Errorf("Vars(off) = %v", v)
	}
	if v := qwen3.Thinking.Vars(true, EffortHigh); v["enable_thinking"] != true {
		t.Errorf("Vars(on) = %v", v)
	}
}
