package family

import "testing"

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
