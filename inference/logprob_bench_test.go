//go:build cgo

package inference_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/testmodels"
)

// BenchmarkLogprobs measures what log-probabilities cost a decode on the
// Qwen3-0.6B-shaped model (a vocabulary of 151,936): one stream of 48
// greedy tokens without them, with each token's, and with 20 alternatives
// each, the three interleaved in every iteration so that they share the
// machine's state. It reports each one's decode speed and the overheads.
//
//	go test -run '^$' -bench BenchmarkLogprobs -benchtime 5x ./inference/
func BenchmarkLogprobs(b *testing.B) {
	e, err := inference.New(inference.Config{
		Models:        []catalog.Model{{ID: "qwen3", Path: testmodels.Qwen3Bench(b)}},
		ContextTokens: benchPerSeq,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	zero := 0.0
	variants := []struct {
		name string
		on   bool
		top  int
	}{{"off", false, 0}, {"logprobs", true, 0}, {"top20", true, 20}}
	decode := make([]time.Duration, len(variants))
	tokens := make([]int, len(variants))
	for i := range b.N {
		for v, variant := range variants {
			req := inference.Request{Model: "qwen3", Prompt: fmt.Sprintf("Run %d. %s", i, benchText), MaxTokens: benchGenerate,
				Temperature: &zero, IgnoreEOS: true, Logprobs: variant.on, TopLogprobs: variant.top}
			res, err := e.Generate(context.Background(), req)
			if err != nil {
				b.Fatal(err)
			}
			decode[v] += res.Timings.Decode
			tokens[v] += res.Usage.CompletionTokens - 1 // the first token ends the prefill
		}
	}
	speed := func(v int) float64 { return float64(tokens[v]) / decode[v].Seconds() }
	for v, variant := range variants {
		b.ReportMetric(speed(v), "tok/s-"+variant.name)
	}
	b.ReportMetric(100*(speed(0)/speed(1)-1), "%-overhead-logprobs")
	b.ReportMetric(100*(speed(0)/speed(2)-1), "%-overhead-top20")
}
