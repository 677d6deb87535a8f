//go:build cgo

package httpapi_test

import (
	"context"
	"strconv"
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
// system prefix's tokens when cold and 0 when warm. Both the Go SDKs
// and the TypeScript SDKs (testdata/sdk/usage.mjs) send it.
func TestUsageAddsUpRealEngine(t *testing.T) {
	path := tinyModel(t)
	t.Run("go", func(t *testing.T) { checkUsageAddsUp(t, path, goUsage(t)) })
	t.Run("typescript", func(t *testing.T) { checkUsageAddsUp(t, path, tsUsage(t)) })
}

// usageSDKs sends the conversation of usageSystem through one family of
// SDKs to the server at a URL, on each style, and reads its usage.
type usageSDKs struct {
	chat, resp func(url string) promptUsage
	// msgs sends it on messages, with a cache_control breakpoint on the
	// system block or not, and the user's turn user ("": usageUser).
	msgs func(url string, breakpoint bool, user string) promptUsage
}

// usageMaxTokens is the tokens the usage conversation generates.
const usageMaxTokens = 4

// goUsage is usageSDKs through the official Go SDKs.
func goUsage(t *testing.T) usageSDKs {
	ctx := context.Background()
	const maxTokens = usageMaxTokens
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
	msgs := func(breakpoint bool, user string) func(anthropic.Client) promptUsage {
		return func(c anthropic.Client) promptUsage {
			text := usageUser
			if user != "" {
				text = user
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
	return usageSDKs{
		chat: func(url string) promptUsage { return chat(openaiSDK(url, key)) },
		resp: func(url string) promptUsage { return resp(openaiSDK(url, key)) },
		msgs: func(url string, breakpoint bool, user string) promptUsage {
			return msgs(breakpoint, user)(anthropicSDK(url, key))
		},
	}
}

// tsUsage is usageSDKs through the official TypeScript SDKs (usage.mjs),
// with the same requests.
func tsUsage(t *testing.T) usageSDKs {
	node, dir := npmSDKs(t)
	send := func(url string, args ...string) promptUsage {
		var u struct{ Prompt, Read, Written, Input int }
		runNode(t, node, dir, url, key, &u, "usage.mjs", append([]string{policy.Core25Mini, usageSystem, strconv.Itoa(usageMaxTokens)}, args...)...)
		return promptUsage{prompt: u.Prompt, read: u.Read, written: u.Written, input: u.Input}
	}
	return usageSDKs{
		chat: func(url string) promptUsage { return send(url, "chat", usageUser) },
		resp: func(url string) promptUsage { return send(url, "responses", usageUser) },
		msgs: func(url string, breakpoint bool, user string) promptUsage {
			if user == "" {
				user = usageUser
			}
			style := "messages"
			if breakpoint {
				style = "messages-breakpoint"
			}
			return send(url, style, user)
		},
	}
}

// checkUsageAddsUp is TestUsageAddsUpRealEngine through sdks.
func checkUsageAddsUp(t *testing.T, path string, sdks usageSDKs) {
	// coldWarm sends one request twice to a fresh server: the first reads
	// nothing from the cache, the second its prefix.
	coldWarm := func(send func(url string) promptUsage) [2]promptUsage {
		url := sdkServer(t, path)
		return [2]promptUsage{send(url), send(url)}
	}
	runs := map[string][2]promptUsage{
		"chat":      coldWarm(sdks.chat),
		"responses": coldWarm(sdks.resp),
		"messages":  coldWarm(func(url string) promptUsage { return sdks.msgs(url, false, "") }),
		"messages with cache_control": coldWarm(func(url string) promptUsage {
			return sdks.msgs(url, true, "")
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
	first := sdks.msgs(url, true, "")
	other := sdks.msgs(url, true, "Write a poem about the moon.")
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
