//go:build cgo

package httpapi_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/inferkit/inferkit/policy"
)

// logprobEntry is what a test compares of a token's entry: every value the
// wire carries.
type logprobEntry struct {
	Token   string
	Logprob float64
	Bytes   []int64
	Top     []logprobAlt
}

type logprobAlt struct {
	Token   string
	Logprob float64
	Bytes   []int64
}

func chatEntries(lps []openai.ChatCompletionTokenLogprob) []logprobEntry {
	var out []logprobEntry
	for _, lp := range lps {
		e := logprobEntry{Token: lp.Token, Logprob: lp.Logprob, Bytes: lp.Bytes}
		for _, t := range lp.TopLogprobs {
			e.Top = append(e.Top, logprobAlt{Token: t.Token, Logprob: t.Logprob, Bytes: t.Bytes})
		}
		out = append(out, e)
	}
	return out
}

func TestSDKChatLogprobs(t *testing.T) {
	url := sdkServer(t, tinyModel(t))
	client := openaiSDK(url, key)
	ctx := context.Background()
	params := chatRequest("Say hello.")
	params.ReasoningEffort = shared.ReasoningEffortNone
	params.Logprobs = openai.Bool(true)
	params.TopLogprobs = openai.Int(4)

	c, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	ch := c.Choices[0]
	blocking := chatEntries(ch.Logprobs.Content)
	if len(blocking) == 0 {
		t.Fatalf("no entries: %s", ch.Logprobs.RawJSON())
	}
	var text []byte
	for i, e := range blocking {
		for _, b := range e.Bytes {
			text = append(text, byte(b))
		}
		if len(e.Top) != 4 || e.Top[0].Token != e.Token || e.Top[0].Logprob != e.Logprob || e.Logprob > 0 {
			t.Errorf("entry %d of a greedy answer: %+v", i, e)
		}
	}
	// The random model writes bytes that are no UTF-8, which the content
	// replaces with U+FFFD; valid text must be spelled exactly.
	if utf8.Valid(text) && string(text) != ch.Message.Content || int64(len(blocking)) > c.Usage.CompletionTokens {
		t.Errorf("%d entries spell %q; the content of %d tokens is %q", len(blocking), text, c.Usage.CompletionTokens, ch.Message.Content)
	}

	// The stream carries the same entries, token for token and value for
	// value.
	s := client.Chat.Completions.NewStreaming(ctx, params)
	var streamed []logprobEntry
	var content strings.Builder
	for s.Next() {
		for _, ch := range s.Current().Choices {
			content.WriteString(ch.Delta.Content)
			streamed = append(streamed, chatEntries(ch.Logprobs.Content)...)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if content.String() != ch.Message.Content {
		t.Fatalf("streamed %q, blocking %q", content.String(), ch.Message.Content)
	}
	if !reflect.DeepEqual(streamed, blocking) {
		t.Errorf("streamed entries\n%+v\ndiffer from blocking ones\n%+v", streamed, blocking)
	}

	// Without logprobs, logprobs is null.
	params.Logprobs, params.TopLogprobs = openai.Bool(false), openai.Int(0)
	c, err = client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if raw := c.Choices[0].JSON.Logprobs.Raw(); raw != "null" {
		t.Errorf("logprobs not asked for: %s", raw)
	}
}

func TestSDKChatChoices(t *testing.T) {
	url := sdkServer(t, tinyModel(t))
	client := openaiSDK(url, key)
	ctx := context.Background()
	params := chatRequest("Tell me a story.")
	params.ReasoningEffort = shared.ReasoningEffortNone
	params.N = openai.Int(3)
	params.Temperature = openai.Float(1.5)
	params.Seed = openai.Int(11)

	c, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Choices) != 3 {
		t.Fatalf("%d choices", len(c.Choices))
	}
	texts := map[string]bool{}
	for i, ch := range c.Choices {
		if ch.Index != int64(i) || ch.Message.Content == "" {
			t.Errorf("choice %d: %+v", i, ch)
		}
		texts[ch.Message.Content] = true
	}
	if len(texts) < 2 {
		t.Errorf("three hot choices wrote the same text: %v", texts)
	}

	// The stream interleaves three choices, each ended once, and its
	// usage counts the prompt once and every choice's tokens. (Its texts
	// need not be the blocking ones: hot sampling over logits whose last
	// bits depend on what the prompt cache held may part ways.)
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := client.Chat.Completions.NewStreaming(ctx, params)
	streamed := make([]strings.Builder, 3)
	ended := make([]int, 3)
	var usage openai.CompletionUsage
	for s.Next() {
		chunk := s.Current()
		if chunk.JSON.Usage.Valid() && chunk.Usage.TotalTokens > 0 {
			usage = chunk.Usage
		}
		for _, ch := range chunk.Choices {
			streamed[ch.Index].WriteString(ch.Delta.Content)
			if ch.FinishReason != "" {
				ended[ch.Index]++
			}
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	distinct := map[string]bool{}
	for i := range 3 {
		if ended[i] != 1 || streamed[i].Len() == 0 {
			t.Errorf("choice %d: ended %d times, streamed %q", i, ended[i], streamed[i].String())
		}
		distinct[streamed[i].String()] = true
	}
	if len(distinct) < 2 {
		t.Errorf("three hot streamed choices wrote the same text: %v", distinct)
	}
	if usage.PromptTokens != c.Usage.PromptTokens || usage.CompletionTokens < 3 || usage.CompletionTokens > 3*24 ||
		usage.TotalTokens != usage.PromptTokens+usage.CompletionTokens {
		t.Errorf("streamed usage %+v, blocking %+v", usage, c.Usage)
	}
	if c.Usage.CompletionTokens < 3 || c.Usage.TotalTokens != c.Usage.PromptTokens+c.Usage.CompletionTokens {
		t.Errorf("usage %+v", c.Usage)
	}
}

func TestSDKResponsesLogprobs(t *testing.T) {
	url := sdkServer(t, tinyModel(t))
	client := openaiSDK(url, key)
	ctx := context.Background()
	params := responses.ResponseNewParams{
		Model:           policy.Core25Mini,
		Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello.")},
		MaxOutputTokens: openai.Int(16),
		Temperature:     openai.Float(0),
		Reasoning:       shared.ReasoningParam{Effort: shared.ReasoningEffortNone},
		TopLogprobs:     openai.Int(3),
		Include:         []responses.ResponseIncludable{responses.ResponseIncludableMessageOutputTextLogprobs},
	}
	r, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if r.TopLogprobs != 3 {
		t.Errorf("top_logprobs echoed as %d", r.TopLogprobs)
	}
	var blocking []logprobEntry
	for _, it := range r.Output {
		for _, c := range it.Content {
			for _, lp := range c.Logprobs {
				e := logprobEntry{Token: lp.Token, Logprob: lp.Logprob, Bytes: lp.Bytes}
				for _, top := range lp.TopLogprobs {
					e.Top = append(e.Top, logprobAlt{Token: top.Token, Logprob: top.Logprob, Bytes: top.Bytes})
				}
				blocking = append(blocking, e)
			}
		}
	}
	if len(blocking) == 0 || len(blocking[0].Top) != 3 {
		t.Fatalf("entries %+v", blocking)
	}

	// The deltas carry the same entries, token for token and value for
	// value (top alternatives' bytes aside: deltas do not carry them).
	s := client.Responses.NewStreaming(ctx, params)
	var streamed []logprobEntry
	for s.Next() {
		ev := s.Current()
		if ev.Type != "response.output_text.delta" {
			continue
		}
		for _, lp := range ev.AsResponseOutputTextDelta().Logprobs {
			e := logprobEntry{Token: lp.Token, Logprob: lp.Logprob}
			for _, top := range lp.TopLogprobs {
				e.Top = append(e.Top, logprobAlt{Token: top.Token, Logprob: top.Logprob})
			}
			streamed = append(streamed, e)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	for i := range blocking {
		blocking[i].Bytes = nil
		for k := range blocking[i].Top {
			blocking[i].Top[k].Bytes = nil
		}
	}
	if !reflect.DeepEqual(streamed, blocking) {
		t.Errorf("streamed entries\n%+v\ndiffer from blocking ones\n%+v", streamed, blocking)
	}
}
