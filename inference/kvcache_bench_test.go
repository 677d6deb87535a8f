//go:build cgo

package inference_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/llamacpp"
	"github.com/inferkit/inferkit/internal/testmodels"
)

// BenchmarkKVCacheTypes compares the KV cache types on the Qwen3-0.6B
// shape: the bytes a token's keys and values take (a sequence's saved
// state over its tokens), the decode speed of one greedy stream of 48
// tokens, and how much of f16's greedy text each reproduces before the
// first difference. The three engines share the model file's pages and
// run interleaved in every iteration.
//
//	go test -run '^$' -bench BenchmarkKVCacheTypes -benchtime 5x ./inference/
func BenchmarkKVCacheTypes(b *testing.B) {
	path := testmodels.Qwen3Bench(b)
	types := []string{"f16", "q8_0", "q4_0"}

	m, err := llamacpp.LoadModel(path, llamacpp.ModelParams{})
	if err != nil {
		b.Fatal(err)
	}
	prompt := promptTokens(b, m, 256)
	perToken := make([]float64, len(types))
	for i, name := range types {
		ct, _ := llamacpp.ParseCacheType(name)
		ctx, err := llamacpp.NewContext(m, llamacpp.ContextParams{Context: 512, Threads: runtime.NumCPU(), KeyType: ct, ValueType: ct})
		if err != nil {
			b.Fatal(err)
		}
		batch := llamacpp.NewBatch(ctx, 512)
		for p, t := range prompt {
			if _, err := batch.Add(t, p, []int{0}, p == len(prompt)-1); err != nil {
				b.Fatal(err)
			}
		}
		if err := ctx.Decode(batch); err != nil {
			b.Fatal(err)
		}
		perToken[i] = float64(ctx.SequenceStateSize(0)) / float64(len(prompt))
		batch.Close()
		ctx.Close()
	}
	m.Close()

	engines := make([]*inference.Engine, len(types))
	for i, name := range types {
		if engines[i], err = inference.New(inference.Config{Models: []catalog.Model{{ID: "qwen3", Path: path}}, Parallel: 1, ContextTokens: benchPerSeq,
			KeyCache: name, ValueCache: name}); err != nil {
			b.Fatal(err)
		}
		defer engines[i].Close()
	}
	zero := 0.0
	decode := make([]time.Duration, len(types))
	tokens := make([]int, len(types))
	agree := make([]float64, len(types))
	for i := range b.N {
		var f16 string
		for t, e := range engines {
			req := inference.Request{Model: "qwen3", Prompt: fmt.Sprintf("Run %d. %s", i, benchText), MaxTokens: benchGenerate, Temperature: &zero, IgnoreEOS: true}
			res, err := e.Generate(context.Background(), req)
			if err != nil {
				b.Fatal(err)
			}
			decode[t] += res.Timings.Decode
			tokens[t] += res.Usage.CompletionTokens - 1
			if t == 0 {
				f16 = res.Text
			}
			n := 0
			for n < len(f16) && n < len(res.Text) && f16[n] == res.Text[n] {
				n++
			}
			agree[t] += float64(n) / float64(max(1, len(f16)))
		}
	}
	for t, name := range types {
		b.ReportMetric(perToken[t]/1024, "KiB/token-"+name)
		b.ReportMetric(float64(tokens[t])/decode[t].Seconds(), "tok/s-"+name)
		b.ReportMetric(100*agree[t]/float64(b.N), "%-of-f16-text-"+name)
	}
}
