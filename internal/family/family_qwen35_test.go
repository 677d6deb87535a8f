package family

import "testing"

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
