//go:build cgo

package httpapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/inferkit/inferkit/internal/testmodels"
	"github.com/inferkit/inferkit/policy"
)

// POST /v1/messages/count_tokens, driven by the Anthropic Go SDK, counts
// what POST /v1/messages counts as input for the same body: system, tools
// and the thinking switch included, each of which changes the count (the
// thinking switch on Qwen3's template, which writes an empty thinking
// section when thinking is off).
func TestSDKCountTokens(t *testing.T) {
	t.Run("byte-level", func(t *testing.T) { checkCountTokens(t, toolServer(t), false) })
	t.Run("qwen3", func(t *testing.T) { checkCountTokens(t, serveSpecIDs(t, testmodels.Qwen3Tiny(t), 4096), true) })
}

func checkCountTokens(t *testing.T, url string, thinkingCounts bool) {
	client := anthropicSDK(url, key)
	ctx := context.Background()
	user := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather in Paris?"))}
	system := []anthropic.TextBlockParam{{Text: "Answer with the tools you have."}}
	tools := anthropicTools(t)
	var countTools []anthropic.MessageCountTokensToolUnionParam
	for _, tool := range tools {
		countTools = append(countTools, anthropic.MessageCountTokensToolUnionParam{OfTool: tool.OfTool})
	}
	cases := []struct {
		name  string
		count anthropic.MessageCountTokensParams
		new   anthropic.MessageNewParams
	}{
		{"messages", anthropic.MessageCountTokensParams{Model: policy.Core25Mini, Messages: user},
			anthropic.MessageNewParams{Model: policy.Core25Mini, MaxTokens: 4, Messages: user}},
		{"system", anthropic.MessageCountTokensParams{Model: policy.Core25Mini, Messages: user, System: anthropic.MessageCountTokensParamsSystemUnion{OfTextBlockArray: system}},
			anthropic.MessageNewParams{Model: policy.Core25Mini, MaxTokens: 4, Messages: user, System: system}},
		{"tools", anthropic.MessageCountTokensParams{Model: policy.Core25Mini, Messages: user, System: anthropic.MessageCountTokensParamsSystemUnion{OfTextBlockArray: system}, Tools: countTools},
			anthropic.MessageNewParams{Model: policy.Core25Mini, MaxTokens: 4, Messages: user, System: system, Tools: tools}},
		{"thinking off", anthropic.MessageCountTokensParams{Model: policy.Core25Mini, Messages: user, Thinking: anthropic.ThinkingConfigParamUnion{OfDisabled: &anthropic.ThinkingConfigDisabledParam{}}},
			anthropic.MessageNewParams{Model: policy.Core25Mini, MaxTokens: 4, Messages: user, Thinking: anthropic.ThinkingConfigParamUnion{OfDisabled: &anthropic.ThinkingConfigDisabledParam{}}}},
	}
	counts := map[string]int64{}
	for _, c := range cases {
		got, err := client.Messages.CountTokens(ctx, c.count)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		msg, err := client.Messages.New(ctx, c.new)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// The prompt is Anthropic's sum of the three input counts.
		if want := msg.Usage.InputTokens + msg.Usage.CacheCreationInputTokens + msg.Usage.CacheReadInputTokens; got.InputTokens != want {
			t.Errorf("%s: count_tokens says %d, /v1/messages read %d", c.name, got.InputTokens, want)
		}
		counts[c.name] = got.InputTokens
	}
	if !(counts["messages"] < counts["system"] && counts["system"] < counts["tools"]) || thinkingCounts && counts["thinking off"] == counts["messages"] {
		t.Errorf("counts %v: the system prompt, the tools and the thinking switch must each change the count", counts)
	}
	var ae *anthropic.Error
	if _, err := client.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: "core-9", Messages: user}); !errors.As(err, &ae) || ae.StatusCode != 400 {
		t.Errorf("unknown model: %v", err)
	}
}
