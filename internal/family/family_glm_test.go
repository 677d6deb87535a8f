package family

import "testing"

func TestGLMGolden(t *testing.T) {
	tools := []Tool{weatherTool}
	testGolden(t, glm45, "glm-4.5", []goldenCase{
		// The prompt ends with <|assistant|>; the model opens
		// \n<think> itself, and writes calls as the template does.
		{"think_text_calls", ParserConfig{Tools: tools}, "\n<think>The user wants the weather in Beijing.</think>\nI'll check.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Shanghai</arg_value>\n</tool_call>"},
		// enable_thinking false: the prompt wrote \n<think></think>.
		{"thinking_off", ParserConfig{Tools: tools}, "\nHello! 你好"},
	})
	testGolden(t, glm47, "glm-4.7", []goldenCase{
		// The prompt ends with <|assistant|><think>.
		{"think_text_call", ParserConfig{Tools: tools, Thinking: true}, "The user wants the weather in 北京.</think>I'll check.<tool_call>get_weather<arg_key>city</arg_key><arg_value>北京</arg_value><arg_key>metric</arg_key><arg_value>true</arg_value></tool_call>"},
		// enable_thinking false: the prompt ends with </think>.
		{"thinking_off", ParserConfig{Tools: tools}, "Hello."},
	})
}

func TestGLMBroken(t *testing.T) {
	for _, f := range []*Family{glm45, glm47} {
		t.Run(f.Name, func(t *testing.T) {
			testBroken(t, f, brokenCase{
				malformed:   "See <tool_call>get_weather<arg_key>city</arg_key>Paris</tool_call>",
				wantText:    "See <tool_call>get_weather<arg_key>city</arg_key>Paris</tool_call>",
				cut:         "See\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Par",
				wantCutText: "See",
			})
		})
	}
}

func TestGLMGrammar(t *testing.T) {
	testGrammar(t, glm45, grammarCase{
		call: "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>",
		want: Call{Name: "get_weather", Arguments: `{"city":"Paris","days":2}`},
	})
	testGrammar(t, glm47, grammarCase{
		call: "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
		want: Call{Name: "get_weather", Arguments: `{"city":"Paris"}`},
	})
}
