package formats_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/chat"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/formats/messages"
	"github.com/inferkit/inferkit/formats/responses"
	"github.com/inferkit/inferkit/inference"
	"github.com/openai/openai-go/v3"
	oresponses "github.com/openai/openai-go/v3/responses"
)

// The tool calls of the goldens.
var (
	callWeather = inference.ToolCall{ID: "call_weather1", Name: "get_weather", Arguments: `{"city":"Paris"}`}
	callTime    = inference.ToolCall{ID: "call_time2", Name: "get_time", Arguments: `{"tz":"Europe/Paris"}`}

	// resToolCalls thought, then called two tools and wrote no text.
	resToolCalls = inference.Result{
		Reasoning: "The user wants the weather and the time.", Summary: "Weather and time wanted.", FinishReason: inference.FinishToolCalls, StopToken: 151645,
		ToolCalls: []inference.ToolCall{callWeather, callTime},
		Usage:     inference.Usage{PromptTokens: 120, CachedTokens: 100, CompletionTokens: 40, ReasoningTokens: 10},
		Timings:   inference.Timings{Prefill: 20 * time.Millisecond, Decode: 300 * time.Millisecond, Thinking: 75 * time.Millisecond},
	}
	// resTextToolCall wrote text, then called one tool.
	resTextToolCall = inference.Result{
		Text: "Let me check.", FinishReason: inference.FinishToolCalls, StopToken: 151645,
		ToolCalls: []inference.ToolCall{callWeather},
		Usage:     inference.Usage{PromptTokens: 110, CompletionTokens: 25},
	}
)

// toolEvents are the stream of resToolCalls: each call comes whole in
// one event, as the engine releases them.
func toolEvents() []inference.Event {
	final := resToolCalls
	return []inference.Event{
		{Reasoning: "The user wants "},
		{Reasoning: "the weather and the time."},
		{Summary: "Weather and time wanted."},
		{ToolCalls: []inference.ToolCall{callWeather}},
		{ToolCalls: []inference.ToolCall{callTime}},
		{Final: &final},
	}
}

// textToolEvents are the stream of resTextToolCall, whose call comes only
// with the final event.
func textToolEvents() []inference.Event {
	final := resTextToolCall
	return []inference.Event{{Text: "Let me "}, {Text: "check."}, {Final: &final}}
}

const (
	toolsChatBody = `{"model":"core-2-5-pro","messages":[{"role":"user","content":"Weather and time in Paris?"}],
 "tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},
  {"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"tz":{"type":"string"}}}}}],
 "tool_choice":"required","reasoning":{"summary":"auto"}}`
	toolsMessagesBody = `{"model":"core-2-5-pro","max_tokens":1024,"messages":[{"role":"user","content":"Weather and time in Paris?"}],
 "tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},
  {"name":"get_time","input_schema":{"type":"object","properties":{"tz":{"type":"string"}}}}],
 "tool_choice":{"type":"any"}}`
	toolsResponsesBody = `{"model":"core-2-5-pro","input":"Weather and time in Paris?","reasoning":{"summary":"auto"},
 "tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},
  {"type":"function","name":"get_time","parameters":{"type":"object","properties":{"tz":{"type":"string"}}}}],
 "tool_choice":"required","text":{"verbosity":"low"}}`
)

func TestGoldenToolCalls(t *testing.T) {
	var b bytes.Buffer
	req := formatstest.Parse(t, chat.Parse, toolsChatBody)
	formatstest.Golden(t, "chat_completion_tool_calls.json", formatstest.JSON(t, chat.NewCompletion(req, []inference.Result{resToolCalls}, formatstest.Options())))
	formatstest.Stream(t, chat.NewStream(&b, req, formatstest.Options()), toolEvents(), nil)
	formatstest.Golden(t, "chat_stream_tool_calls.sse", b.Bytes())
	b.Reset()
	formatstest.Stream(t, chat.NewStream(&b, req, formatstest.Options()), textToolEvents(), nil)
	formatstest.Golden(t, "chat_stream_text_tool_call.sse", b.Bytes())

	req = formatstest.Parse(t, messages.Parse, toolsMessagesBody)
	formatstest.Golden(t, "message_tool_use.json", formatstest.JSON(t, messages.NewMessage(req, resToolCalls, formatstest.Options())))
	formatstest.Golden(t, "message_text_tool_use.json", formatstest.JSON(t, messages.NewMessage(req, resTextToolCall, formatstest.Options())))
	b.Reset()
	formatstest.Stream(t, messages.NewStream(&b, req, formatstest.Options()), toolEvents(), nil)
	formatstest.Golden(t, "messages_stream_tool_use.sse", b.Bytes())
	b.Reset()
	formatstest.Stream(t, messages.NewStream(&b, req, formatstest.Options()), textToolEvents(), nil)
	formatstest.Golden(t, "messages_stream_text_tool_use.sse", b.Bytes())

	req = formatstest.Parse(t, responses.Parse, toolsResponsesBody)
	formatstest.Golden(t, "response_function_call.json", formatstest.JSON(t, responses.NewResponse(req, resToolCalls, formatstest.Options())))
	formatstest.Golden(t, "response_text_function_call.json", formatstest.JSON(t, responses.NewResponse(req, resTextToolCall, formatstest.Options())))
	b.Reset()
	formatstest.Stream(t, responses.NewStream(&b, req, formatstest.Options()), toolEvents(), nil)
	formatstest.Golden(t, "responses_stream_function_call.sse", b.Bytes())
	b.Reset()
	formatstest.Stream(t, responses.NewStream(&b, req, formatstest.Options()), textToolEvents(), nil)
	formatstest.Golden(t, "responses_stream_text_function_call.sse", b.Bytes())

	// A conversation with a tool call and its result, in every style.
	req = formatstest.Parse(t, chat.Parse, richChat)
	formatstest.Golden(t, "chat_tools_to_messages_request.json", formatstest.JSON(t, messages.NewRequest(req)))
	formatstest.Golden(t, "chat_tools_to_responses_request.json", formatstest.JSON(t, responses.NewRequest(req)))
}

// TestGoldenEngineErrors writes the engine's invalid requests as each
// style reports them: a 400 naming the style's parameter.
func TestGoldenEngineErrors(t *testing.T) {
	schemaErr := &inference.FieldError{Path: inference.Field("Format", "Schema"), Reason: "grammar: invalid grammar: the schema uses a feature the JSON Schema converter does not support, or is not a valid schema"}
	for _, f := range []struct {
		name  string
		f     formats.Style
		param string
	}{
		{"chat", formats.StyleChat, "response_format.json_schema.schema"},
		{"messages", formats.StyleMessages, "output_config.format.schema"},
		{"responses", formats.StyleResponses, "text.format.schema"},
	} {
		rec := httptest.NewRecorder()
		formats.WriteError(rec, f.f, named(f.f, schemaErr))
		got := fmt.Sprintf("HTTP %d\nContent-Type: %s\n\n%s\n", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Bytes())
		formatstest.Golden(t, "error_engine_schema_"+f.name+".txt", []byte(got))
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), f.param+": the schema uses a feature") {
			t.Errorf("%s: %s", f.name, got)
		}
	}
	for _, tc := range []struct {
		err                       error
		chat, messages, responses string
	}{
		{&inference.FieldError{Path: inference.Field("ToolChoice"), Reason: "names \"g\", which is not among the tools"}, "tool_choice", "tool_choice", "tool_choice"},
		{&inference.FieldError{Path: inference.Field("Tools").At(1).Dot("Parameters"), Reason: "invalid character 'x'"}, "tools[1].function.parameters", "tools[1].input_schema", "tools[1].parameters"},
		{&inference.FieldError{Path: inference.Field("Tools"), Reason: "parameters: grammar: invalid grammar: bad"}, "tools", "tools", "tools"},
		{&inference.FieldError{Path: inference.Field("Messages").At(2), Reason: "this model does not read images"}, "messages", "messages", "input"},
		{&inference.FieldError{Path: inference.Field("Messages"), Reason: "the model's chat template: roles must alternate"}, "messages", "messages", "input"},
		{&inference.FieldError{Path: inference.Field("Temperature"), Reason: "9 out of range"}, "temperature", "temperature", "temperature"},
		{&inference.FieldError{Path: inference.Field("MaxTokens"), Reason: "too many", Err: inference.ErrContextLength}, "max_tokens", "max_tokens", "max_output_tokens"},
		{fmt.Errorf("%w: no field", inference.ErrInvalidRequest), "", "", ""},
	} {
		err := tc.err
		for f, want := range map[formats.Style]string{formats.StyleChat: tc.chat, formats.StyleMessages: tc.messages, formats.StyleResponses: tc.responses} {
			e := named(f, err)
			if e.Status != 400 || e.Param != want || want != "" && !strings.HasPrefix(e.Message, want+": ") || strings.Contains(e.Message, "llamacpp") {
				t.Errorf("%v in style %d: %d %q %q, want param %q", tc.err, f, e.Status, e.Param, e.Message, want)
			}
		}
	}
	// A failed response carries the field too.
	r := responses.FailedResponse(formatstest.Parse(t, responses.Parse, formatstest.ResponsesBody), schemaErr, formatstest.Options())
	// Its code is one the SDKs know; the param names the field.
	if r.Error == nil || r.Error.Code != "invalid_prompt" || r.Error.Param == nil || *r.Error.Param != "text.format.schema" ||
		!strings.HasPrefix(r.Error.Message, "text.format.schema: ") {
		t.Errorf("failed response error %+v", r.Error)
	}
}

// TestToolResultRoundTrips converts tool-call results into each style's
// response and back.
func TestToolResultRoundTrips(t *testing.T) {
	req := formatstest.Parse(t, chat.Parse, toolsChatBody)
	for _, res := range []inference.Result{resToolCalls, resTextToolCall} {
		want := res
		want.Timings = inference.Timings{}
		// Chat and responses carry the reasoning's summary, messages the
		// thinking itself.
		wantChat := want
		wantChat.Reasoning = ""
		if got := chat.NewCompletion(req, []inference.Result{res}, formats.Options{}).Result(); !reflect.DeepEqual(got, wantChat) {
			t.Errorf("chat: got %+v, want %+v", got, wantChat)
		}
		wantMsg := want
		wantMsg.Usage.ReasoningTokens, wantMsg.StopToken, wantMsg.Summary = 0, 0, ""
		if got := messages.NewMessage(req, res, formats.Options{}).Result(); !reflect.DeepEqual(got, wantMsg) {
			t.Errorf("messages: got %+v, want %+v", got, wantMsg)
		}
		wantResp := wantChat
		wantResp.StopToken = 0
		if got := responses.NewResponse(req, res, formats.Options{}).Result(); !reflect.DeepEqual(got, wantResp) {
			t.Errorf("responses: got %+v, want %+v", got, wantResp)
		}
	}
}

// TestTranscriptToolCalls: a stored conversation keeps the assistant's
// tool calls, and the next turn's tool result finds its call.
func TestTranscriptToolCalls(t *testing.T) {
	req := formatstest.Parse(t, responses.Parse, toolsResponsesBody)
	history := req.Transcript(resToolCalls)
	last := history[len(history)-1]
	if last.Role != inference.RoleAssistant || !reflect.DeepEqual(last.ToolCalls, resToolCalls.ToolCalls) ||
		last.Reasoning != resToolCalls.Reasoning || len(last.Content) != 0 {
		t.Fatalf("assistant turn %+v", last)
	}
	next := formatstest.Parse(t, responses.Parse, `{"model":"m","previous_response_id":"resp_1","input":[
		{"type":"function_call_output","call_id":"call_weather1","output":"sunny"},
		{"type":"function_call_output","call_id":"call_time2","output":[{"type":"input_text","text":"12:00"}]}]}`)
	cont := formats.Continue(history, next)
	ir := cont.Inference()
	n := len(ir.Messages)
	if n != 4 || ir.Messages[2].ToolCallID != "call_weather1" || wire.JoinText(ir.Messages[3].Content) != "12:00" {
		t.Fatalf("continued %+v", ir.Messages)
	}
	// The tool results are named after the history's calls, for the
	// template.
	if ir.Messages[2].Name != "get_weather" || ir.Messages[3].Name != "get_time" {
		t.Errorf("names %q %q", ir.Messages[2].Name, ir.Messages[3].Name)
	}
}

// chatWith, msgsWith and respWith return a minimal request of each style
// with extra members.
func chatWith(extra string) string {
	return `{"model":"m","messages":[{"role":"user","content":"hi"}]` + extra + `}`
}

func msgsWith(extra string) string {
	return `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]` + extra + `}`
}

func respWith(extra string) string { return `{"model":"m","input":"hi"` + extra + `}` }

// TestToolChoiceInference maps each style's tool choice onto the engine's.
func TestToolChoiceInference(t *testing.T) {
	const tools = `"tools":[{"type":"function","function":{"name":"f"}}]`
	const mtools = `"tools":[{"name":"f","input_schema":{"type":"object"}}]`
	const rtools = `"tools":[{"type":"function","name":"f"}]`
	for _, tc := range []struct {
		name  string
		parse func([]byte) (formats.Request, error)
		body  string
		want  inference.ToolChoice
	}{
		{"chat default", chat.Parse, chatWith(`,` + tools), inference.ToolChoice{Mode: inference.ToolAuto}},
		{"chat none", chat.Parse, chatWith(`,` + tools + `,"tool_choice":"none"`), inference.ToolChoice{Mode: inference.ToolNone}},
		{"chat required", chat.Parse, chatWith(`,` + tools + `,"tool_choice":"required"`), inference.ToolChoice{Mode: inference.ToolRequired}},
		{"chat named", chat.Parse, chatWith(`,` + tools + `,"tool_choice":{"type":"function","function":{"name":"f"}}`), inference.ToolChoice{Mode: inference.ToolFunction, Name: "f"}},
		{"messages auto", messages.Parse, msgsWith(`,` + mtools + `,"tool_choice":{"type":"auto"}`), inference.ToolChoice{Mode: inference.ToolAuto}},
		{"messages any", messages.Parse, msgsWith(`,` + mtools + `,"tool_choice":{"type":"any"}`), inference.ToolChoice{Mode: inference.ToolRequired}},
		{"messages tool", messages.Parse, msgsWith(`,` + mtools + `,"tool_choice":{"type":"tool","name":"f"}`), inference.ToolChoice{Mode: inference.ToolFunction, Name: "f"}},
		{"messages none", messages.Parse, msgsWith(`,` + mtools + `,"tool_choice":{"type":"none"}`), inference.ToolChoice{Mode: inference.ToolNone}},
		{"responses required", responses.Parse, respWith(`,` + rtools + `,"tool_choice":"required"`), inference.ToolChoice{Mode: inference.ToolRequired}},
		{"responses named", responses.Parse, respWith(`,` + rtools + `,"tool_choice":{"type":"function","name":"f"}`), inference.ToolChoice{Mode: inference.ToolFunction, Name: "f"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := formatstest.Parse(t, tc.parse, tc.body)
			if got := r.Inference().ToolChoice; got != tc.want {
				t.Errorf("ToolChoice %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestVerbosity: low and high add their instruction at the end of the
// system prompt, or as one; medium adds nothing.
func TestVerbosity(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		parse      func([]byte) (formats.Request, error)
		system     string
		n          int
	}{
		{"responses low with instructions", `{"model":"m","instructions":"Be kind.","input":"hi","text":{"verbosity":"low"}}`, responses.Parse,
			"Be kind.\n\n" + formats.VerbosityInstruction("low"), 2},
		{"responses high alone", `{"model":"m","input":"hi","text":{"verbosity":"high"}}`, responses.Parse, formats.VerbosityInstruction("high"), 2},
		{"responses medium", `{"model":"m","input":"hi","text":{"verbosity":"medium"}}`, responses.Parse, "", 1},
		{"chat low after a system message", `{"model":"m","messages":[{"role":"system","content":"S."},{"role":"user","content":"hi"}],"verbosity":"low"}`, chat.Parse,
			"S.\n\n" + formats.VerbosityInstruction("low"), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := formatstest.Parse(t, tc.parse, tc.body)
			ir := r.Inference()
			if len(ir.Messages) != tc.n {
				t.Fatalf("messages %+v", ir.Messages)
			}
			if tc.system != "" && (ir.Messages[0].Role != inference.RoleSystem || wire.JoinText(ir.Messages[0].Content) != tc.system) {
				t.Errorf("system %+v", ir.Messages[0])
			}
			if len(r.Messages) > 0 && r.Messages[0].Role == inference.RoleSystem && len(r.Messages[0].Content) != 1 {
				t.Errorf("Inference changed the request's own messages: %+v", r.Messages[0])
			}
		})
	}
	if formats.VerbosityInstruction("low") == "" || formats.VerbosityInstruction("high") == "" || formats.VerbosityInstruction("medium") != "" {
		t.Error("instructions")
	}
	// The response echoes it.
	r := formatstest.Parse(t, responses.Parse, toolsResponsesBody)
	if got := responses.NewResponse(r, resTextToolCall, formatstest.Options()).Text.Verbosity; got != "low" {
		t.Errorf("echoed verbosity %q", got)
	}
}

// TestToolInputParsing: tool_use blocks and function_call items in the
// input become the assistant's calls, and results are named after them.
func TestToolInputParsing(t *testing.T) {
	m := formatstest.Parse(t, messages.Parse, `{"model":"m","messages":[
		{"role":"user","content":"w?"},
		{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"x"},{"type":"text","text":"Checking."},{"type":"tool_use","id":"t1","name":"get_weather","input":{ "city" : "Paris" }}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"sunny"}]}]}]}`)
	a := m.Messages[1]
	if a.Reasoning != "hm" || wire.JoinText(a.Content) != "Checking." || len(a.ToolCalls) != 1 || a.ToolCalls[0].Arguments != `{"city":"Paris"}` {
		t.Errorf("assistant %+v", a)
	}
	if tm := m.Messages[2]; tm.Role != inference.RoleTool || tm.ToolCallID != "t1" || tm.Name != "get_weather" || wire.JoinText(tm.Content) != "sunny" {
		t.Errorf("tool result %+v", tm)
	}
	r := formatstest.Parse(t, responses.Parse, `{"model":"m","input":[
		{"role":"user","content":"w?"},
		{"type":"function_call","id":"fc_1","call_id":"c1","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"},
		{"type":"function_call_output","call_id":"c1","output":"sunny"}]}`)
	if len(r.Messages) != 3 || r.Messages[1].ToolCalls[0].ID != "c1" || r.Messages[2].Name != "get_weather" {
		t.Errorf("responses %+v", r.Messages)
	}
	c := formatstest.Parse(t, chat.Parse, `{"model":"m","messages":[
		{"role":"user","content":"w?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"sunny"}]}`)
	if c.Messages[2].Name != "get_weather" {
		t.Errorf("chat %+v", c.Messages)
	}
}

// TestSDKToolGoldens serves the tool-call goldens to the official SDKs.
func TestSDKToolGoldens(t *testing.T) {
	ctx := context.Background()
	t.Run("chat", func(t *testing.T) {
		_, url := formatstest.ServeGolden(t, 200, "chat_completion_tool_calls.json")
		c, err := formatstest.OpenAI(url).Chat.Completions.New(ctx, formatstest.ChatParams())
		if err != nil {
			t.Fatal(err)
		}
		ch := c.Choices[0]
		if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 2 || ch.Message.ToolCalls[0].Function.Name != "get_weather" ||
			ch.Message.ToolCalls[0].Function.Arguments != callWeather.Arguments || ch.Message.ToolCalls[1].ID != callTime.ID {
			t.Errorf("choice %+v", ch)
		}
		for _, name := range []string{"chat_stream_tool_calls.sse", "chat_stream_text_tool_call.sse"} {
			_, url := formatstest.ServeGolden(t, 200, name)
			s := formatstest.OpenAI(url).Chat.Completions.NewStreaming(ctx, formatstest.ChatParams())
			acc := openai.ChatCompletionAccumulator{}
			var finished []string
			for s.Next() {
				acc.AddChunk(s.Current())
				if tc, ok := acc.JustFinishedToolCall(); ok {
					finished = append(finished, tc.Name)
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			ch := acc.Choices[0]
			if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) == 0 || ch.Message.ToolCalls[0].Function.Arguments != callWeather.Arguments ||
				ch.Message.ToolCalls[0].ID != callWeather.ID || ch.Message.ToolCalls[0].Type != "function" {
				t.Errorf("%s: accumulated %+v", name, ch)
			}
			if len(finished) == 0 || finished[0] != "get_weather" {
				t.Errorf("%s: finished calls %v", name, finished)
			}
		}
	})
	t.Run("messages", func(t *testing.T) {
		_, url := formatstest.ServeGolden(t, 200, "message_tool_use.json")
		m, err := formatstest.Anthropic(url).Messages.New(ctx, formatstest.MessagesParams())
		if err != nil {
			t.Fatal(err)
		}
		var input map[string]any
		if m.StopReason != "tool_use" || len(m.Content) != 3 || m.Content[0].Type != "thinking" || m.Content[1].Type != "tool_use" ||
			m.Content[1].Name != "get_weather" || json.Unmarshal(m.Content[1].Input, &input) != nil || input["city"] != "Paris" {
			t.Errorf("message %+v", m)
		}
		for _, tc := range []struct {
			name   string
			blocks []string
		}{
			{"messages_stream_tool_use.sse", []string{"thinking", "tool_use", "tool_use"}},
			{"messages_stream_text_tool_use.sse", []string{"text", "tool_use"}},
		} {
			_, url := formatstest.ServeGolden(t, 200, tc.name)
			s := formatstest.Anthropic(url).Messages.NewStreaming(ctx, formatstest.MessagesParams())
			var acc anthropic.Message
			for s.Next() {
				if err := acc.Accumulate(s.Current()); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, b := range acc.Content {
				types = append(types, b.Type)
			}
			if !reflect.DeepEqual(types, tc.blocks) || acc.StopReason != "tool_use" {
				t.Fatalf("%s: blocks %v, stop %q", tc.name, types, acc.StopReason)
			}
			call := acc.Content[1] // the weather call, after the thinking or the text
			var input map[string]any
			if err := json.Unmarshal(call.Input, &input); err != nil || input["city"] != "Paris" || call.ID != callWeather.ID {
				t.Errorf("%s: tool_use %+v (%v)", tc.name, call, err)
			}
		}
	})
	t.Run("responses", func(t *testing.T) {
		_, url := formatstest.ServeGolden(t, 200, "response_function_call.json")
		r, err := formatstest.OpenAI(url).Responses.New(ctx, formatstest.ResponsesParams())
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != "completed" || len(r.Output) != 3 || r.Output[1].Type != "function_call" {
			t.Fatalf("response %+v", r.Output)
		}
		fc := r.Output[1].AsFunctionCall()
		if fc.CallID != callWeather.ID || fc.Name != "get_weather" || fc.Arguments != callWeather.Arguments || !strings.HasPrefix(fc.ID, "fc_") {
			t.Errorf("function call %+v", fc)
		}
		for _, name := range []string{"responses_stream_function_call.sse", "responses_stream_text_function_call.sse"} {
			_, url := formatstest.ServeGolden(t, 200, name)
			s := formatstest.OpenAI(url).Responses.NewStreaming(ctx, formatstest.ResponsesParams())
			var last oresponses.ResponseStreamEventUnion
			var args strings.Builder
			doneArgs := 0
			for s.Next() {
				last = s.Current()
				switch last.Type {
				case "response.function_call_arguments.delta":
					args.WriteString(last.Delta)
				case "response.function_call_arguments.done":
					doneArgs++
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			var calls []oresponses.ResponseFunctionToolCall
			for _, it := range last.Response.Output {
				if it.Type == "function_call" {
					calls = append(calls, it.AsFunctionCall())
				}
			}
			if last.Type != "response.completed" || len(calls) == 0 || calls[0].Arguments != callWeather.Arguments || doneArgs != len(calls) ||
				!strings.HasPrefix(args.String(), callWeather.Arguments) {
				t.Errorf("%s: last %s, calls %+v, args %q", name, last.Type, calls, args.String())
			}
		}
	})
}
