//go:build cgo

package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/inferkit/inferkit/policy"
)

func completionRequest(prompts ...string) openai.CompletionNewParams {
	return openai.CompletionNewParams{
		Model:       policy.Core25Mini,
		Prompt:      openai.CompletionNewParamsPromptUnion{OfArrayOfStrings: prompts},
		MaxTokens:   openai.Int(8),
		Temperature: openai.Float(0),
	}
}

func TestSDKLegacyCompletions(t *testing.T) {
	url := sdkServer(t, tinyModel(t))
	client := openaiSDK(url, key)
	ctx := context.Background()

	// Two prompts, two choices each, echoed, with two alternatives a token.
	params := completionRequest("Once upon a time", "The cat sat")
	params.N, params.Echo, params.Logprobs = openai.Int(2), openai.Bool(true), openai.Int(2)
	c, err := client.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if c.Object != "text_completion" || !strings.HasPrefix(c.ID, "cmpl-") || len(c.Choices) != 4 {
		t.Fatalf("completion %+v", c)
	}
	for i, ch := range c.Choices {
		prompt := params.Prompt.OfArrayOfStrings[i/2]
		lp := ch.Logprobs
		if ch.Index != int64(i) || !strings.HasPrefix(ch.Text, prompt) || len(ch.Text) == len(prompt) {
			t.Errorf("choice %d: %+v", i, ch)
		}
		n := len(lp.Tokens)
		if n == 0 || len(lp.TokenLogprobs) != n || len(lp.TopLogprobs) != n || len(lp.TextOffset) != n {
			t.Fatalf("choice %d logprobs: %s", i, lp.RawJSON())
		}
		// Offsets grow with the tokens; the generated tokens' start at the
		// end of the echoed prompt.
		for k := 1; k < n; k++ {
			if lp.TextOffset[k] < lp.TextOffset[k-1] {
				t.Errorf("choice %d: offsets %v", i, lp.TextOffset)
			}
		}
		if last := lp.TextOffset[n-1]; last < int64(len(prompt)) {
			t.Errorf("choice %d: the last token starts at %d, inside the prompt of %d bytes", i, last, len(prompt))
		}
		for k := 1; k < n; k++ {
			if lp.TokenLogprobs[k] > 0 || len(lp.TopLogprobs[k]) == 0 || len(lp.TopLogprobs[k]) > 2 {
				t.Errorf("choice %d token %d: %v, top %v", i, k, lp.TokenLogprobs[k], lp.TopLogprobs[k])
			}
		}
	}
	if u := c.Usage; u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.CompletionTokens > 4*8 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage %+v", u)
	}

	// The stream writes the same texts, choice by choice.
	params.Logprobs = openai.Int(0)
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := client.Completions.NewStreaming(ctx, params)
	texts := make([]strings.Builder, 4)
	ended := make([]int, 4)
	var usage openai.CompletionUsage
	for s.Next() {
		chunk := s.Current()
		if chunk.Usage.TotalTokens > 0 {
			usage = chunk.Usage
		}
		for _, ch := range chunk.Choices {
			texts[ch.Index].WriteString(ch.Text)
			if ch.FinishReason != "" {
				ended[ch.Index]++
			}
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	// (The generated texts need not be the blocking ones: which choices
	// share a batch, and so the logits' last bits, depends on timing, and
	// the random model's logits are nearly flat.)
	for i := range texts {
		prompt := params.Prompt.OfArrayOfStrings[i/2]
		if !strings.HasPrefix(texts[i].String(), prompt) || len(texts[i].String()) == len(prompt) || ended[i] != 1 {
			t.Errorf("choice %d: streamed %q (ended %d times)", i, texts[i].String(), ended[i])
		}
	}
	if usage.PromptTokens != c.Usage.PromptTokens || usage.CompletionTokens <= 0 || usage.CompletionTokens > 4*8 || usage.TotalTokens != usage.PromptTokens+usage.CompletionTokens {
		t.Errorf("streamed usage %+v, blocking %+v", usage, c.Usage)
	}
}

func TestSDKLegacyCompletionScoresAPrompt(t *testing.T) {
	url := sdkServer(t, tinyModel(t))
	client := openaiSDK(url, key)
	ctx := context.Background()

	// How evaluation harnesses score a text: echo, logprobs, no tokens.
	params := completionRequest("The quick brown fox")
	params.MaxTokens, params.Echo, params.Logprobs = openai.Int(0), openai.Bool(true), openai.Int(1)
	c, err := client.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	ch := c.Choices[0]
	if ch.Text != "The quick brown fox" || ch.FinishReason != "length" || c.Usage.CompletionTokens != 0 {
		t.Fatalf("scoring: %+v, usage %+v", ch, c.Usage)
	}
	lp := ch.Logprobs
	if len(lp.Tokens) < 2 || strings.Join(lp.Tokens, "") != ch.Text {
		t.Fatalf("the prompt's tokens %q", lp.Tokens)
	}
	if raw := lp.JSON.TokenLogprobs.Raw(); !strings.HasPrefix(raw, "[null,") {
		t.Errorf("the first token, which nothing predicts, has a log-probability: %s", raw)
	}
	var sum float64
	for _, v := range lp.TokenLogprobs[1:] {
		if v >= 0 {
			t.Errorf("log-probabilities %v", lp.TokenLogprobs)
		}
		sum += v
	}
	t.Logf("log-likelihood of %q: %.3f", ch.Text, sum)

	// The same text scored twice scores the same.
	again, err := client.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := again.Choices[0].Logprobs.JSON.TokenLogprobs.Raw(), lp.JSON.TokenLogprobs.Raw(); a != b {
		t.Errorf("scored twice: %s, then %s", b, a)
	}
}

func TestLegacyCompletionRefusals(t *testing.T) {
	url := sdkServer(t, tinyModel(t))
	client := openaiSDK(url, key)
	ctx := context.Background()
	many := make([]string, 17)
	for i := range many {
		many[i] = "x"
	}
	for name, c := range map[string]struct {
		edit  func(*openai.CompletionNewParams)
		param string
	}{
		"suffix":     {func(p *openai.CompletionNewParams) { p.Suffix = openai.String("end") }, "suffix"},
		"logit_bias": {func(p *openai.CompletionNewParams) { p.LogitBias = map[string]int64{"50": 5} }, "logit_bias"},
		"best_of":    {func(p *openai.CompletionNewParams) { p.BestOf = openai.Int(3) }, "best_of"},
		"token ids": {func(p *openai.CompletionNewParams) {
			p.Prompt = openai.CompletionNewParamsPromptUnion{OfArrayOfTokenArrays: [][]int64{{1, 2}}}
		}, "prompt[0]"},
		"17 prompts":   {func(p *openai.CompletionNewParams) { p.Prompt.OfArrayOfStrings = many }, "prompt"},
		"empty prompt": {func(p *openai.CompletionNewParams) { p.Prompt.OfArrayOfStrings = []string{"a", ""} }, "prompt[1]"},
		"logprobs 6":   {func(p *openai.CompletionNewParams) { p.Logprobs = openai.Int(6) }, "logprobs"},
		"4 prompts, n 5": {func(p *openai.CompletionNewParams) {
			p.Prompt.OfArrayOfStrings, p.N = []string{"a", "b", "c", "d"}, openai.Int(5)
		}, "n"},
		"n 17":       {func(p *openai.CompletionNewParams) { p.N = openai.Int(17) }, "n"},
		"max_tokens": {func(p *openai.CompletionNewParams) { p.MaxTokens = openai.Int(1 << 20) }, "max_tokens"},
	} {
		t.Run(name, func(t *testing.T) {
			params := completionRequest("Hi")
			c.edit(&params)
			_, err := client.Completions.New(ctx, params)
			var oe *openai.Error
			if !errors.As(err, &oe) || oe.StatusCode != http.StatusBadRequest || oe.Param != c.param {
				t.Fatalf("error %v, want a 400 on %s", err, c.param)
			}
		})
	}
}
