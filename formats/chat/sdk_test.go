package chat

import (
	"context"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/openai/openai-go/v3"
)

func TestSDKChat(t *testing.T) {
	f, url := formatstest.ServeGolden(t, 200, "chat_completion.json")
	c, err := formatstest.OpenAI(url).Chat.Completions.New(context.Background(), formatstest.ChatParams())
	if err != nil {
		t.Fatal(err)
	}
	req, err := Parse(f.Got)
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
			s := formatstest.OpenAI(url).Chat.Completions.NewStreaming(context.Background(), formatstest.ChatParams())
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
	s := formatstest.OpenAI(url).Chat.Completions.NewStreaming(context.Background(), formatstest.ChatParams())
	for s.Next() {
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "overloaded") {
		t.Errorf("in-stream error = %v", err)
	}
}
