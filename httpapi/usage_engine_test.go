//go:build cgo

package httpapi_test

import (
	"context"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/inferkit/inferkit/policy"
)

// promptUsage is one answer's prompt usage, in the three styles' terms:
// prompt tokens and those read from the cache (chat's prompt_tokens and
// cached_tokens, responses' input_tokens and cached_tokens, messages' sum
// and cache_read_input_tokens), and on messages the split of the rest.
type promptUsage struct {
	prompt, read   int
	written, input int // messages only
}

// usageSystem and usageUser make the conversation every style sends.
const (
	usageSystem = "You are a storyteller who writes short stories for children."
	usageUser   = "Tell me a story about a cat."
)

// On the real engine and a tiny model, the same conversation sent on
// chat, responses and messages, through the official SDKs, reports the
// same prompt and the same cached tokens, cold (nothing read) and warm
// (sent again: its prefix read from the cache); on messages the three
// counts sum to the prompt, cache_creation_input_tokens is 0 without a
// cache_control breakpoint, and with one on the system block it is the
// system prefix's tokens when cold and 0 when warm.
func TestUsageAddsUpRealEngine(t *testing.T) {
	path := tinyModel(t)
	ctx := context.Background()
	const maxTokens = 4

	chat := func(c openai.Client) promptUsage {
		res, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: policy.Core25Mini, MaxTokens: openai.Int(maxTokens), Temperature: openai.Float(0),
			ReasoningEffort: shared.ReasoningEffortNone,
			Messages:        []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(usageSystem), openai.UserMessage(usageUser)},
		})
		if err != nil {
			t.Fatal(err)
		}
		return promptUsage{prompt: int(res.Usage.PromptTokens), read: int(res.Usage.PromptTokensDetails.CachedTokens)}
	}
	resp := func(c openai.Client) promptUsage {
		res, err := c.Responses.New(ctx, responses.ResponseNewParams{
			Model: policy.Core25Mini, MaxOutputTokens: openai.Int(maxTokens), Temperature: openai.Float(0),
			Reasoning:    shared.ReasoningParam{Effort: shared.ReasoningEffortNone},
			Instructions: openai.String(usageSystem),
			Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String(usageUser)},
		})
		if err != nil {
			t.Fatal(err)
		}
		return promptUsage{prompt: int(res.Usage.InputTokens), read: int(res.Usage.InputTokensDetails.CachedTokens)}
	}
	msgs := func(breakpoint bool, user ...string) func(anthropic.Client) promptUsage {
		return func(c anthropic.Client) promptUsage {
			text := usageUser
			if len(user) > 0 {
				text = user[0]
			}
			system := anthropic.TextBlockParam{Text: usageSystem}
			if breakpoint {
				system.CacheControl = anthropic.NewCacheControlEphemeralParam()
			}
			res, err := c.Messages.New(ctx, anthropic.MessageNewParams{
				Model: policy.Core25Mini, MaxTokens: maxTokens, Temperature: anthropic.Float(0),
				Thinking: anthropic.ThinkingConfigParamUnion{OfDisabled: &anthropic.ThinkingConfigDisabledParam{}},
				System:   []anthropic.TextBlockParam{system},
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))},
			})
			if err != nil {
				t.Fatal(err)
			}
			u := res.Usage
			p := int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens)
			return promptUsage{prompt: p, read: int(u.CacheReadInputTokens), written: int(u.CacheCreationInputTokens), input: int(u.InputTokens)}
		}
	}
	// coldWarm sends one request twice to a fresh server: the first reads
	// nothing from the cache, the second its prefix.
	coldWarm := func(send func(url string) promptUsage) [2]promptUsage {
		url := sdkServer(t, path)
		return [2]promptUsage{send(url), send(url)}
	}
	runs := map[string][2]promptUsage{
		"chat":      coldWarm(func(url string) promptUsage { return chat(openaiSDK(url, key)) }),
		"responses": coldWarm(func(url string) promptUsage { return resp(openaiSDK(url, key)) }),
		"messages":  coldWarm(func(url string) promptUsage { return msgs(false)(anthropicSDK(url, key)) }),
		"messages with cache_control": coldWarm(func(url string) promptUsage {
			return msgs(true)(anthropicSDK(url, key))
		}),
	}
	want := runs["chat"]
	if want[0].read != 0 || want[1].read == 0 || want[1].read >= want[1].prompt || want[0].prompt != want[1].prompt {
		t.Fatalf("chat: cold %+v, warm %+v; want nothing read, then part of the prompt", want[0], want[1])
	}
	for style, got := range runs {
		for i, phase := range []string{"cold", "warm"} {
			g := got[i]
			if g.prompt != want[i].prompt || g.read != want[i].read {
				t.Errorf("%s %s: prompt %d, read %d; chat's are %d and %d", style, phase, g.prompt, g.read, want[i].prompt, want[i].read)
			}
		}
	}
	for i, g := range runs["messages"] {
		if g.written != 0 || g.input != g.prompt-g.read {
			t.Errorf("messages without a breakpoint, request %d: %+v; want nothing written, the rest input", i, g)
		}
	}
	// The same system prompt before another user turn reads the system
	// prefix from the cache, and writes nothing: the breakpoint's prefix
	// counts the tokens it shares with the whole prompt, not the
	// generation prompt that the prefix alone would end with.
	url := sdkServer(t, path)
	first := msgs(true)(anthropicSDK(url, key))
	other := msgs(true, "Write a poem about the moon.")(anthropicSDK(url, key))
	if first.written == 0 || other.read == 0 || other.written != 0 || other.input != other.prompt-other.read {
		t.Errorf("messages with a breakpoint, then another user turn: %+v, then %+v; want the system prefix read, nothing written", first, other)
	}
	cold, warm := runs["messages with cache_control"][0], runs["messages with cache_control"][1]
	// The system prefix is most of the prompt, but not the user's turn.
	if cold.written == 0 || cold.input == 0 || cold.written+cold.input != cold.prompt {
		t.Errorf("messages with a breakpoint, cold: %+v; want the system prefix written and the rest input", cold)
	}
	if warm.written != 0 || warm.input != warm.prompt-warm.read {
		t.Errorf("messages with a breakpoint, warm: %+v; want nothing written, the prefix read", warm)
	}
}
