package family

import "testing"

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
