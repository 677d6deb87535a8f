package family

import "testing"

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
