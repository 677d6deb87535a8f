package messages

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/formats/internal/wire"
)

func TestSDKMessages(t *testing.T) {
	f, url := formatstest.ServeGolden(t, 200, "message.json")
	m, err := formatstest.Anthropic(url).Messages.New(context.Background(), formatstest.MessagesParams())
	if err != nil {
		t.Fatal(err)
	}
	req, err := Parse(f.Got)
	if err != nil {
		t.Fatalf("the SDK's request does not parse: %v\n%s", err, f.Got)
	}
	if req.MaxTokens != 1024 || req.Instructions != "Be brief." || req.Reasoning.BudgetTokens != 512 || *req.TopK != 40 ||
		req.Stop[0] != "END" || req.User != "u1" || req.Tools[0].Name != "get_weather" {
		t.Errorf("request = %+v", req)
	}
	if m.ID != "msg_test1" || len(m.Content) != 2 || m.Content[0].Type != "thinking" || m.Content[0].Thinking != formatstest.Thinking().Reasoning ||
		m.Content[0].Signature == "" || m.Content[1].Text != formatstest.Thinking().Text || m.StopReason != "end_turn" ||
		m.Usage.CacheReadInputTokens != 8 || m.Usage.CacheCreationInputTokens != 0 || m.Usage.InputTokens != 12 || m.Usage.OutputTokens != 15 {
		t.Errorf("message = %+v", m)
	}
	// The message goes back into a next request as the SDK builds it.
	next := formatstest.MessagesParams()
	next.Messages = append(next.Messages, m.ToParam(), anthropic.NewUserMessage(anthropic.NewTextBlock("And Spain?")))
	f2, url2 := formatstest.ServeGolden(t, 200, "message_stop.json")
	if _, err := formatstest.Anthropic(url2).Messages.New(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	req2, err := Parse(f2.Got)
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
			s := formatstest.Anthropic(url).Messages.NewStreaming(context.Background(), formatstest.MessagesParams())
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
			// input_tokens with the split into cache reads and the rest
			// (no breakpoint, so no cache writes).
			if u := m.Usage; u.CacheCreationInputTokens != 0 || u.InputTokens+u.CacheReadInputTokens != tc.prompt || u.InputTokens == tc.prompt && tc.blocks == 2 {
				t.Errorf("accumulated %+v", m)
			}
			if tc.blocks == 2 && (m.Content[0].Thinking != formatstest.Thinking().Reasoning || m.Content[0].Signature == "") {
				t.Errorf("thinking block %+v", m.Content[0])
			}
		})
	}
	_, url := formatstest.ServeGolden(t, 200, "messages_stream_error.sse")
	s := formatstest.Anthropic(url).Messages.NewStreaming(context.Background(), formatstest.MessagesParams())
	for s.Next() {
	}
	var ae *anthropic.Error
	if err := s.Err(); !errors.As(err, &ae) || !strings.Contains(ae.RawJSON(), "api_error") {
		t.Errorf("in-stream error = %v", err)
	}
}
