package family

import "testing"

func TestQwen3CoderGolden(t *testing.T) {
	tools := []Tool{weatherTool, {Name: "now"}}
	testGolden(t, qwen3Coder, "qwen3coder", []goldenCase{
		{"text_calls", ParserConfig{Tools: tools}, "I'll fetch it.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nNew\nYork\n</parameter>\n<parameter=days>\n7\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=now>\n</function>\n</tool_call>"},
		// No thinking in this family: <think> is text.
		{"no_thinking", ParserConfig{Tools: tools, Thinking: true}, "<think>not a section</think> print(\"<tool\")"},
	})
}

func TestQwen3CoderBroken(t *testing.T) {
	testBroken(t, qwen3Coder, brokenCase{
		malformed:   "<tool_call>\n<function=get weather>\n</function>\n</tool_call>",
		wantText:    "<tool_call>\n<function=get weather>\n</function>\n</tool_call>",
		cut:         "Sure. <tool_call>\n<function=get_weather>\n",
		wantCutText: "Sure.",
	})
}

func TestQwen3CoderGrammar(t *testing.T) {
	testGrammar(t, qwen3Coder, grammarCase{
		call: "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=metric>\nfalse\n</parameter>\n</function>\n</tool_call>",
		want: Call{Name: "get_weather", Arguments: `{"city":"Paris","metric":false}`},
	})
}
