//go:build cgo

package inference_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/backend/backendtest"
	"github.com/inferkit/inferkit/internal/llamacpp"
	"github.com/inferkit/inferkit/internal/testmodels"
)

// The benchmarks run a model of Qwen3-0.6B's shape in Q8_0 with random
// weights and the real Qwen3 tokenizer: speed does not depend on the
// weights' values. `make bench` runs them; BENCHMARKS.md keeps the figures.
const (
	benchStreams    = 8   // sequences of the context, for every configuration
	benchPerSeq     = 512 // tokens per sequence
	benchPrompt     = 128 // prompt tokens of a decode run
	benchGenerate   = 48  // tokens generated per stream
	benchPrefillLen = 480 // prompt tokens of the prefill run
)

// benchRun numbers prompts that must differ from every earlier one.
var benchRun atomic.Int64

// benchText is English text to tokenize into prompts of a given length.
const benchText = backendtest.BenchText

func promptTokens(b *testing.B, m backend.Model, n int) []backend.Token {
	return backendtest.BenchTokens(b, m, n)
}

// BenchmarkBareLoop decodes over internal/llamacpp with nothing around it:
// the ceiling the engine is measured against.
func BenchmarkBareLoop(b *testing.B) {
	m, err := llamacpp.LoadModel(testmodels.Qwen3Bench(b), llamacpp.ModelParams{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	benchBackend(b, m, 1, 4, benchStreams)
}

// BenchmarkEngine measures the same work through Engine.Stream.
func BenchmarkEngine(b *testing.B) {
	path := testmodels.Qwen3Bench(b)
	e, err := inference.New(inference.Config{
		Models:        []catalog.Model{{ID: "qwen3", Path: path}},
		Parallel:      benchStreams,
		ContextTokens: benchPerSeq,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	m, _ := llamacpp.LoadModel(path, llamacpp.ModelParams{})
	prompt := func(n int) string {
		// Decode the token prefix back to text: the engine tokenizes it
		// again to the same n tokens.
		var sb strings.Builder
		for _, t := range promptTokens(b, m, n) {
			sb.Write(m.Piece(t, false))
		}
		return sb.String()
	}
	decodePrompt, prefillPrompt := prompt(benchPrompt), prompt(benchPrefillLen)
	m.Close()
	zero := 0.0

	b.Run("prefill", func(b *testing.B) {
		var tokens int
		var elapsed time.Duration
		for range b.N {
			// A distinct start keeps the prompt cache out of the figure,
			// across -count runs too.
			prompt := fmt.Sprintf("Run %d. %s", benchRun.Add(1), prefillPrompt)
			res, err := e.Generate(context.Background(), inference.Request{Model: "qwen3", Prompt: prompt, MaxTokens: 1, Temperature: &zero})
			if err != nil {
				b.Fatal(err)
			}
			if res.Usage.CachedTokens > 4 {
				b.Fatalf("%d prompt tokens came from the cache", res.Usage.CachedTokens)
			}
			tokens += res.Usage.PromptTokens - res.Usage.CachedTokens // decoded
			elapsed += res.Timings.Prefill
		}
		b.ReportMetric(float64(tokens)/elapsed.Seconds(), "tok/s")
	})
	for _, streams := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("decode/streams=%d", streams), func(b *testing.B) {
			var tokens int
			var elapsed time.Duration
			for range b.N {
				// Each stream records when each of its tokens arrives
				// (backendtest.SteadyWindow).
				arrivals := make([][]time.Time, streams)
				var wg sync.WaitGroup
				for s := range streams {
					wg.Go(func() {
						req := inference.Request{Model: "qwen3", Prompt: decodePrompt, MaxTokens: benchGenerate, Temperature: &zero, IgnoreEOS: true}
						for ev, err := range e.Stream(context.Background(), req) {
							if err != nil {
								b.Error(err)
								return
							}
							if ev.Text != "" || ev.Final != nil {
								arrivals[s] = append(arrivals[s], time.Now())
							}
						}
					})
				}
				wg.Wait()
				n, d := backendtest.SteadyWindow(arrivals)
				tokens, elapsed = tokens+n, elapsed+d
			}
			b.ReportMetric(float64(tokens)/elapsed.Seconds(), "tok/s")
		})
	}
}
