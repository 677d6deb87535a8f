package family

import "testing"

func TestQwen35Golden(t *testing.T) {
	tools := []Tool{weatherTool}
	testGolden(t, qwen35, "qwen35", []goldenCase{
		// The generation prompt opened <think>\n; the template writes
		// scalars with Python's str(), so a boolean is True.
		{"think_text_call", ParserConfig{Tools: tools, Thinking: true}, "The user asks about São Paulo. I should call get_weather.\n</think>\n\nLet me look that up.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nSão Paulo\n</parameter>\n<parameter=days>\n2\n</parameter>\n<parameter=metric>\nTrue\n</parameter>\n</function>\n</tool_call>"},
		// enable_thinking false: the prompt closed an empty section.
		{"thinking_off", ParserConfig{Tools: tools}, "Hello! How can I help? 😊"},
		// A checkpoint that opens <think> again.
		{"think_again", ParserConfig{Thinking: true}, "<think>\nShort.\n</think>\n\nDone."},
	})
}

func TestQwen35Broken(t *testing.T) {
	testBroken(t, qwen35, brokenCase{
		malformed:   "Hi\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</function>\n</tool_call>",
		wantText:    "Hi\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</function>\n</tool_call>",
		cut:         "Hi\n\n<tool_call>\n<function=get_weather>\n<parameter=ci",
		wantCutText: "Hi",
	})
}

func TestQwen35Grammar(t *testing.T) {
	testGrammar(t, qwen35, grammarCase{
		call: "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
		want: Call{Name: "get_weather", Arguments: `{"city":"Paris","days":3}`},
	})
}
