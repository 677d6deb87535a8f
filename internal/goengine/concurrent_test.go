//go:build cgo

package goengine_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/goengine"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
)

// trace decodes prompt into sequence 0 of ctx, then steps greedy tokens,
// and returns the logits of every step, bit for bit.
func trace(m *goengine.Model, ctx backend.Context, prompt []backend.Token, steps int) ([][]float32, error) {
	ctx.ClearSequence(0)
	b := ctx.NewBatch(ctx.BatchSize())
	defer b.Close()
	var out [][]float32
	next, pos := prompt, 0
	for range steps {
		b.Clear()
		last := 0
		for k, tok := range next {
			i, err := b.Add(tok, pos+k, []int{0}, k == len(next)-1)
			if err != nil {
				return nil, err
			}
			last = i
		}
		pos += len(next)
		if err := ctx.Decode(b); err != nil {
			return nil, err
		}
		logits := slices.Clone(ctx.Logits(last))
		out = append(out, logits)
		best := 0
		for i, l := range logits {
			if l > logits[best] {
				best = i
			}
		}
		next = []backend.Token{backend.Token(best)}
	}
	return out, nil
}

// TestModelsComputeConcurrently: Go-engine models decoding at the same
// time, each from its own goroutine as the runner does, compute what each
// computes alone. Ollama's ggml backend shares one CPU backend, and its
// work buffer, between every model of the process: two forward passes at
// once corrupted each other's logits (NaN, which the runner reported as a
// grammar that admits no token) and freed the buffer under each other
// (heap corruption, SIGSEGV).
func TestModelsComputeConcurrently(t *testing.T) {
	kinds := []inferencetest.Options{
		{Arch: "qwen35"},
		{Arch: "gemma4", SlidingWindow: 16},
		{Arch: "qwen35", Seed: 7},
		{Arch: "gemma4", SlidingWindow: 16, Seed: 7},
	}
	const steps, rounds = 6, 4
	for n := 2; n <= len(kinds); n++ {
		t.Run(fmt.Sprintf("%d models", n), func(t *testing.T) {
			models := make([]*goengine.Model, n)
			ctxs := make([]backend.Context, n)
			prompts := make([][]backend.Token, n)
			alone := make([][][]float32, n)
			for i := range n {
				models[i] = load(t, kinds[i])
				ctxs[i] = newContext(t, models[i], 1)
				prompts[i], _ = models[i].Tokenize(fmt.Sprintf("Model %d: once upon a time there was a", i), true)
				var err error
				if alone[i], err = trace(models[i], ctxs[i], prompts[i], steps); err != nil {
					t.Fatal(err)
				}
			}
			for range rounds {
				var wg sync.WaitGroup
				errs := make([]error, n)
				got := make([][][]float32, n)
				for i := range n {
					wg.Go(func() { got[i], errs[i] = trace(models[i], ctxs[i], prompts[i], steps) })
				}
				wg.Wait()
				for i := range n {
					if errs[i] != nil {
						t.Fatalf("model %d: %v", i, errs[i])
					}
					for s := range steps {
						if !slices.Equal(got[i][s], alone[i][s]) {
							t.Fatalf("model %d (%s), step %d: logits differ from the model's alone", i, kinds[i].Arch, s)
						}
					}
				}
			}
		})
	}
}
