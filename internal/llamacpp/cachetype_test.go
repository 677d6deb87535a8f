package llamacpp_test

import (
	"math"
	"testing"

	"github.com/inferkit/inferkit/internal/llamacpp"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
)

// A quantized KV cache holds the same tokens in less memory: q8_0 about
// 34/64 of f16, q4_0 about 18/64.
func TestCacheTypesShrinkTheState(t *testing.T) {
	// Heads of 64 dimensions: two blocks of 32 a head, as real models.
	m, err := llamacpp.LoadModel(inferencetest.Model(t, inferencetest.Options{Embd: 128, Heads: 2}), llamacpp.ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	prompt, err := m.Tokenize("The cache holds the keys and values of every token of the prompt.", true)
	if err != nil {
		t.Fatal(err)
	}
	size := map[llamacpp.CacheType]int{}
	for _, ct := range []llamacpp.CacheType{llamacpp.CacheF16, llamacpp.CacheQ8_0, llamacpp.CacheQ4_0} {
		ctx, err := llamacpp.NewContext(m, llamacpp.ContextParams{Context: 256, Threads: 1, KeyType: ct, ValueType: ct})
		if err != nil {
			t.Fatalf("%v: %v", ct, err)
		}
		b := llamacpp.NewBatch(ctx, 256)
		for i, tok := range prompt {
			if _, err := b.Add(tok, i, []int{0}, i == len(prompt)-1); err != nil {
				t.Fatal(err)
			}
		}
		if err := ctx.Decode(b); err != nil {
			t.Fatalf("%v: %v", ct, err)
		}
		logits := ctx.Logits(len(prompt) - 1)
		for _, l := range logits {
			if math.IsNaN(float64(l)) || math.IsInf(float64(l), 0) {
				t.Fatalf("%v: logit %v", ct, l)
			}
		}
		size[ct] = ctx.SequenceStateSize(0)
		b.Close()
		ctx.Close()
	}
	f16 := float64(size[llamacpp.CacheF16])
	t.Logf("state of %d tokens: f16 %d bytes, q8_0 %d, q4_0 %d", len(prompt), size[llamacpp.CacheF16], size[llamacpp.CacheQ8_0], size[llamacpp.CacheQ4_0])
	if r := float64(size[llamacpp.CacheQ8_0]) / f16; r < 0.45 || r > 0.6 {
		t.Errorf("q8_0 state is %.2f of f16's", r)
	}
	if r := float64(size[llamacpp.CacheQ4_0]) / f16; r < 0.22 || r > 0.35 {
		t.Errorf("q4_0 state is %.2f of f16's", r)
	}
}

// llama.cpp aborts the process on a quantized cache whose heads are not
// a multiple of 32 wide: NewContext refuses it first.
func TestQuantizedCacheNeedsWideHeads(t *testing.T) {
	m, err := llamacpp.LoadModel(inferencetest.Model(t, inferencetest.Options{Embd: 64, Heads: 8}), llamacpp.ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if k, v := m.HeadDims(); k != 8 || v != 8 {
		t.Fatalf("head dims %d, %d", k, v)
	}
	for _, p := range []llamacpp.ContextParams{{KeyType: llamacpp.CacheQ8_0}, {ValueType: llamacpp.CacheQ4_0}} {
		p.Context = 64
		if ctx, err := llamacpp.NewContext(m, p); err == nil {
			ctx.Close()
			t.Errorf("%+v: a context", p)
		}
	}
}
