//go:build cgo

package inference_test

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/goengine"
	"github.com/inferkit/inferkit/internal/llamacpp"
	"github.com/inferkit/inferkit/internal/testmodels"
)

// BenchmarkBackends measures both backends bare, as BenchmarkBareLoop
// measures llama.cpp: prefill and decode tokens per second on the
// Qwen3-0.6B-shaped file, which both load, and on the Qwen3.5-0.8B-shaped
// file, which only Ollama's Go engine loads. Run it with -count 5 for
// medians; the backends alternate within each count.
func BenchmarkBackends(b *testing.B) {
	files := []struct {
		name     string
		path     func(testing.TB) string
		backends []string
	}{
		{"qwen3-0.6b", testmodels.Qwen3Bench, []string{backend.LlamaCpp, backend.Ollama}},
		{"qwen3.5-0.8b", testmodels.Qwen35Bench, []string{backend.Ollama}},
	}
	for _, f := range files {
		for _, name := range f.backends {
			b.Run(f.name+"/"+name, func(b *testing.B) {
				m := loadBackend(b, name, f.path(b))
				defer m.Close()
				benchBackend(b, m, 1, 4)
			})
		}
	}
}

func loadBackend(b *testing.B, name, path string) backend.Model {
	var m backend.Model
	var err error
	if name == backend.Ollama {
		m, err = goengine.Load(path, goengine.Params{Threads: runtime.NumCPU()})
	} else {
		m, err = llamacpp.LoadModel(path, llamacpp.ModelParams{})
	}
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// benchBackend decodes over the backend seam with nothing around it: a
// prompt of benchPrefillLen tokens in one batch, then, for each count of
// streams, benchGenerate tokens of each stream after a prompt of its own.
func benchBackend(b *testing.B, m backend.Model, streams ...int) {
	most := slices.Max(streams)
	ctx, err := m.NewContext(backend.ContextParams{Context: most * benchPerSeq, Batch: 512, Sequences: most, Threads: runtime.NumCPU()})
	if err != nil {
		b.Fatal(err)
	}
	defer ctx.Close()
	batch := ctx.NewBatch(512)
	defer batch.Close()
	b.Run("prefill", func(b *testing.B) {
		p := promptTokens(b, m, benchPrefillLen)
		var elapsed time.Duration
		for range b.N {
			ctx.Clear()
			batch.Clear()
			for i, t := range p {
				if _, err := batch.Add(t, i, []int{0}, i == len(p)-1); err != nil {
					b.Fatal(err)
				}
			}
			start := time.Now()
			if err := ctx.Decode(batch); err != nil {
				b.Fatal(err)
			}
			elapsed += time.Since(start)
		}
		b.ReportMetric(float64(benchPrefillLen*b.N)/elapsed.Seconds(), "tok/s")
	})
	for _, n := range streams {
		b.Run(fmt.Sprintf("decode/streams=%d", n), func(b *testing.B) {
			p := promptTokens(b, m, benchPrompt)
			var elapsed time.Duration
			for range b.N {
				ctx.Clear()
				next := make([]backend.Token, n)
				samplers := make([]backend.Sampler, n)
				for s := range n {
					sm, err := m.NewSampler(backend.SamplerParams{Ban: m.EOGTokens()})
					if err != nil {
						b.Fatal(err)
					}
					defer sm.Close()
					samplers[s] = sm
					batch.Clear()
					for i, t := range p {
						batch.Add(t, i, []int{s}, i == len(p)-1)
					}
					if err := ctx.Decode(batch); err != nil {
						b.Fatal(err)
					}
					next[s] = sm.Sample(ctx, len(p)-1, nil)
				}
				start := time.Now()
				for step := range benchGenerate - 1 {
					batch.Clear()
					for s := range n {
						batch.Add(next[s], benchPrompt+step, []int{s}, true)
					}
					if err := ctx.Decode(batch); err != nil {
						b.Fatal(err)
					}
					for s := range n {
						next[s] = samplers[s].Sample(ctx, s, nil)
					}
				}
				elapsed += time.Since(start)
			}
			b.ReportMetric(float64(n*(benchGenerate-1)*b.N)/elapsed.Seconds(), "tok/s")
		})
	}
}
