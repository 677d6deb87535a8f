//go:build cgo

package inference_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/testmodels"
)

// BenchmarkRecurrentTurns measures checkpoints of recurrent state on the
// Qwen3.5-0.8B-shaped file (Ollama's Go engine): the time to the first
// token of a conversation's fourth turn, after a system prompt of about
// 500 tokens and three turns, against that of a prompt of only a turn's
// new tokens (a first turn of the fourth question alone). The goal
// is a ratio of at most 1.5. It reports the fourth turn's prompt tokens
// and the part it prefilled.
func BenchmarkRecurrentTurns(b *testing.B) {
	e, err := inference.New(inference.Config{
		Models:        []catalog.Model{{ID: "qwen35", Path: testmodels.Qwen35Bench(b)}},
		Parallel:      1,
		ContextTokens: 4096,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	zero := 0.0
	run := func(msgs []inference.Message) inference.Result {
		res, err := e.Generate(context.Background(), inference.Request{Model: "qwen35", Messages: msgs, MaxTokens: 8, Temperature: &zero})
		if err != nil {
			b.Fatal(err)
		}
		return res
	}
	ttft := func(r inference.Result) time.Duration { return r.Timings.Queued + r.Timings.Prefill }
	var turn4, alone time.Duration
	var prompt, prefilled, aloneTokens int
	for range b.N {
		i := benchRun.Add(1)
		// A distinct first line makes the whole conversation new.
		msgs := []inference.Message{inference.Text(inference.RoleSystem, fmt.Sprintf("Run %d. %s", i, strings.Repeat(benchText, 20)))}
		var res inference.Result
		for turn := range 4 {
			msgs = append(msgs, inference.Text(inference.RoleUser, fmt.Sprintf("Question %d: what does the fox do next, and why?", turn)))
			res = run(msgs)
			msgs = append(msgs, inference.Text(inference.RoleAssistant, res.Text))
		}
		turn4 += ttft(res)
		prompt += res.Usage.PromptTokens
		prefilled += res.Usage.PromptTokens - res.Usage.CachedTokens
		res = run([]inference.Message{inference.Text(inference.RoleUser, fmt.Sprintf("Run %d. Question 3: what does the fox do next, and why?", i))})
		alone += ttft(res)
		aloneTokens += res.Usage.PromptTokens - res.Usage.CachedTokens
	}
	b.ReportMetric(float64(turn4.Milliseconds())/float64(b.N), "ms/ttft-turn4")
	b.ReportMetric(float64(alone.Milliseconds())/float64(b.N), "ms/ttft-new-only")
	b.ReportMetric(float64(turn4)/float64(alone), "ratio")
	b.ReportMetric(float64(prompt)/float64(b.N), "turn4-prompt-tokens")
	b.ReportMetric(float64(prefilled)/float64(b.N), "turn4-prefilled-tokens")
	b.ReportMetric(float64(aloneTokens)/float64(b.N), "new-only-prefilled-tokens")
}
