package formats_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/chat"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/formats/messages"
	"github.com/inferkit/inferkit/formats/responses"
)

// TestValidation checks that each rule gives a 400 naming the parameter.
func TestValidation(t *testing.T) {
	chatOf := func(extra string) string {
		return `{"model":"m","messages":[{"role":"user","content":"hi"}]` + extra + `}`
	}
	msgs := func(extra string) string {
		return `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]` + extra + `}`
	}
	resp := func(extra string) string { return `{"model":"m","input":"hi"` + extra + `}` }
	long := strings.Repeat("x", 65)
	cases := []struct {
		name  string
		parse func([]byte) (formats.Request, error)
		body  string
		param string
	}{
		{"malformed", chat.Parse, `{"model":`, ""},
		{"empty body", chat.Parse, ``, ""},
		{"not an object", chat.Parse, `[1]`, ""},
		{"chat model missing", chat.Parse, `{"messages":[{"role":"user","content":"hi"}]}`, "model"},
		{"chat model type", chat.Parse, `{"model":5,"messages":[]}`, "model"},
		{"chat messages missing", chat.Parse, `{"model":"m"}`, "messages"},
		{"chat messages empty", chat.Parse, `{"model":"m","messages":[]}`, "messages"},
		{"chat messages type", chat.Parse, `{"model":"m","messages":{"role":"user"}}`, "messages"},
		{"chat content type", chat.Parse, `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":5}]}`, "messages[1].content"},
		{"chat content part type", chat.Parse, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":7}]}]}`, "messages[0].content[0].text"},
		{"chat content missing", chat.Parse, `{"model":"m","messages":[{"role":"user"}]}`, "messages[0].content"},
		{"chat part kind", chat.Parse, `{"model":"m","messages":[{"role":"user","content":[{"type":"audio"}]}]}`, "messages[0].content[0].type"},
		{"chat ftp image", chat.Parse, `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x/y.png"}}]}]}`, "messages[0].content[0].image_url.url"},
		{"chat image URL without host", chat.Parse, `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https:///y.png"}}]}]}`, "messages[0].content[0].image_url.url"},
		{"chat role", chat.Parse, `{"model":"m","messages":[{"role":"robot","content":"hi"}]}`, "messages[0].role"},
		{"chat tool message id", chat.Parse, `{"model":"m","messages":[{"role":"tool","content":"42"}]}`, "messages[0].tool_call_id"},
		{"chat temperature high", chat.Parse, chatOf(`,"temperature":2.5`), "temperature"},
		{"chat temperature low", chat.Parse, chatOf(`,"temperature":-0.1`), "temperature"},
		{"chat temperature type", chat.Parse, chatOf(`,"temperature":"hot"`), "temperature"},
		{"chat top_p", chat.Parse, chatOf(`,"top_p":1.5`), "top_p"},
		{"chat top_k", chat.Parse, chatOf(`,"top_k":-1`), "top_k"},
		{"chat max_new_tokens", chat.Parse, chatOf(`,"max_new_tokens":0`), "max_new_tokens"},
		{"chat max_tokens", chat.Parse, chatOf(`,"max_tokens":-5`), "max_tokens"},
		{"chat max_completion_tokens type", chat.Parse, chatOf(`,"max_completion_tokens":1.5`), "max_completion_tokens"},
		{"chat effort", chat.Parse, chatOf(`,"reasoning":{"effort":"max"}`), "reasoning.effort"},
		{"chat reasoning_effort", chat.Parse, chatOf(`,"reasoning_effort":"max"`), "reasoning_effort"},
		{"chat summary", chat.Parse, chatOf(`,"reasoning":{"summary":"long"}`), "reasoning.summary"},
		{"chat response_format", chat.Parse, chatOf(`,"response_format":{"type":"xml"}`), "response_format.type"},
		{"chat json_schema missing", chat.Parse, chatOf(`,"response_format":{"type":"json_schema"}`), "response_format.json_schema"},
		{"chat n 0", chat.Parse, chatOf(`,"n":0`), "n"},
		{"chat web search context size", chat.Parse, chatOf(`,"web_search_options":{"search_context_size":"huge"}`), "web_search_options.search_context_size"},
		{"chat web search location type", chat.Parse, chatOf(`,"web_search_options":{"user_location":{"type":"exact"}}`), "web_search_options.user_location.type"},
		{"chat web search country", chat.Parse, chatOf(`,"web_search_options":{"user_location":{"type":"approximate","approximate":{"country":"United States"}}}`), "web_search_options.user_location.approximate.country"},
		{"chat n 17", chat.Parse, chatOf(`,"n":17`), "n"},
		{"chat top_logprobs 21", chat.Parse, chatOf(`,"logprobs":true,"top_logprobs":21`), "top_logprobs"},
		{"chat top_logprobs -1", chat.Parse, chatOf(`,"logprobs":true,"top_logprobs":-1`), "top_logprobs"},
		{"chat top_logprobs without logprobs", chat.Parse, chatOf(`,"top_logprobs":2`), "top_logprobs"},
		{"chat stop type", chat.Parse, chatOf(`,"stop":5`), "stop"},
		{"chat stop empty", chat.Parse, chatOf(`,"stop":["a",""]`), "stop[1]"},
		{"chat penalty", chat.Parse, chatOf(`,"frequency_penalty":3`), "frequency_penalty"},
		{"chat tool type", chat.Parse, chatOf(`,"tools":[{"type":"web","function":{"name":"f"}}]`), "tools[0].type"},
		{"chat tool name chars", chat.Parse, chatOf(`,"tools":[{"type":"function","function":{"name":"get weather"}}]`), "tools[0].function.name"},
		{"chat tool name length", chat.Parse, chatOf(`,"tools":[{"type":"function","function":{"name":"` + long + `"}}]`), "tools[0].function.name"},
		{"chat tool parameters", chat.Parse, chatOf(`,"tools":[{"type":"function","function":{"name":"f","parameters":[1]}}]`), "tools[0].function.parameters"},
		{"chat tool_choice value", chat.Parse, chatOf(`,"tool_choice":"sometimes"`), "tool_choice"},
		{"chat tool_choice unknown tool", chat.Parse, chatOf(`,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}`), "tool_choice"},
		{"chat tool_choice required no tools", chat.Parse, chatOf(`,"tool_choice":"required"`), "tool_choice"},
		{"chat tool_choice type", chat.Parse, chatOf(`,"tool_choice":3`), "tool_choice"},
		{"chat metadata", chat.Parse, chatOf(`,"metadata":{"a":"b"}`), "metadata"},
		{"chat store", chat.Parse, chatOf(`,"store":true`), "store"},

		{"messages role", messages.Parse, `{"model":"m","messages":[{"role":"system","content":"hi"}]}`, "messages[0].role"},
		{"messages content type", messages.Parse, `{"model":"m","messages":[{"role":"user","content":7}]}`, "messages[0].content"},
		{"messages block type", messages.Parse, `{"model":"m","messages":[{"role":"user","content":[{"type":"video"}]}]}`, "messages[0].content[0].type"},
		{"messages block text type", messages.Parse, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":true}]}]}`, "messages[0].content[0].text"},
		{"messages system type", messages.Parse, msgs(`,"system":[{"type":"image"}]`), "system[0].type"},
		{"messages system value", messages.Parse, msgs(`,"system":5`), "system"},
		{"messages system text type", messages.Parse, msgs(`,"system":[{"type":"text","text":1}]`), "system[0].text"},
		{"messages max_tokens", messages.Parse, msgs(`,"max_tokens":0`), "max_tokens"},
		{"messages thinking type", messages.Parse, msgs(`,"thinking":{"type":"maybe"}`), "thinking.type"},
		{"messages budget", messages.Parse, msgs(`,"thinking":{"type":"enabled","budget_tokens":0}`), "thinking.budget_tokens"},
		{"messages temperature", messages.Parse, msgs(`,"temperature":3`), "temperature"},
		{"messages top_p", messages.Parse, msgs(`,"top_p":-1`), "top_p"},
		{"messages tool name", messages.Parse, msgs(`,"tools":[{"name":"a.b"}]`), "tools[0].name"},
		{"messages tool_choice", messages.Parse, msgs(`,"tool_choice":{"type":"some"}`), "tool_choice.type"},
		{"messages stop_sequences type", messages.Parse, msgs(`,"stop_sequences":"x"`), "stop_sequences"},
		{"messages image file", messages.Parse, `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]}`, "messages[0].content[0].source.type"},
		{"messages image url", messages.Parse, `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"file:///etc/passwd"}}]}]}`, "messages[0].content[0].source.url"},
		{"messages tool_result role", messages.Parse, `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"t"}]}]}`, "messages[0].content[0].type"},

		{"responses input missing", responses.Parse, `{"model":"m"}`, "input"},
		{"responses input type", responses.Parse, `{"model":"m","input":5}`, "input"},
		{"responses input empty", responses.Parse, `{"model":"m","input":[]}`, "input"},
		{"responses role", responses.Parse, `{"model":"m","input":[{"role":"tool","content":"x"}]}`, "input[0].role"},
		{"responses content type", responses.Parse, `{"model":"m","input":[{"role":"user","content":"a"},{"role":"user","content":4}]}`, "input[1].content"},
		{"responses part text type", responses.Parse, `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":4}]}]}`, "input[0].content[0].text"},
		{"responses part type", responses.Parse, `{"model":"m","input":[{"role":"user","content":[{"type":"input_file"}]}]}`, "input[0].content[0].type"},
		{"responses image", responses.Parse, `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"gopher://x"}]}]}`, "input[0].content[0].image_url"},
		{"responses role type", responses.Parse, `{"model":"m","input":[{"role":1,"content":"x"}]}`, "input[0].role"},
		{"responses max_output_tokens", responses.Parse, resp(`,"max_output_tokens":0`), "max_output_tokens"},
		{"responses effort", responses.Parse, resp(`,"reasoning":{"effort":"extreme"}`), "reasoning.effort"},
		{"responses summary", responses.Parse, resp(`,"reasoning":{"summary":"all"}`), "reasoning.summary"},
		{"responses temperature", responses.Parse, resp(`,"temperature":2.01`), "temperature"},
		{"responses top_p", responses.Parse, resp(`,"top_p":1.01`), "top_p"},
		{"responses format", responses.Parse, resp(`,"text":{"format":{"type":"yaml"}}`), "text.format.type"},
		{"responses schema name", responses.Parse, resp(`,"text":{"format":{"type":"json_schema","name":"a b","schema":{}}}`), "text.format.name"},
		{"responses schema missing", responses.Parse, resp(`,"text":{"format":{"type":"json_schema","name":"a"}}`), "text.format.schema"},
		{"responses verbosity", responses.Parse, resp(`,"text":{"verbosity":"loud"}`), "text.verbosity"},
		{"responses store type", responses.Parse, resp(`,"store":"yes"`), "store"},
		{"responses metadata pairs", responses.Parse, resp(`,"metadata":{` + pairs(17) + `}`), "metadata"},
		{"responses metadata key", responses.Parse, resp(`,"metadata":{"` + long + `":"v"}`), "metadata"},
		{"responses metadata value", responses.Parse, resp(`,"metadata":{"k":"` + strings.Repeat("v", 513) + `"}`), "metadata.k"},
		{"responses tool type", responses.Parse, resp(`,"tools":[{"type":"file_search"}]`), "tools[0].type"},
		{"responses tool name", responses.Parse, resp(`,"tools":[{"type":"function","name":"` + long + `"}]`), "tools[0].name"},
		{"responses tool_choice", responses.Parse, resp(`,"tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}`), "tool_choice"},
		{"responses function_call id", responses.Parse, `{"model":"m","input":[{"type":"function_call","name":"f"}]}`, "input[0].call_id"},
		{"responses background without store", responses.Parse, resp(`,"background":true,"store":false`), "background"},

		// Tools, tool results and output formats.
		{"chat verbosity", chat.Parse, chatOf(`,"verbosity":"loud"`), "verbosity"},
		{"chat tool_calls on a user message", chat.Parse, `{"model":"m","messages":[{"role":"user","content":"x","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, "messages[0].tool_calls"},
		{"chat tool call name", chat.Parse, `{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"","arguments":"{}"}}]}]}`, "messages[0].tool_calls[0].function.name"},
		{"chat tool_choice function name missing", chat.Parse, chatOf(`,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{}}`), "tool_choice.name"},
		{"chat json_schema name", chat.Parse, chatOf(`,"response_format":{"type":"json_schema","json_schema":{"name":"a b","schema":{}}}`), "response_format.json_schema.name"},
		{"chat json_schema schema", chat.Parse, chatOf(`,"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":"x"}}`), "response_format.json_schema.schema"},
		{"messages tool_choice unknown tool", messages.Parse, msgs(`,"tools":[{"name":"f"}],"tool_choice":{"type":"tool","name":"g"}`), "tool_choice"},
		{"messages tool_choice any without tools", messages.Parse, msgs(`,"tool_choice":{"type":"any"}`), "tool_choice"},
		{"messages tool input_schema", messages.Parse, msgs(`,"tools":[{"name":"f","input_schema":[]}]`), "tools[0].input_schema"},
		{"messages tool_use id", messages.Parse, `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","name":"f","input":{}}]}]}`, "messages[0].content[0].id"},
		{"messages tool_use input", messages.Parse, `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":[1]}]}]}`, "messages[0].content[0].input"},
		{"messages tool_use role", messages.Parse, `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}]}`, "messages[0].content[0].type"},
		{"messages tool_result id", messages.Parse, `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","content":"x"}]}]}`, "messages[0].content[0].tool_use_id"},
		{"messages tool_result content", messages.Parse, `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image"}]}]}]}`, "messages[0].content[0].content[0].type"},
		{"messages output_config effort", messages.Parse, msgs(`,"output_config":{"effort":"extreme"}`), "output_config.effort"},
		{"messages output_config format", messages.Parse, msgs(`,"output_config":{"format":{"type":"regex"}}`), "output_config.format.type"},
		{"messages output_config schema", messages.Parse, msgs(`,"output_config":{"format":{"type":"json_schema"}}`), "output_config.format.schema"},
		{"responses tool_choice required without tools", responses.Parse, resp(`,"tool_choice":"required"`), "tool_choice"},
		{"responses tool parameters", responses.Parse, resp(`,"tools":[{"type":"function","name":"f","parameters":true}]`), "tools[0].parameters"},
		{"responses function_call name", responses.Parse, `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"a b"}]}`, "input[0].name"},
		{"responses function_call_output id", responses.Parse, `{"model":"m","input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id"},
		{"responses function_call_output type", responses.Parse, `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":5}]}`, "input[0].output"},
		{"responses function_call_output part", responses.Parse, `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_file"}]}]}`, "input[0].output[0].type"},
		{"responses item type", responses.Parse, `{"model":"m","input":[{"type":"file_search_call"}]}`, "input[0].type"},
		{"responses schema not an object", responses.Parse, resp(`,"text":{"format":{"type":"json_schema","name":"a","schema":[1]}}`), "text.format.schema"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.parse([]byte(tc.body))
			var re *formats.RequestError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a *RequestError", err)
			}
			if re.Param != tc.param {
				t.Errorf("param = %q, want %q (%s)", re.Param, tc.param, re.Message)
			}
			if tc.param != "" && !strings.Contains(re.Message, tc.param) && !strings.Contains(re.Message, strings.SplitN(tc.param, ".", 2)[0]) {
				t.Errorf("message %q does not name %q", re.Message, tc.param)
			}
			e := formats.ErrorOf(err)
			if e.Status != http.StatusBadRequest || e.Type(formats.StyleChat) != "invalid_request_error" || e.Type(formats.StyleMessages) != "invalid_request_error" {
				t.Errorf("maps to %d %s", e.Status, e.Type(formats.StyleChat))
			}
		})
	}
}

// pairs returns n JSON object members.
func pairs(n int) string {
	var b []string
	for i := range n {
		b = append(b, `"k`+string(rune('a'+i))+`":"v"`)
	}
	return strings.Join(b, ",")
}

// TestAccepted checks requests that carry the SDKs' extra fields and the
// spec's alternatives.
func TestAccepted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parse func([]byte) (formats.Request, error)
		body  string
		check func(formats.Request) bool
	}{
		{"chat defaults", chat.Parse, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, func(r formats.Request) bool {
			return r.MaxTokens == 2048 && r.Reasoning.Effort == "high" && *r.Temperature == 0.1 && *r.TopP == 1 && r.Format.Type == "text" && r.ToolChoice.Mode == "auto"
		}},
		{"chat max_tokens", chat.Parse, `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":7}`, func(r formats.Request) bool { return r.MaxTokens == 7 }},
		{"chat max_new_tokens wins", chat.Parse, `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":7,"max_new_tokens":9}`, func(r formats.Request) bool { return r.MaxTokens == 9 }},
		{"chat extras", chat.Parse, `{"model":"m","messages":[{"role":"developer","content":"x"},{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"42"}],"stop":"END","seed":1,"top_k":5,"n":1,"user":"u","parallel_tool_calls":false,"stream":true,"stream_options":{"include_usage":true},"response_format":{"type":"json"},"service_tier":"auto","temperature":0}`,
			func(r formats.Request) bool {
				return r.Stop[0] == "END" && *r.Seed == 1 && *r.TopK == 5 && r.Stream && r.IncludeUsage && r.Format.Type == "json" &&
					len(r.Messages) == 4 && string(r.Messages[1].Content[1].Image[:4]) == "\x89PNG" && r.Messages[2].ToolCalls[0].Name == "f" &&
					r.Messages[3].ToolCallID == "c1" && *r.Temperature == 0
			}},
		{"messages defaults", messages.Parse, `{"model":"m","messages":[{"role":"user","content":"hi"}],"system":"Be brief."}`, func(r formats.Request) bool {
			return r.MaxTokens == 512 && r.Reasoning.Effort == "high" && r.Reasoning.BudgetTokens == 8192 && r.Instructions == "Be brief." && *r.Temperature == 0.1 && *r.TopP == 1
		}},
		{"messages thinking off", messages.Parse, `{"model":"m","messages":[{"role":"user","content":"hi"}],"thinking":{"type":"disabled"}}`, func(r formats.Request) bool { return !r.Reasoning.Thinking() }},
		{"messages tool_result", messages.Parse, `{"model":"m","messages":[{"role":"user","content":"w?"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{"a":1}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"sunny"},{"type":"text","text":"so?"}]}]}`,
			func(r formats.Request) bool {
				return len(r.Messages) == 4 && r.Messages[1].ToolCalls[0].Arguments == `{"a":1}` && r.Messages[2].Role == "tool" && r.Messages[2].ToolCallID == "t1" && wire.JoinText(r.Messages[3].Content) == "so?"
			}},
		{"responses defaults", responses.Parse, `{"model":"m","input":"hi"}`, func(r formats.Request) bool {
			return r.MaxTokens == 512 && r.Reasoning.Effort == "medium" && r.Store && *r.Temperature == 0.1 && *r.TopP == 1 && r.Messages[0].Role == "user"
		}},
		{"responses items", responses.Parse, `{"model":"m","input":[{"role":"developer","content":"x"},{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"hmm"}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"yo","annotations":[]}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"1"}],"store":false,"include":["reasoning.encrypted_content"],"truncation":"disabled","user":"u"}`,
			func(r formats.Request) bool {
				return len(r.Messages) == 4 && r.Messages[0].Role == "system" && r.Messages[2].Reasoning == "hmm" && r.Messages[2].ToolCalls[0].ID == "c" && r.Messages[3].Role == "tool" && !r.Store
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.parse([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(r) {
				t.Errorf("request = %+v", r)
			}
		})
	}
}
