package family

import "testing"

// dsCall is a call as DeepSeek V3 and R1's template writes it.
func dsCall(name, args string) string {
	return dsCallBegin + "function" + dsSep + name + "\n```json\n" + args + "\n```" + dsCallEnd
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
