package family

import "testing"

// dsCall is a call as DeepSeek V3 and R1's template writes it.
func dsCall(name, args string) string {
	return dsCallBegin + "function" + dsSep + name + "\n```json\n" + args + "\n```" + dsCallEnd
}

func TestDeepSeekGolden(t *testing.T) {
	tools := []Tool{weatherTool}
	calls := dsCallsBegin + dsCall("get_weather", `{"city": "Paris"}`) + "\n" + dsCall("get_weather", `{"city": "Lyon", "days": 2}`) + dsCallsEnd
	testGolden(t, deepSeekV3, "deepseek-v3", []goldenCase{
		{"text_calls", ParserConfig{Tools: tools}, "Let me check both.\n" + calls},
		// The model ends its turn after the last call without
		// <｜tool▁calls▁end｜>.
		{"calls_unended", ParserConfig{Tools: tools}, dsCallsBegin + dsCall("get_weather", `{"city": "Nice"}`)},
		{"text_only", ParserConfig{}, "Paris is the capital of France. <think> is text here."},
	})
	testGolden(t, deepSeekR1, "deepseek-r1", []goldenCase{
		// R1 opens <think> itself.
		{"think_text_calls", ParserConfig{Tools: tools}, "<think>\nThe user wants the weather in Paris and Lyon. 我需要调用工具。\n</think>\n\nChecking now." + calls},
		// A template whose prompt opens <think>\n (R1-0528).
		{"prompt_opened", ParserConfig{Thinking: true}, "Simple arithmetic.\n</think>\n\n4"},
	})
	testGolden(t, deepSeekV31, "deepseek-v3.1", []goldenCase{
		// thinking true: the prompt ends with <｜Assistant｜><think>.
		{"think_text_call", ParserConfig{Tools: tools, Thinking: true}, "User wants Paris weather.</think>Checking." + dsCallsBegin + dsCallBegin + "get_weather" + dsSep + `{"city": "Paris", "metric": true}` + dsCallEnd + dsCallBegin + "get_weather" + dsSep + `{"city": "Lyon"}` + dsCallEnd + dsCallsEnd},
		// thinking false: the prompt ends with </think>.
		{"thinking_off", ParserConfig{Tools: tools}, "Hello there."},
	})
}

func TestDeepSeekBroken(t *testing.T) {
	for _, f := range []*Family{deepSeekV3, deepSeekR1, deepSeekV31} {
		t.Run(f.Name, func(t *testing.T) {
			testBroken(t, f, brokenCase{
				malformed:   "Hm " + dsCallsBegin + dsCallBegin + "function" + dsSep + "get_weather\n```json\n{city}\n```" + dsCallEnd + dsCallsEnd + " ok",
				wantText:    "Hm " + dsCallsBegin + dsCallBegin + "function" + dsSep + "get_weather\n```json\n{city}\n```" + dsCallEnd + dsCallsEnd + " ok",
				cut:         "Hm " + dsCallsBegin + dsCallBegin + "function" + dsSep + "get_weather\n```json\n{\"ci",
				wantCutText: "Hm",
			})
		})
	}
}

func TestDeepSeekGrammar(t *testing.T) {
	testGrammar(t, deepSeekV3, grammarCase{
		call: dsCallsBegin + dsCall("get_weather", `{"city": "Paris"}`) + dsCallsEnd,
		want: Call{Name: "get_weather", Arguments: `{"city":"Paris"}`},
	})
	testGrammar(t, deepSeekR1, grammarCase{
		call: dsCallsBegin + dsCall("get_weather", `{"city": "Paris", "days": 1}`) + dsCallsEnd,
		want: Call{Name: "get_weather", Arguments: `{"city":"Paris","days":1}`},
	})
	testGrammar(t, deepSeekV31, grammarCase{
		call: dsCallsBegin + dsCallBegin + "get_weather" + dsSep + `{"city": "Paris"}` + dsCallEnd + dsCallsEnd,
		want: Call{Name: "get_weather", Arguments: `{"city":"Paris"}`},
	})
}

func TestDeepSeekThinking(t *testing.T) {
	if deepSeekV3.Thinking != nil {
		t.Error("DeepSeek V3 thinks")
	}
	if v := deepSeekV31.Thinking.Vars(false, EffortDefault); v["thinking"] != false {
		t.Errorf("V3.1 Vars(off) = %v", v)
	}
	if v := deepSeekR1.Thinking.Vars(false, EffortDefault); len(v) != 0 {
		t.Errorf("R1 Vars(off) = %v, want none: R1 cannot be switched off", v)
	}
}
