package formats

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestValidation checks that each rule gives a 400 naming the parameter.
func TestValidation(t *testing.T) {
	chat := func(extra string) string {
		return `{"model":"m","messages":[{"role":"user","content":"hi"}]` + extra + `}`
	}
	msgs := func(extra string) string {
		return `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]` + extra + `}`
	}
	resp := func(extra string) string { return `{"model":"m","input":"hi"` + extra + `}` }
	long := strings.Repeat("x", 65)
	cases := []struct {
		name  string
		parse func([]byte) (Request, error)
		body  string
		param string
	}{
		{"malformed", ParseChatRequest, `{"model":`, ""},
		{"empty body", ParseChatRequest, ``, ""},
		{"not an object", ParseChatRequest, `[1]`, ""},
		{"chat model missing", ParseChatRequest, `{"messages":[{"role":"user","content":"hi"}]}`, "model"},
		{"chat model type", ParseChatRequest, `{"model":5,"messages":[]}`, "model"},
		{"chat messages missing", ParseChatRequest, `{"model":"m"}`, "messages"},
		{"chat messages empty", ParseChatRequest, `{"model":"m","messages":[]}`, "messages"},
		{"chat messages type", ParseChatRequest, `{"model":"m","messages":{"role":"user"}}`, "messages"},
		{"chat content type", ParseChatRequest, `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":5}]}`, "messages[1].content"},
		{"chat content part type", ParseChatRequest, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":7}]}]}`, "messages[0].content[0].text"},
		{"chat content missing", ParseChatRequest, `{"model":"m","messages":[{"role":"user"}]}`, "messages[0].content"},
		{"chat part kind", ParseChatRequest, `{"model":"m","messages":[{"role":"user","content":[{"type":"audio"}]}]}`, "messages[0].content[0].type"},
		{"chat ftp image", ParseChatRequest, `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x/y.png"}}]}]}`, "messages[0].content[0].image_url.url"},
		{"chat image URL without host", ParseChatRequest, `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https:///y.png"}}]}]}`, "messages[0].content[0].image_url.url"},
		{"chat role", ParseChatRequest, `{"model":"m","messages":[{"role":"robot","content":"hi"}]}`, "messages[0].role"},
		{"chat tool message id", ParseChatRequest, `{"model":"m","messages":[{"role":"tool","content":"42"}]}`, "messages[0].tool_call_id"},
		{"chat temperature high", ParseChatRequest, chat(`,"temperature":2.5`), "temperature"},
		{"chat temperature low", ParseChatRequest, chat(`,"temperature":-0.1`), "temperature"},
		{"chat temperature type", ParseChatRequest, chat(`,"temperature":"hot"`), "temperature"},
		{"chat top_p", ParseChatRequest, chat(`,"top_p":1.5`), "top_p"},
		{"chat top_k", ParseChatRequest, chat(`,"top_k":-1`), "top_k"},
		{"chat max_new_tokens", ParseChatRequest, chat(`,"max_new_tokens":0`), "max_new_tokens"},
		{"chat max_tokens", ParseChatRequest, chat(`,"max_tokens":-5`), "max_tokens"},
		{"chat max_completion_tokens type", ParseChatRequest, chat(`,"max_completion_tokens":1.5`), "max_completion_tokens"},
		{"chat effort", ParseChatRequest, chat(`,"reasoning":{"effort":"max"}`), "reasoning.effort"},
		{"chat reasoning_effort", ParseChatRequest, chat(`,"reasoning_effort":"max"`), "reasoning_effort"},
		{"chat summary", ParseChatRequest, chat(`,"reasoning":{"summary":"long"}`), "reasoning.summary"},
		{"chat response_format", ParseChatRequest, chat(`,"response_format":{"type":"xml"}`), "response_format.type"},
		{"chat json_schema missing", ParseChatRequest, chat(`,"response_format":{"type":"json_schema"}`), "response_format.json_schema"},
		{"chat n 0", ParseChatRequest, chat(`,"n":0`), "n"},
		{"chat web search context size", ParseChatRequest, chat(`,"web_search_options":{"search_context_size":"huge"}`), "web_search_options.search_context_size"},
		{"chat web search location type", ParseChatRequest, chat(`,"web_search_options":{"user_location":{"type":"exact"}}`), "web_search_options.user_location.type"},
		{"chat web search country", ParseChatRequest, chat(`,"web_search_options":{"user_location":{"type":"approximate","approximate":{"country":"United States"}}}`), "web_search_options.user_location.approximate.country"},
		{"chat n 17", ParseChatRequest, chat(`,"n":17`), "n"},
		{"chat top_logprobs 21", ParseChatRequest, chat(`,"logprobs":true,"top_logprobs":21`), "top_logprobs"},
		{"chat top_logprobs -1", ParseChatRequest, chat(`,"logprobs":true,"top_logprobs":-1`), "top_logprobs"},
		{"chat top_logprobs without logprobs", ParseChatRequest, chat(`,"top_logprobs":2`), "top_logprobs"},
		{"chat stop type", ParseChatRequest, chat(`,"stop":5`), "stop"},
		{"chat stop empty", ParseChatRequest, chat(`,"stop":["a",""]`), "stop[1]"},
		{"chat penalty", ParseChatRequest, chat(`,"frequency_penalty":3`), "frequency_penalty"},
		{"chat tool type", ParseChatRequest, chat(`,"tools":[{"type":"web","function":{"name":"f"}}]`), "tools[0].type"},
		{"chat tool name chars", ParseChatRequest, chat(`,"tools":[{"type":"function","function":{"name":"get weather"}}]`), "tools[0].function.name"},
		{"chat tool name length", ParseChatRequest, chat(`,"tools":[{"type":"function","function":{"name":"` + long + `"}}]`), "tools[0].function.name"},
		{"chat tool parameters", ParseChatRequest, chat(`,"tools":[{"type":"function","function":{"name":"f","parameters":[1]}}]`), "tools[0].function.parameters"},
		{"chat tool_choice value", ParseChatRequest, chat(`,"tool_choice":"sometimes"`), "tool_choice"},
		{"chat tool_choice unknown tool", ParseChatRequest, chat(`,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}`), "tool_choice"},
		{"chat tool_choice required no tools", ParseChatRequest, chat(`,"tool_choice":"required"`), "tool_choice"},
		{"chat tool_choice type", ParseChatRequest, chat(`,"tool_choice":3`), "tool_choice"},
		{"chat metadata pairs", ParseChatRequest, chat(`,"metadata":{` + pairs(17) + `}`), "metadata"},
		{"chat metadata type", ParseChatRequest, chat(`,"metadata":{"a":1}`), "metadata.a"},

		{"messages role", ParseMessagesRequest, `{"model":"m","messages":[{"role":"system","content":"hi"}]}`, "messages[0].role"},
		{"messages content type", ParseMessagesRequest, `{"model":"m","messages":[{"role":"user","content":7}]}`, "messages[0].content"},
		{"messages block type", ParseMessagesRequest, `{"model":"m","messages":[{"role":"user","content":[{"type":"video"}]}]}`, "messages[0].content[0].type"},
		{"messages block text type", ParseMessagesRequest, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":true}]}]}`, "messages[0].content[0].text"},
		{"messages system type", ParseMessagesRequest, msgs(`,"system":[{"type":"image"}]`), "system[0].type"},
		{"messages system value", ParseMessagesRequest, msgs(`,"system":5`), "system"},
		{"messages system text type", ParseMessagesRequest, msgs(`,"system":[{"type":"text","text":1}]`), "system[0].text"},
		{"messages max_tokens", ParseMessagesRequest, msgs(`,"max_tokens":0`), "max_tokens"},
		{"messages thinking type", ParseMessagesRequest, msgs(`,"thinking":{"type":"maybe"}`), "thinking.type"},
		{"messages budget", ParseMessagesRequest, msgs(`,"thinking":{"type":"enabled","budget_tokens":0}`), "thinking.budget_tokens"},
		{"messages temperature", ParseMessagesRequest, msgs(`,"temperature":3`), "temperature"},
		{"messages top_p", ParseMessagesRequest, msgs(`,"top_p":-1`), "top_p"},
		{"messages tool name", ParseMessagesRequest, msgs(`,"tools":[{"name":"a.b"}]`), "tools[0].name"},
		{"messages tool_choice", ParseMessagesRequest, msgs(`,"tool_choice":{"type":"some"}`), "tool_choice.type"},
		{"messages stop_sequences type", ParseMessagesRequest, msgs(`,"stop_sequences":"x"`), "stop_sequences"},
		{"messages image file", ParseMessagesRequest, `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]}`, "messages[0].content[0].source.type"},
		{"messages image url", ParseMessagesRequest, `{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"file:///etc/passwd"}}]}]}`, "messages[0].content[0].source.url"},
		{"messages tool_result role", ParseMessagesRequest, `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"t"}]}]}`, "messages[0].content[0].type"},

		{"responses input missing", ParseResponsesRequest, `{"model":"m"}`, "input"},
		{"responses input type", ParseResponsesRequest, `{"model":"m","input":5}`, "input"},
		{"responses input empty", ParseResponsesRequest, `{"model":"m","input":[]}`, "input"},
		{"responses role", ParseResponsesRequest, `{"model":"m","input":[{"role":"tool","content":"x"}]}`, "input[0].role"},
		{"responses content type", ParseResponsesRequest, `{"model":"m","input":[{"role":"user","content":"a"},{"role":"user","content":4}]}`, "input[1].content"},
		{"responses part text type", ParseResponsesRequest, `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":4}]}]}`, "input[0].content[0].text"},
		{"responses part type", ParseResponsesRequest, `{"model":"m","input":[{"role":"user","content":[{"type":"input_file"}]}]}`, "input[0].content[0].type"},
		{"responses image", ParseResponsesRequest, `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"gopher://x"}]}]}`, "input[0].content[0].image_url"},
		{"responses role type", ParseResponsesRequest, `{"model":"m","input":[{"role":1,"content":"x"}]}`, "input[0].role"},
		{"responses max_output_tokens", ParseResponsesRequest, resp(`,"max_output_tokens":0`), "max_output_tokens"},
		{"responses effort", ParseResponsesRequest, resp(`,"reasoning":{"effort":"extreme"}`), "reasoning.effort"},
		{"responses summary", ParseResponsesRequest, resp(`,"reasoning":{"summary":"all"}`), "reasoning.summary"},
		{"responses temperature", ParseResponsesRequest, resp(`,"temperature":2.01`), "temperature"},
		{"responses top_p", ParseResponsesRequest, resp(`,"top_p":1.01`), "top_p"},
		{"responses format", ParseResponsesRequest, resp(`,"text":{"format":{"type":"yaml"}}`), "text.format.type"},
		{"responses schema name", ParseResponsesRequest, resp(`,"text":{"format":{"type":"json_schema","schema":{}}}`), "text.format.name"},
		{"responses schema missing", ParseResponsesRequest, resp(`,"text":{"format":{"type":"json_schema","name":"a"}}`), "text.format.schema"},
		{"responses verbosity", ParseResponsesRequest, resp(`,"text":{"verbosity":"loud"}`), "text.verbosity"},
		{"responses store type", ParseResponsesRequest, resp(`,"store":"yes"`), "store"},
		{"responses metadata pairs", ParseResponsesRequest, resp(`,"metadata":{` + pairs(17) + `}`), "metadata"},
		{"responses metadata key", ParseResponsesRequest, resp(`,"metadata":{"` + long + `":"v"}`), "metadata"},
		{"responses metadata value", ParseResponsesRequest, resp(`,"metadata":{"k":"` + strings.Repeat("v", 513) + `"}`), "metadata.k"},
		{"responses tool type", ParseResponsesRequest, resp(`,"tools":[{"type":"file_search"}]`), "tools[0].type"},
		{"responses tool name", ParseResponsesRequest, resp(`,"tools":[{"type":"function","name":"` + long + `"}]`), "tools[0].name"},
		{"responses tool_choice", ParseResponsesRequest, resp(`,"tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}`), "tool_choice"},
		{"responses function_call id", ParseResponsesRequest, `{"model":"m","input":[{"type":"function_call","name":"f"}]}`, "input[0].call_id"},
		{"responses background", ParseResponsesRequest, resp(`,"background":true`), "background"},

		// Tools, tool results and output formats.
		{"chat verbosity", ParseChatRequest, chat(`,"verbosity":"loud"`), "verbosity"},
		{"chat tool_calls on a user message", ParseChatRequest, `{"model":"m","messages":[{"role":"user","content":"x","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, "messages[0].tool_calls"},
		{"chat tool call name", ParseChatRequest, `{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"","arguments":"{}"}}]}]}`, "messages[0].tool_calls[0].function.name"},
		{"chat tool_choice function name missing", ParseChatRequest, chat(`,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{}}`), "tool_choice.name"},
		{"chat json_schema name", ParseChatRequest, chat(`,"response_format":{"type":"json_schema","json_schema":{"name":"a b","schema":{}}}`), "response_format.json_schema.name"},
		{"chat json_schema schema", ParseChatRequest, chat(`,"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":"x"}}`), "response_format.json_schema.schema"},
		{"messages tool_choice unknown tool", ParseMessagesRequest, msgs(`,"tools":[{"name":"f"}],"tool_choice":{"type":"tool","name":"g"}`), "tool_choice"},
		{"messages tool_choice any without tools", ParseMessagesRequest, msgs(`,"tool_choice":{"type":"any"}`), "tool_choice"},
		{"messages tool input_schema", ParseMessagesRequest, msgs(`,"tools":[{"name":"f","input_schema":[]}]`), "tools[0].input_schema"},
		{"messages tool_use id", ParseMessagesRequest, `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","name":"f","input":{}}]}]}`, "messages[0].content[0].id"},
		{"messages tool_use input", ParseMessagesRequest, `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":[1]}]}]}`, "messages[0].content[0].input"},
		{"messages tool_use role", ParseMessagesRequest, `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}]}`, "messages[0].content[0].type"},
		{"messages tool_result id", ParseMessagesRequest, `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","content":"x"}]}]}`, "messages[0].content[0].tool_use_id"},
		{"messages tool_result content", ParseMessagesRequest, `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image"}]}]}]}`, "messages[0].content[0].content[0].type"},
		{"messages output_config effort", ParseMessagesRequest, msgs(`,"output_config":{"effort":"extreme"}`), "output_config.effort"},
		{"messages output_config format", ParseMessagesRequest, msgs(`,"output_config":{"format":{"type":"regex"}}`), "output_config.format.type"},
		{"messages output_config schema", ParseMessagesRequest, msgs(`,"output_config":{"format":{"type":"json_schema"}}`), "output_config.format.schema"},
		{"responses tool_choice required without tools", ParseResponsesRequest, resp(`,"tool_choice":"required"`), "tool_choice"},
		{"responses tool parameters", ParseResponsesRequest, resp(`,"tools":[{"type":"function","name":"f","parameters":true}]`), "tools[0].parameters"},
		{"responses function_call name", ParseResponsesRequest, `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"a b"}]}`, "input[0].name"},
		{"responses function_call_output id", ParseResponsesRequest, `{"model":"m","input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id"},
		{"responses function_call_output type", ParseResponsesRequest, `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":5}]}`, "input[0].output"},
		{"responses function_call_output part", ParseResponsesRequest, `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_file"}]}]}`, "input[0].output[0].type"},
		{"responses item type", ParseResponsesRequest, `{"model":"m","input":[{"type":"file_search_call"}]}`, "input[0].type"},
		{"responses schema not an object", ParseResponsesRequest, resp(`,"text":{"format":{"type":"json_schema","name":"a","schema":[1]}}`), "text.format.schema"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.parse([]byte(tc.body))
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a *RequestError", err)
			}
			if re.Param != tc.param {
				t.Errorf("param = %q, want %q (%s)", re.Param, tc.param, re.Message)
			}
			if tc.param != "" && !strings.Contains(re.Message, tc.param) && !strings.Contains(re.Message, strings.SplitN(tc.param, ".", 2)[0]) {
				t.Errorf("message %q does not name %q", re.Message, tc.param)
			}
			e := ErrorOf(err)
			if e.Status != http.StatusBadRequest || e.Type(StyleChat) != "invalid_request_error" || e.Type(StyleMessages) != "invalid_request_error" {
				t.Errorf("maps to %d %s", e.Status, e.Type(StyleChat))
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
		parse func([]byte) (Request, error)
		body  string
		check func(Request) bool
	}{
		{"chat defaults", ParseChatRequest, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, func(r Request) bool {
			return r.MaxTokens == 2048 && r.Reasoning.Effort == "high" && *r.Temperature == 0.1 && *r.TopP == 1 && r.Format.Type == "text" && r.ToolChoice.Mode == "auto"
		}},
		{"chat max_tokens", ParseChatRequest, `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":7}`, func(r Request) bool { return r.MaxTokens == 7 }},
		{"chat max_new_tokens wins", ParseChatRequest, `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":7,"max_new_tokens":9}`, func(r Request) bool { return r.MaxTokens == 9 }},
		{"chat extras", ParseChatRequest, `{"model":"m","messages":[{"role":"developer","content":"x"},{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"42"}],"stop":"END","seed":1,"top_k":5,"n":1,"user":"u","parallel_tool_calls":false,"stream":true,"stream_options":{"include_usage":true},"response_format":{"type":"json"},"service_tier":"auto","temperature":0}`,
			func(r Request) bool {
				return r.Stop[0] == "END" && *r.Seed == 1 && *r.TopK == 5 && r.Stream && r.IncludeUsage && r.Format.Type == "json" &&
					len(r.Messages) == 4 && string(r.Messages[1].Content[1].Image[:4]) == "\x89PNG" && r.Messages[2].ToolCalls[0].Name == "f" &&
					r.Messages[3].ToolCallID == "c1" && *r.Temperature == 0
			}},
		{"messages defaults", ParseMessagesRequest, `{"model":"m","messages":[{"role":"user","content":"hi"}],"system":"Be brief."}`, func(r Request) bool {
			return r.MaxTokens == 512 && r.Reasoning.Effort == "high" && r.Reasoning.BudgetTokens == 8192 && r.Instructions == "Be brief." && *r.Temperature == 0.1 && *r.TopP == 1
		}},
		{"messages thinking off", ParseMessagesRequest, `{"model":"m","messages":[{"role":"user","content":"hi"}],"thinking":{"type":"disabled"}}`, func(r Request) bool { return !r.Reasoning.Thinking() }},
		{"messages tool_result", ParseMessagesRequest, `{"model":"m","messages":[{"role":"user","content":"w?"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{"a":1}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"sunny"},{"type":"text","text":"so?"}]}]}`,
			func(r Request) bool {
				return len(r.Messages) == 4 && r.Messages[1].ToolCalls[0].Arguments == `{"a":1}` && r.Messages[2].Role == "tool" && r.Messages[2].ToolCallID == "t1" && joinText(r.Messages[3].Content) == "so?"
			}},
		{"responses defaults", ParseResponsesRequest, `{"model":"m","input":"hi"}`, func(r Request) bool {
			return r.MaxTokens == 512 && r.Reasoning.Effort == "medium" && r.Store && *r.Temperature == 0.1 && *r.TopP == 1 && r.Messages[0].Role == "user"
		}},
		{"responses items", ParseResponsesRequest, `{"model":"m","input":[{"role":"developer","content":"x"},{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"hmm"}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"yo","annotations":[]}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"1"}],"store":false,"include":["reasoning.encrypted_content"],"truncation":"disabled","user":"u"}`,
			func(r Request) bool {
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
