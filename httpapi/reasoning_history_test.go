//go:build cgo

package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/internal/testmodels"
)

// An assistant turn's reasoning, given back in the history, is rendered
// through the template in each style: Qwen3's template writes the
// reasoning of the turns after the last user message (a tool loop) into
// <think>...</think>, so the prompt grows by the reasoning's tokens.
func TestReasoningHistoryRoundTrips(t *testing.T) {
	base := serveSpecIDs(t, testmodels.Qwen3Tiny(t), 4096)
	const reasoning = "The user asks about Oslo; the weather tool answers that, so call it with the city."
	post := func(t *testing.T, path, body string) map[string]any {
		t.Helper()
		code, b := send(t, "POST", base+path, body)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil || code != 200 {
			t.Fatalf("%s: %d %v %s", path, code, err, b)
		}
		return out
	}
	tool := `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}`
	for name, c := range map[string]struct {
		path, with string
		count      func(map[string]any) float64
	}{
		"chat": {"/v1/chat/completions",
			`{"model":"core-2-5-mini","max_tokens":1,"tools":[` + tool + `],"messages":[{"role":"user","content":"Weather in Oslo?"},` +
				`{"role":"assistant","content":"","reasoning_content":"` + reasoning + `","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},` +
				`{"role":"tool","tool_call_id":"c1","content":"sunny"}]}`,
			func(m map[string]any) float64 { return m["usage"].(map[string]any)["prompt_tokens"].(float64) }},
		"responses": {"/v1/responses",
			`{"model":"core-2-5-mini","max_output_tokens":16,"store":false,"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}],"input":[` +
				`{"role":"user","content":"Weather in Oslo?"},` +
				`{"type":"reasoning","summary":[{"type":"summary_text","text":"` + reasoning + `"}]},` +
				`{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{\"city\":\"Oslo\"}"},` +
				`{"type":"function_call_output","call_id":"c1","output":"sunny"}]}`,
			func(m map[string]any) float64 { return m["usage"].(map[string]any)["input_tokens"].(float64) }},
		"messages": {"/v1/messages/count_tokens",
			`{"model":"core-2-5-mini","max_tokens":16,"tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}],"messages":[` +
				`{"role":"user","content":"Weather in Oslo?"},` +
				`{"role":"assistant","content":[{"type":"thinking","thinking":"` + reasoning + `","signature":"s"},{"type":"tool_use","id":"c1","name":"get_weather","input":{"city":"Oslo"}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"sunny"}]}]}`,
			func(m map[string]any) float64 { return m["input_tokens"].(float64) }},
	} {
		t.Run(name, func(t *testing.T) {
			without := strings.Replace(c.with, reasoning, "", 1)
			if name == "responses" {
				without = strings.Replace(c.with, `{"type":"reasoning","summary":[{"type":"summary_text","text":"`+reasoning+`"}]},`, "", 1)
			}
			with, plain := c.count(post(t, c.path, c.with)), c.count(post(t, c.path, without))
			// The reasoning is 17 words: well over 10 tokens.
			if with < plain+10 {
				t.Errorf("prompt of %v tokens with the reasoning, %v without: it was not rendered", with, plain)
			}
		})
	}
}
