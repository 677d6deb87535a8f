package family

import "testing"

func TestHermesGolden(t *testing.T) {
	tools := []Tool{weatherTool}
	testGolden(t, hermes, "hermes", []goldenCase{
		// As inferkit's ChatML asks: arguments as an object, or as a
		// JSON string as some Hermes checkpoints write them.
		{"text_calls", ParserConfig{Tools: tools}, "Sure — checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Bergen\\\", \\\"days\\\": 2}\"}\n</tool_call>"},
		{"text_only", ParserConfig{}, "  Plain answer, with a <b>tag</b> and a trailing newline.\n"},
		// A reasoning model under a Hermes template opens <think> itself.
		{"think", ParserConfig{Tools: tools}, "<think>\nPonder.\n</think>\nAnswer."},
	})
}

func TestHermesBroken(t *testing.T) {
	testBroken(t, hermes, brokenCase{
		malformed:   "<tool_call>\n{\"arguments\": {}}\n</tool_call>",
		wantText:    "<tool_call>\n{\"arguments\": {}}\n</tool_call>",
		cut:         "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Os",
		wantCutText: "",
	})
}

func TestHermesGrammar(t *testing.T) {
	testGrammar(t, hermes, grammarCase{
		call: "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"days\": 2}}\n</tool_call>",
		want: Call{Name: "get_weather", Arguments: `{"city":"Oslo","days":2}`},
	})
}
