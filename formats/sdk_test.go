package formats_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/inferkit/inferkit/formats/chat"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/formats/messages"
	"github.com/inferkit/inferkit/formats/responses"
	"github.com/openai/openai-go/v3"
	oresponses "github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

func chatParams() openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:               "core-2-5-pro",
		Messages:            []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Capital of France?")},
		MaxCompletionTokens: openai.Int(100),
		Temperature:         openai.Float(0.5),
		TopP:                openai.Float(0.9),
		Seed:                openai.Int(7),
		N:                   openai.Int(1),
		User:                openai.String("u1"),
		FrequencyPenalty:    openai.Float(0.1),
		PresencePenalty:     openai.Float(0.2),
		ReasoningEffort:     shared.ReasoningEffortLow,
		Stop:                openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"END"}},
		Metadata:            shared.Metadata{"k": "v"},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object"}})},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}},
	}
}

func TestSDKChat(t *testing.T) {
	f, url := formatstest.ServeGolden(t, 200, "chat_completion.json")
	c, err := formatstest.OpenAI(url).Chat.Completions.New(context.Background(), chatParams())
	if err != nil {
		t.Fatal(err)
	}
	req, err := chat.Parse(f.Got)
	if err != nil {
		t.Fatalf("the SDK's request does not parse: %v\n%s", err, f.Got)
	}
	if req.MaxTokens != 100 || *req.Temperature != 0.5 || *req.TopP != 0.9 || *req.Seed != 7 || req.Reasoning.Effort != "low" ||
		req.Stop[0] != "END" || req.Format.Type != "json" || req.Tools[0].Name != "get_weather" || req.Messages[0].Role != "system" {
		t.Errorf("request = %+v", req)
	}
	if c.ID != "chatcmpl-test1" || c.Object != "chat.completion" || c.Choices[0].Message.Content != "Paris is the capital of France." ||
		c.Choices[0].FinishReason != "stop" || c.Usage.CompletionTokensDetails.ReasoningTokens != 9 ||
		c.Usage.PromptTokensDetails.CachedTokens != 8 || c.Usage.TotalTokens != 35 || c.Created != 1767225600 {
		t.Errorf("completion = %+v", c)
	}
	for name, field := range map[string]interface{ Valid() bool }{
		"id": c.JSON.ID, "created": c.JSON.Created, "model": c.JSON.Model, "object": c.JSON.Object, "usage": c.JSON.Usage,
		"finish_reason": c.Choices[0].JSON.FinishReason, "index": c.Choices[0].JSON.Index, "content": c.Choices[0].Message.JSON.Content,
	} {
		if !field.Valid() {
			t.Errorf("%s is not a valid field for the SDK", name)
		}
	}
}

func TestSDKChatStream(t *testing.T) {
	for _, tc := range []struct {
		golden, text string
		usage        int64
	}{
		{"chat_stream.sse", "Paris is the capital of France.", 0},
		{"chat_stream_usage.sse", "One, two", 16},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			_, url := formatstest.ServeGolden(t, 200, tc.golden)
			s := formatstest.OpenAI(url).Chat.Completions.NewStreaming(context.Background(), chatParams())
			acc := openai.ChatCompletionAccumulator{}
			n := 0
			for s.Next() {
				acc.AddChunk(s.Current())
				n++
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if n < 3 || acc.Choices[0].Message.Content != tc.text || acc.Choices[0].FinishReason != "stop" || acc.Usage.TotalTokens != tc.usage {
				t.Errorf("accumulated %d chunks: %+v", n, acc.ChatCompletion)
			}
		})
	}
	_, url := formatstest.ServeGolden(t, 200, "chat_stream_error.sse")
	s := formatstest.OpenAI(url).Chat.Completions.NewStreaming(context.Background(), chatParams())
	for s.Next() {
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "overloaded") {
		t.Errorf("in-stream error = %v", err)
	}
}

func TestSDKErrors(t *testing.T) {
	_, url := formatstest.ServeGolden(t, 401, "error_auth_chat.txt")
	_, err := formatstest.OpenAI(url).Chat.Completions.New(context.Background(), chatParams())
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != 401 || oe.Code != "invalid_api_key" || oe.Type != "invalid_request_error" {
		t.Errorf("openai error = %#v", err)
	}
	_, url = formatstest.ServeGolden(t, 400, "error_invalid_chat.txt")
	_, err = formatstest.OpenAI(url).Responses.New(context.Background(), responsesParams())
	if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Param != "temperature" || !strings.Contains(oe.Message, "between 0 and 2") {
		t.Errorf("openai error = %#v", err)
	}

	_, url = formatstest.ServeGolden(t, 401, "error_auth_messages.txt")
	_, err = formatstest.Anthropic(url).Messages.New(context.Background(), messagesParams())
	var ae *anthropic.Error
	if !errors.As(err, &ae) || ae.StatusCode != 401 || !strings.Contains(ae.RawJSON(), `"authentication_error"`) {
		t.Errorf("anthropic error = %v", err)
	}
	// The SDK reads error.type: one of Anthropic's documented types, not
	// the spec's word "error".
	if ae != nil && ae.Type() != anthropic.ErrorTypeAuthenticationError {
		t.Errorf("anthropic error type = %q", ae.Type())
	}
}

func messagesParams() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:         "core-2-5-pro",
		MaxTokens:     1024,
		System:        []anthropic.TextBlockParam{{Text: "Be brief."}},
		Messages:      []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Capital of France?"))},
		Thinking:      anthropic.ThinkingConfigParamOfEnabled(512),
		StopSequences: []string{"END"},
		TopK:          anthropic.Int(40),
		Metadata:      anthropic.MetadataParam{UserID: anthropic.String("u1")},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "get_weather",
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}},
	}
}

func TestSDKMessages(t *testing.T) {
	f, url := formatstest.ServeGolden(t, 200, "message.json")
	m, err := formatstest.Anthropic(url).Messages.New(context.Background(), messagesParams())
	if err != nil {
		t.Fatal(err)
	}
	req, err := messages.Parse(f.Got)
	if err != nil {
		t.Fatalf("the SDK's request does not parse: %v\n%s", err, f.Got)
	}
	if req.MaxTokens != 1024 || req.Instructions != "Be brief." || req.Reasoning.BudgetTokens != 512 || *req.TopK != 40 ||
		req.Stop[0] != "END" || req.User != "u1" || req.Tools[0].Name != "get_weather" {
		t.Errorf("request = %+v", req)
	}
	if m.ID != "msg_test1" || len(m.Content) != 2 || m.Content[0].Type != "thinking" || m.Content[0].Thinking != formatstest.Thinking().Reasoning ||
		m.Content[0].Signature == "" || m.Content[1].Text != formatstest.Thinking().Text || m.StopReason != "end_turn" ||
		m.Usage.CacheReadInputTokens != 8 || m.Usage.CacheCreationInputTokens != 12 || m.Usage.InputTokens != 0 || m.Usage.OutputTokens != 15 {
		t.Errorf("message = %+v", m)
	}
	// The message goes back into a next request as the SDK builds it.
	next := messagesParams()
	next.Messages = append(next.Messages, m.ToParam(), anthropic.NewUserMessage(anthropic.NewTextBlock("And Spain?")))
	f2, url2 := formatstest.ServeGolden(t, 200, "message_stop.json")
	if _, err := formatstest.Anthropic(url2).Messages.New(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	req2, err := messages.Parse(f2.Got)
	if err != nil {
		t.Fatalf("the SDK's follow-up does not parse: %v\n%s", err, f2.Got)
	}
	if len(req2.Messages) != 3 || req2.Messages[1].Reasoning != formatstest.Thinking().Reasoning || wire.JoinText(req2.Messages[1].Content) != formatstest.Thinking().Text {
		t.Errorf("follow-up = %+v", req2.Messages)
	}
}

func TestSDKMessagesStream(t *testing.T) {
	for _, tc := range []struct {
		golden, text, stop, seq string
		blocks, prompt          int64
	}{
		{"messages_stream.sse", formatstest.Thinking().Text, "end_turn", "", 2, 20},
		{"messages_stream_stop.sse", "One, two", "stop_sequence", ", three", 1, 12},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			_, url := formatstest.ServeGolden(t, 200, tc.golden)
			s := formatstest.Anthropic(url).Messages.NewStreaming(context.Background(), messagesParams())
			var m anthropic.Message
			for s.Next() {
				if err := m.Accumulate(s.Current()); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			last := m.Content[len(m.Content)-1]
			if int64(len(m.Content)) != tc.blocks || last.Text != tc.text || string(m.StopReason) != tc.stop || m.StopSequence != tc.seq || m.Usage.OutputTokens == 0 {
				t.Errorf("accumulated %+v", m)
			}
			// message_delta's usage replaces message_start's whole-prompt
			// input_tokens with the split into cache reads and writes.
			if u := m.Usage; u.InputTokens != 0 || u.CacheReadInputTokens+u.CacheCreationInputTokens != tc.prompt {
				t.Errorf("accumulated %+v", m)
			}
			if tc.blocks == 2 && (m.Content[0].Thinking != formatstest.Thinking().Reasoning || m.Content[0].Signature == "") {
				t.Errorf("thinking block %+v", m.Content[0])
			}
		})
	}
	_, url := formatstest.ServeGolden(t, 200, "messages_stream_error.sse")
	s := formatstest.Anthropic(url).Messages.NewStreaming(context.Background(), messagesParams())
	for s.Next() {
	}
	var ae *anthropic.Error
	if err := s.Err(); !errors.As(err, &ae) || !strings.Contains(ae.RawJSON(), "api_error") {
		t.Errorf("in-stream error = %v", err)
	}
}

func responsesParams() oresponses.ResponseNewParams {
	return oresponses.ResponseNewParams{
		Model:           "core-2-5-pro",
		Input:           oresponses.ResponseNewParamsInputUnion{OfString: openai.String("Capital of France?")},
		Instructions:    openai.String("Be brief."),
		MaxOutputTokens: openai.Int(300),
		Metadata:        shared.Metadata{"topic": "geo"},
		Reasoning:       shared.ReasoningParam{Effort: shared.ReasoningEffortHigh, Summary: shared.ReasoningSummaryAuto},
		Store:           openai.Bool(false),
		Temperature:     openai.Float(0.3),
		User:            openai.String("u1"),
		Text: oresponses.ResponseTextConfigParam{Format: oresponses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &oresponses.ResponseFormatTextJSONSchemaConfigParam{Name: "answer", Schema: map[string]any{"type": "object"}}}},
	}
}

func TestSDKResponses(t *testing.T) {
	for _, tc := range []struct {
		golden, status, text string
		items                int
	}{
		{"response.json", "completed", formatstest.Thinking().Text, 2},
		{"response_incomplete.json", "incomplete", formatstest.Length().Text, 1},
	} {
		f, url := formatstest.ServeGolden(t, 200, tc.golden)
		r, err := formatstest.OpenAI(url).Responses.New(context.Background(), responsesParams())
		if err != nil {
			t.Fatal(err)
		}
		req, err := responses.Parse(f.Got)
		if err != nil {
			t.Fatalf("the SDK's request does not parse: %v\n%s", err, f.Got)
		}
		if req.MaxTokens != 300 || req.Instructions != "Be brief." || req.Store || req.Reasoning.Effort != "high" ||
			req.Format.Type != "json_schema" || req.Metadata["topic"] != "geo" || *req.Temperature != 0.3 {
			t.Errorf("request = %+v", req)
		}
		if string(r.Status) != tc.status || r.OutputText() != tc.text || len(r.Output) != tc.items || r.Usage.TotalTokens == 0 {
			t.Errorf("%s: response = %+v", tc.golden, r)
		}
		for name, field := range map[string]interface{ Valid() bool }{
			"id": r.JSON.ID, "created_at": r.JSON.CreatedAt, "model": r.JSON.Model, "output": r.JSON.Output,
			"parallel_tool_calls": r.JSON.ParallelToolCalls, "temperature": r.JSON.Temperature, "tool_choice": r.JSON.ToolChoice,
			"tools": r.JSON.Tools, "top_p": r.JSON.TopP, "metadata": r.JSON.Metadata, "usage": r.JSON.Usage,
		} {
			if !field.Valid() {
				t.Errorf("%s: %s is not a valid field for the SDK", tc.golden, name)
			}
		}
	}
	if r := formatstest.ReadGolden(t, "response.json"); true {
		var resp oresponses.Response
		if err := resp.UnmarshalJSON(r); err != nil {
			t.Fatal(err)
		}
		if rs := resp.Output[0].AsReasoning(); resp.Output[0].Type != "reasoning" || len(rs.Summary) != 1 || rs.Summary[0].Text != formatstest.Thinking().Summary ||
			len(rs.Content) != 0 || resp.Output[1].AsMessage().Content[0].Text != formatstest.Thinking().Text {
			t.Errorf("output = %+v", resp.Output)
		}
	}
}

func TestSDKResponsesStream(t *testing.T) {
	for _, tc := range []struct {
		golden, last, text string
	}{
		{"responses_stream.sse", "response.completed", formatstest.Thinking().Text},
		{"responses_stream_incomplete.sse", "response.incomplete", formatstest.Length().Text},
		{"responses_stream_failed.sse", "response.failed", ""},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			_, url := formatstest.ServeGolden(t, 200, tc.golden)
			s := formatstest.OpenAI(url).Responses.NewStreaming(context.Background(), responsesParams())
			var last oresponses.ResponseStreamEventUnion
			var deltas strings.Builder
			seq := int64(0)
			for s.Next() {
				last = s.Current()
				if last.SequenceNumber != seq {
					t.Errorf("sequence_number %d, want %d", last.SequenceNumber, seq)
				}
				seq++
				if last.Type == "response.output_text.delta" {
					deltas.WriteString(last.Delta)
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if last.Type != tc.last || last.Response.OutputText() != tc.text {
				t.Errorf("last event %s, output %q", last.Type, last.Response.OutputText())
			}
			if tc.text != "" && deltas.String() != tc.text {
				t.Errorf("deltas %q", deltas.String())
			}
			if tc.last == "response.failed" && last.Response.Error.Code != "server_error" {
				t.Errorf("failed response error %+v", last.Response.Error)
			}
		})
	}
}

func TestSDKModels(t *testing.T) {
	_, url := formatstest.ServeGolden(t, 200, "model_list.json")
	page, err := formatstest.OpenAI(url).Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 3 || page.Data[0].ID != "core-2-5-pro" || page.Data[0].OwnedBy != "inferkit" || page.Data[0].Created != 1767225600 {
		t.Errorf("models = %+v", page.Data)
	}
}
