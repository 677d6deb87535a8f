//go:build cgo

package inference_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/llamacpp"
	"github.com/inferkit/inferkit/internal/testmodels"
)

// BenchmarkPromptCacheRestart measures the time to the first token of a
// chat request behind a 1,900-token system prompt, in one run: cold, warm
// in the same process, and warm in a new engine on the same cache
// directory (Config.CacheDir), which restores the prefix that the first
// engine saved when it closed. Two threads, as a desktop app might give.
func BenchmarkPromptCacheRestart(b *testing.B) {
	path := testmodels.Qwen3Bench(b)
	m, err := llamacpp.LoadModel(path, llamacpp.ModelParams{})
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for _, t := range promptTokens(b, m, 1900) {
		sb.Write(m.Piece(t, false))
	}
	system := sb.String()
	m.Close()
	threads := min(2, runtime.NumCPU())
	open := func(dir string) *inference.Engine {
		e, err := inference.New(inference.Config{
			Models: []catalog.Model{{ID: "qwen3", Path: path}}, Parallel: 2, ContextTokens: 4096,
			Threads: threads, CacheDir: dir,
		})
		if err != nil {
			b.Fatal(err)
		}
		return e
	}
	zero := 0.0
	ttft := func(e *inference.Engine, system, question string) (time.Duration, inference.Usage) {
		res, err := e.Generate(context.Background(), inference.Request{Model: "qwen3", MaxTokens: 1, Temperature: &zero, NoThinking: true,
			Messages: []inference.Message{{Role: inference.RoleSystem, Content: []inference.Part{{Text: system}}}, {Role: inference.RoleUser, Content: []inference.Part{{Text: question}}}}})
		if err != nil {
			b.Fatal(err)
		}
		return res.Timings.Queued + res.Timings.Prefill, res.Usage
	}
	var cold, warm, restart, closing time.Duration
	for range b.N {
		dir := b.TempDir()
		// A distinct first line makes the whole system prompt new.
		sys := fmt.Sprintf("Session %d.\n%s", benchRun.Add(1), system)
		a := open(dir)
		d, u := ttft(a, sys, "What is the first word?")
		cold += d
		d, u2 := ttft(a, sys, "What is the last word?")
		warm += d
		start := time.Now()
		a.Close() // saves what the sequences hold
		closing += time.Since(start)
		c := open(dir)
		d, u3 := ttft(c, sys, "How many words are there?")
		restart += d
		c.Close()
		if u2.CachedTokens < 1900 || u3.CachedTokens < 1900 {
			b.Fatalf("cached tokens: %d in process, %d after a restart, of %d", u2.CachedTokens, u3.CachedTokens, u.PromptTokens)
		}
	}
	n := float64(b.N)
	b.ReportMetric(cold.Seconds()/n, "s-cold")
	b.ReportMetric(warm.Seconds()/n, "s-warm")
	b.ReportMetric(restart.Seconds()/n, "s-restart")
	b.ReportMetric(closing.Seconds()/n, "s-close")
	b.ReportMetric(0, "ns/op")
}
