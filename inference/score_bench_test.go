//go:build cgo

package inference_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/testmodels"
)

// BenchmarkDecisions answers 10 questions over a 500-token state on the
// Qwen3-0.6B-shaped model: one Score request (the state decoded once, the
// 10 questions as branches of one batch) against 10 separate
// single-question prompts, each decoded in full (cold), and against 10
// separate prompts that find the state in the prompt cache (warm). Every
// iteration uses a new state, so the one request decodes it too.
func BenchmarkDecisions(b *testing.B) {
	path := testmodels.Qwen3Bench(b)
	const questions = 10
	var tick atomic.Int64
	newEngine := func(b *testing.B, cold bool) *inference.Engine {
		cfg := inference.Config{
			Models:  []catalog.Model{{ID: "qwen3", Path: path}},
			Threads: runtime.NumCPU(), Parallel: 1, ContextTokens: 1024,
		}
		if cold {
			// Every request finds the prompt cache expired.
			cfg.Now = func() time.Time { return time.Unix(tick.Add(3600), 0) }
		}
		e, err := inference.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		return e
	}
	state := func(b *testing.B, e *inference.Engine, i int) string {
		s := fmt.Sprintf("Case %d. ", i) + strings.Repeat(benchText, 30)
		toks, err := e.Tokenize("qwen3", s)
		if err != nil || len(toks) < 500 {
			b.Fatalf("state: %d tokens, %v", len(toks), err)
		}
		// Cut at 500 tokens by text: near enough for a 500-token state.
		return s[:len(s)*500/len(toks)]
	}
	prefix := func(s string) string { return "<|im_start|>user\n<state>\n" + s + "\n</state>\n\n" }
	branch := func(q int) string {
		return fmt.Sprintf("Question %d: does the state mention animal number %d? Options:\nA. yes\nB. no\nC. unsure\nAnswer with one letter.<|im_end|>\n<|im_start|>assistant\n", q, q)
	}
	cands := func(b *testing.B, e *inference.Engine) [][]int {
		var out [][]int
		for _, l := range []string{"A", "B", "C"} {
			t, err := e.Tokenize("qwen3", l)
			if err != nil || len(t) != 1 {
				b.Fatalf("label %q: %v %v", l, t, err)
			}
			out = append(out, t)
		}
		return out
	}
	zero := 0.0
	var i int
	b.Run("one-request", func(b *testing.B) {
		e := newEngine(b, false)
		c := cands(b, e)
		var tokens int
		for range b.N {
			i++
			req := inference.ScoreRequest{Model: "qwen3", Prefix: prefix(state(b, e, i))}
			for q := range questions {
				req.Branches = append(req.Branches, inference.Branch{Text: branch(q), Candidates: c})
			}
			res, err := e.Score(context.Background(), req)
			if err != nil {
				b.Fatal(err)
			}
			tokens = res.Usage.PromptTokens
		}
		b.ReportMetric(float64(tokens), "prompt-tokens")
	})
	for _, mode := range []string{"cold", "warm"} {
		b.Run("separate-"+mode, func(b *testing.B) {
			e := newEngine(b, mode == "cold")
			for range b.N {
				i++
				s := prefix(state(b, e, i))
				for q := range questions {
					_, err := e.Generate(context.Background(), inference.Request{Model: "qwen3", Prompt: s + branch(q), MaxTokens: 1, Temperature: &zero})
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
