//go:build cgo

package inference_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/testmodels"
)

// embedBatch is the number of inputs of one Embed call of BenchmarkEmbed.
const embedBatch = 64

// BenchmarkEmbed embeds 64 short English sentences in one call and
// reports the time per input (ns/input), on the tiny BERT embedding
// model (mean pooling) and on a Qwen3-0.6B-shaped decoder with last
// pooling (Qwen3-Embedding-0.6B's shape, random weights, the real Qwen3
// tokenizer; it skips without the tokenizer data). The batch of 2048
// tokens takes the 64 inputs in one decode on the Qwen3 model (about
// 15 tokens each); the tiny BERT tokenizes letter by letter, and takes
// two.
//
//	go test -run '^$' -bench BenchmarkEmbed -benchtime 3x ./inference/
func BenchmarkEmbed(b *testing.B) {
	inputs := make([]string, embedBatch)
	for i := range inputs {
		inputs[i] = fmt.Sprintf("Sentence %d: the river runs past the old mill while children sing.", i)
	}
	for _, c := range []struct {
		name string
		path func(testing.TB) string
	}{
		{"bert-tiny-mean", func(tb testing.TB) string {
			return inferencetest.Model(tb, inferencetest.Options{Arch: "bert", Pooling: "mean"})
		}},
		{"qwen3-0.6b-last", testmodels.Qwen3EmbedBench},
	} {
		b.Run(c.name, func(b *testing.B) {
			e, err := inference.New(inference.Config{
				Models:        []catalog.Model{{ID: "embed", Path: c.path(b)}},
				ContextTokens: 512, Batch: 2048, Threads: runtime.NumCPU(),
				Logger: slog.New(slog.DiscardHandler),
			})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			ctx := context.Background()
			req := inference.EmbedRequest{Model: "embed", Input: inputs}
			warm, err := e.Embed(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := e.Embed(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*embedBatch), "ns/input")
			b.ReportMetric(float64(warm.Usage.PromptTokens)/embedBatch, "tokens/input")
		})
	}
}
