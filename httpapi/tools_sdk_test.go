//go:build cgo

package httpapi_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/policy"
)

// These tests drive tool calling, structured outputs and reasoning through
// a Handler on the real engine with the official SDKs. The tiny model's
// weights are random: what they check is what the engine guarantees
// whatever the weights (a forced call names an offered tool with
// arguments of its schema, a schema's output validates, a thinking
// section comes first) and that the SDKs read every shape.

// The tools offered, with bounded strings so that a random model's calls
// end within the output limit.
const (
	weatherSchema = `{"type":"object","properties":{"city":{"type":"string","maxLength":10},"unit":{"enum":["c","f"]}},"required":["city"],"additionalProperties":false}`
	timeSchema    = `{"type":"object","properties":{"zone":{"type":"string","maxLength":8}},"required":["zone"],"additionalProperties":false}`
	personSchema  = `{"type":"object","properties":{"name":{"type":"string","maxLength":8},"mood":{"enum":["happy","sad"]},"pet":{"type":"boolean"}},"required":["name","mood","pet"],"additionalProperties":false}`
)

// toolTokens is the output limit of requests that call tools: JSON
// grammars let a random model write runs of white space between tokens,
// and a forced call must fit.
const toolTokens = 800

// toolSchemas are the compiled schemas of the offered tools, by name.
type toolSchemas map[string]*jsonschema.Schema

func compile(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func offered(t *testing.T) toolSchemas {
	return toolSchemas{"get_weather": compile(t, weatherSchema), "get_time": compile(t, timeSchema)}
}

// validates reports whether JSON text validates against schema.
func validates(t *testing.T, schema *jsonschema.Schema, text string) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		t.Fatalf("%q is not JSON: %v", text, err)
	}
	if err := schema.Validate(v); err != nil {
		t.Fatalf("%s does not validate: %v", text, err)
	}
}

// check asserts that a call names an offered tool (want, when set) with
// arguments of its schema.
func (s toolSchemas) check(t *testing.T, name, arguments, want string) {
	t.Helper()
	schema := s[name]
	if schema == nil || want != "" && name != want {
		t.Fatalf("call of %q (want %q)", name, want)
	}
	validates(t, schema, arguments)
}

// schemaMap decodes a schema for the SDKs' parameter types.
func schemaMap(t *testing.T, schema string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(schema), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// toolServer serves a tiny Qwen3 (inferencetest.Qwen3Template: the
// engine's ChatML, which renders tools Hermes-style, and Qwen3's thinking
// switch), which thinks and calls tools, under the spec's ids.
func toolServer(t *testing.T) string {
	t.Helper()
	// Greedy, a random model may write call after call until the output
	// limit when tool_choice lets it call several tools (required, any):
	// these weights end after the first, in every style.
	path := inferencetest.Model(t, inferencetest.Options{Seed: 2, Arch: "qwen3", ChatTemplate: inferencetest.Qwen3Template, ContextLength: 4096})
	return serveSpecIDs(t, path, 4096)
}

func chatTools(t *testing.T) []openai.ChatCompletionToolUnionParam {
	return []openai.ChatCompletionToolUnionParam{
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather", Description: openai.String("Current weather in a city."),
			Parameters: schemaMap(t, weatherSchema)}),
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_time", Description: openai.String("The time in a zone."),
			Parameters: schemaMap(t, timeSchema)}),
	}
}

func chatToolRequest(t *testing.T, choice openai.ChatCompletionToolChoiceOptionUnionParam) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:           policy.Core25Mini,
		Messages:        []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather in Oslo?")},
		Tools:           chatTools(t),
		ToolChoice:      choice,
		MaxTokens:       openai.Int(toolTokens),
		Temperature:     openai.Float(0),
		ReasoningEffort: shared.ReasoningEffortNone,
	}
}

var (
	chatRequired = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}
	chatNamed    = openai.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &openai.ChatCompletionNamedToolChoiceParam{
		Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_time"}}}
)

func TestSDKToolsOpenAIChat(t *testing.T) {
	url := toolServer(t)
	client := openaiSDK(url, key)
	ctx := context.Background()
	tools := offered(t)

	for _, tc := range []struct {
		name   string
		choice openai.ChatCompletionToolChoiceOptionUnionParam
		want   string
	}{{"required", chatRequired, ""}, {"named", chatNamed, "get_time"}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := client.Chat.Completions.New(ctx, chatToolRequest(t, tc.choice))
			if err != nil {
				t.Fatal(err)
			}
			ch := c.Choices[0]
			t.Logf("%s: %d calls, first %s(%s)", tc.name, len(ch.Message.ToolCalls), ch.Message.ToolCalls[0].Function.Name, ch.Message.ToolCalls[0].Function.Arguments)
			if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) == 0 {
				t.Fatalf("choice %+v", ch)
			}
			for _, call := range ch.Message.ToolCalls {
				if call.ID == "" || call.Type != "function" {
					t.Errorf("call %+v", call)
				}
				tools.check(t, call.Function.Name, call.Function.Arguments, tc.want)
			}

			// Streaming, accumulated by the SDK.
			s := client.Chat.Completions.NewStreaming(ctx, chatToolRequest(t, tc.choice))
			acc := openai.ChatCompletionAccumulator{}
			var finished []openai.FinishedChatCompletionToolCall
			for s.Next() {
				acc.AddChunk(s.Current())
				if call, ok := acc.JustFinishedToolCall(); ok {
					finished = append(finished, call)
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			sch := acc.Choices[0]
			if sch.FinishReason != "tool_calls" || len(sch.Message.ToolCalls) == 0 || len(finished) != len(sch.Message.ToolCalls) {
				t.Fatalf("streamed %+v, %d finished", sch, len(finished))
			}
			for i, call := range sch.Message.ToolCalls {
				tools.check(t, call.Function.Name, call.Function.Arguments, tc.want)
				if call.ID == "" || finished[i].ID != call.ID || finished[i].Arguments != call.Function.Arguments {
					t.Errorf("call %d: %+v, finished %+v", i, call, finished[i])
				}
			}
			// Greedy, the stream makes the same calls.
			if sch.Message.ToolCalls[0].Function.Arguments != ch.Message.ToolCalls[0].Function.Arguments {
				t.Errorf("streamed %s, blocking %s", sch.Message.ToolCalls[0].Function.Arguments, ch.Message.ToolCalls[0].Function.Arguments)
			}

			// The follow-up sends the calls and their results back.
			next := chatToolRequest(t, openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("auto")})
			next.Messages = append(next.Messages, ch.Message.ToParam())
			for _, call := range ch.Message.ToolCalls {
				next.Messages = append(next.Messages, openai.ToolMessage(`{"result":"sunny, 12:00"}`, call.ID))
			}
			next.MaxTokens = openai.Int(16)
			c2, err := client.Chat.Completions.New(ctx, next)
			if err != nil {
				t.Fatal(err)
			}
			// The prompt holds the calls and their results.
			if c2.Usage.PromptTokens < c.Usage.PromptTokens+int64(len(ch.Message.ToolCalls[0].Function.Arguments)) {
				t.Errorf("follow-up prompt %d tokens after %d", c2.Usage.PromptTokens, c.Usage.PromptTokens)
			}
		})
	}

	// Reasoning: a thinking section comes first and is counted; with
	// reasoning.summary auto a summary of it comes back.
	params := chatToolRequest(t, chatRequired)
	params.ReasoningEffort = shared.ReasoningEffortLow
	params.MaxTokens = openai.Int(4 * toolTokens) // thinking takes up to three quarters
	c, err := client.Chat.Completions.New(ctx, params, option.WithJSONSet("reasoning", map[string]any{"summary": "auto"}))
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		ReasoningContent string `json:"reasoning_content"`
	}
	_ = json.Unmarshal([]byte(c.Choices[0].Message.RawJSON()), &msg)
	t.Logf("reasoning: %d tokens, %q", c.Usage.CompletionTokensDetails.ReasoningTokens, msg.ReasoningContent)
	if c.Usage.CompletionTokensDetails.ReasoningTokens <= 0 || msg.ReasoningContent == "" || c.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("reasoning tokens %d, text %q, finish %s", c.Usage.CompletionTokensDetails.ReasoningTokens, msg.ReasoningContent, c.Choices[0].FinishReason)
	}
	for _, call := range c.Choices[0].Message.ToolCalls {
		tools.check(t, call.Function.Name, call.Function.Arguments, "")
	}
}

func responsesTools(t *testing.T) []responses.ToolUnionParam {
	return []responses.ToolUnionParam{
		{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Parameters: schemaMap(t, weatherSchema), Strict: openai.Bool(true)}},
		{OfFunction: &responses.FunctionToolParam{Name: "get_time", Parameters: schemaMap(t, timeSchema), Strict: openai.Bool(true)}},
	}
}

func TestSDKToolsOpenAIResponses(t *testing.T) {
	url := toolServer(t)
	client := openaiSDK(url, key)
	ctx := context.Background()
	tools := offered(t)

	params := responses.ResponseNewParams{
		Model:           policy.Core25Pro,
		Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the weather in Oslo?")},
		Tools:           responsesTools(t),
		ToolChoice:      responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsRequired)},
		MaxOutputTokens: openai.Int(4 * toolTokens), // thinking takes up to three quarters
		Temperature:     openai.Float(0),
		Reasoning:       shared.ReasoningParam{Effort: shared.ReasoningEffortLow},
	}
	r, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	var calls []responses.ResponseFunctionToolCall
	var kinds []string
	for _, it := range r.Output {
		kinds = append(kinds, it.Type)
		if it.Type == "function_call" {
			calls = append(calls, it.AsFunctionCall())
		}
	}
	t.Logf("output %v, reasoning tokens %d", kinds, r.Usage.OutputTokensDetails.ReasoningTokens)
	if r.Status != "completed" || len(calls) == 0 || kinds[0] != "reasoning" || r.Usage.OutputTokensDetails.ReasoningTokens <= 0 {
		t.Fatalf("status %s, output %v, usage %+v", r.Status, kinds, r.Usage)
	}
	for _, c := range calls {
		tools.check(t, c.Name, c.Arguments, "")
		if c.CallID == "" || !strings.HasPrefix(c.ID, "fc_") || c.Status != "completed" {
			t.Errorf("call %+v", c)
		}
	}

	// Streaming a named call.
	params.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfFunctionTool: &responses.ToolChoiceFunctionParam{Name: "get_time"}}
	params.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffortNone}
	s := client.Responses.NewStreaming(ctx, params)
	var last responses.ResponseStreamEventUnion
	events := map[string]int{}
	var deltas strings.Builder
	for s.Next() {
		last = s.Current()
		events[last.Type]++
		if last.Type == "response.function_call_arguments.delta" {
			deltas.WriteString(last.Delta)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if last.Type != "response.completed" || events["response.function_call_arguments.done"] == 0 ||
		events["response.output_item.added"] != events["response.output_item.done"] {
		t.Fatalf("events %v, last %s", events, last.Type)
	}
	var streamed []responses.ResponseFunctionToolCall
	for _, it := range last.Response.Output {
		if it.Type == "function_call" {
			streamed = append(streamed, it.AsFunctionCall())
		}
	}
	if len(streamed) == 0 || streamed[0].Arguments != deltas.String()[:len(streamed[0].Arguments)] {
		t.Fatalf("streamed calls %+v, deltas %q", streamed, deltas.String())
	}
	for _, c := range streamed {
		tools.check(t, c.Name, c.Arguments, "get_time")
	}

	// The result goes back with previous_response_id: the stored
	// conversation holds the calls, so the prompt grows by them.
	next := responses.ResponseNewParams{
		Model:              policy.Core25Pro,
		PreviousResponseID: openai.String(r.ID),
		MaxOutputTokens:    openai.Int(16),
		Temperature:        openai.Float(0),
		Tools:              responsesTools(t),
		Reasoning:          shared.ReasoningParam{Effort: shared.ReasoningEffortNone},
	}
	for _, c := range calls {
		out := responses.ResponseInputItemParamOfFunctionCallOutput(`{"temp":"4C"}`)
		out.OfFunctionCallOutput.CallID = openai.String(c.CallID)
		next.Input.OfInputItemList = append(next.Input.OfInputItemList, out)
	}
	r2, err := client.Responses.New(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Usage.InputTokens < r.Usage.InputTokens+int64(len(calls[0].Arguments)) {
		t.Errorf("follow-up prompt %d tokens after %d: the calls are not in the stored conversation", r2.Usage.InputTokens, r.Usage.InputTokens)
	}

	// Structured output: json_schema, blocking and streamed.
	format := responses.ResponseNewParams{
		Model:           policy.Core25Pro,
		Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String("Describe a person.")},
		MaxOutputTokens: openai.Int(200),
		Temperature:     openai.Float(0),
		Reasoning:       shared.ReasoningParam{Effort: shared.ReasoningEffortNone},
		Text: responses.ResponseTextConfigParam{
			Format: responses.ResponseFormatTextConfigUnionParam{OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{
				Name: "person", Schema: schemaMap(t, personSchema), Strict: openai.Bool(true)}},
			Verbosity: responses.ResponseTextConfigVerbosityLow,
		},
	}
	person := compile(t, personSchema)
	rf, err := client.Responses.New(ctx, format)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("json_schema: %s", rf.OutputText())
	validates(t, person, rf.OutputText())
	if rf.Text.Format.Type != "json_schema" || rf.Text.Verbosity != "low" {
		t.Errorf("text %+v", rf.Text)
	}
	fs := client.Responses.NewStreaming(ctx, format)
	var text strings.Builder
	for fs.Next() {
		if ev := fs.Current(); ev.Type == "response.output_text.delta" {
			text.WriteString(ev.Delta)
		}
	}
	if err := fs.Err(); err != nil {
		t.Fatal(err)
	}
	validates(t, person, text.String())

	// A schema the engine cannot enforce is a 400 naming the field.
	bad := format
	bad.Text.Format.OfJSONSchema.Schema = map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "#/nowhere"}}}
	var oe *openai.Error
	if _, err := client.Responses.New(ctx, bad); !asStatus(err, &oe, 400) || oe.Param != "text.format.schema" {
		t.Errorf("unsupported schema: %v", err)
	}
}

// asStatus reports whether err is an *openai.Error of the status.
func asStatus(err error, oe **openai.Error, status int) bool {
	e, ok := err.(*openai.Error)
	if !ok {
		return false
	}
	*oe = e
	return e.StatusCode == status
}

func anthropicTools(t *testing.T) []anthropic.ToolUnionParam {
	var out []anthropic.ToolUnionParam
	for name, schema := range map[string]string{"get_weather": weatherSchema, "get_time": timeSchema} {
		m := schemaMap(t, schema)
		props := m["properties"]
		var required []string
		for _, r := range m["required"].([]any) {
			required = append(required, r.(string))
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: name,
			InputSchema: anthropic.ToolInputSchemaParam{Properties: props, Required: required,
				ExtraFields: map[string]any{"additionalProperties": false}}}})
	}
	slices.SortFunc(out, func(a, b anthropic.ToolUnionParam) int { return strings.Compare(a.OfTool.Name, b.OfTool.Name) })
	return out
}

func TestSDKToolsAnthropicMessages(t *testing.T) {
	url := toolServer(t)
	client := anthropicSDK(url, key)
	ctx := context.Background()
	tools := offered(t)

	params := anthropic.MessageNewParams{
		Model:       policy.Core25Mini,
		MaxTokens:   toolTokens,
		Messages:    []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather in Oslo?"))},
		Tools:       anthropicTools(t),
		ToolChoice:  anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}},
		Thinking:    anthropic.ThinkingConfigParamUnion{OfDisabled: &anthropic.ThinkingConfigDisabledParam{}},
		Temperature: anthropic.Float(0),
	}
	m, err := client.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if m.StopReason != "tool_use" || len(m.Content) == 0 {
		t.Fatalf("message %+v", m)
	}
	for _, b := range m.Content {
		if b.Type != "tool_use" {
			t.Fatalf("block %s in a forced call", b.Type)
		}
		tools.check(t, b.Name, string(b.Input), "")
	}

	// Streaming a named call, accumulated by the SDK.
	params.ToolChoice = anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: "get_time"}}
	s := client.Messages.NewStreaming(ctx, params)
	var acc anthropic.Message
	inputDeltas := 0
	for s.Next() {
		ev := s.Current()
		if ev.Type == "content_block_delta" && ev.Delta.Type == "input_json_delta" {
			inputDeltas++
		}
		if err := acc.Accumulate(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.StopReason != "tool_use" || len(acc.Content) != 1 || acc.Content[0].Type != "tool_use" || inputDeltas != 1 {
		t.Fatalf("accumulated %+v, %d input deltas", acc.Content, inputDeltas)
	}
	use := acc.Content[0]
	tools.check(t, use.Name, string(use.Input), "get_time")

	// The result goes back as a tool_result block.
	next := params
	next.ToolChoice = anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{}}
	next.MaxTokens = 16
	next.Messages = append(slices.Clone(params.Messages), acc.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(use.ID, "12:00", false)))
	m2, err := client.Messages.New(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Usage.InputTokens+m2.Usage.CacheReadInputTokens < m.Usage.InputTokens+m.Usage.CacheReadInputTokens {
		t.Errorf("follow-up %+v", m2)
	}

	// Thinking: the thinking block comes before the text, with its
	// latency; the answer follows the schema.
	think := anthropic.MessageNewParams{
		Model:        policy.Core25Mini,
		MaxTokens:    200,
		Messages:     []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Describe a person."))},
		Thinking:     anthropic.ThinkingConfigParamOfEnabled(12),
		OutputConfig: anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: schemaMap(t, personSchema)}},
		Temperature:  anthropic.Float(0),
	}
	person := compile(t, personSchema)
	tm, err := client.Messages.New(ctx, think)
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Content) != 2 || tm.Content[0].Type != "thinking" || tm.Content[0].Thinking == "" || tm.Content[0].Signature == "" || tm.Content[1].Type != "text" {
		t.Fatalf("thinking message %+v", tm.Content)
	}
	var latency struct {
		MS *int64 `json:"thinking_latency_ms"`
	}
	if err := json.Unmarshal([]byte(tm.Content[0].RawJSON()), &latency); err != nil || latency.MS == nil || *latency.MS < 0 {
		t.Errorf("thinking block %s", tm.Content[0].RawJSON())
	}
	validates(t, person, tm.Content[1].Text)

	ts := client.Messages.NewStreaming(ctx, think)
	var tacc anthropic.Message
	thinkingDeltas := 0
	for ts.Next() {
		ev := ts.Current()
		if ev.Type == "content_block_delta" && ev.Delta.Type == "thinking_delta" {
			thinkingDeltas++
		}
		if err := tacc.Accumulate(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := ts.Err(); err != nil {
		t.Fatal(err)
	}
	if len(tacc.Content) != 2 || tacc.Content[0].Type != "thinking" || thinkingDeltas == 0 || tacc.Content[1].Type != "text" ||
		tacc.Content[0].Thinking != tm.Content[0].Thinking || tacc.Content[1].Text != tm.Content[1].Text {
		t.Fatalf("streamed thinking %+v, %d deltas", tacc.Content, thinkingDeltas)
	}
}
