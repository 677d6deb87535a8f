package family

import "testing"

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
