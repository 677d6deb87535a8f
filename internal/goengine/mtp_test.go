//go:build cgo

package goengine_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/goengine"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
)

// mtpRun loads the model opts describe and returns the logits of a
// prompt's last token and the greedy tokens that follow it.
func mtpRun(t *testing.T, opts inferencetest.Options) ([]float32, []backend.Token) {
	t.Helper()
	m := load(t, opts)
	prompt, err := m.Tokenize("Once upon a time there was a", true)
	if err != nil {
		t.Fatal(err)
	}
	ctx := newContext(t, m, 2)
	b := ctx.NewBatch(ctx.BatchSize())
	defer b.Close()
	last := -1
	for k, tok := range prompt {
		if last, err = b.Add(tok, k, []int{0}, k == len(prompt)-1); err != nil {
			t.Fatal(err)
		}
	}
	if err := ctx.Decode(b); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	logits := slices.Clone(ctx.Logits(last))
	return logits, generate(t, m, ctx, map[int][]backend.Token{1: prompt}, nil, 16)[1]
}

// maxDiff is the largest absolute difference between a and b.
func maxDiff(t *testing.T, a, b []float32) float64 {
	t.Helper()
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("logits of %d and %d values", len(a), len(b))
	}
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// TestMTPBlocksDoNotRun: a qwen35 file with a multi-token-prediction
// block appended, as llama.cpp's converter writes Qwen3.5's, computes what
// the same weights without it compute: the Go engine does not run the
// MTP block as a layer.
//
// With 7 layers the MTP block is block 7, where full_attention_interval
// puts an attention layer, so Ollama's qwen3next accepts the file (see
// TestMTPBlockOnLinearSlot). The file of 8 layers and no MTP block holds
// the same blocks 0 to 7, tensor for tensor (the weights are drawn per
// tensor name), less the nextn tensors, which Ollama does not read: it is
// what the engine runs without goengine's trim, and it must differ, or
// this test could not tell.
func TestMTPBlocksDoNotRun(t *testing.T) {
	base := inferencetest.Options{Arch: "qwen35", Layers: 7, Seed: 5}
	mtp, untrimmed := base, base
	mtp.NextN = 1
	untrimmed.Layers = 8

	wantLogits, want := mtpRun(t, base)
	logits, got := mtpRun(t, mtp)
	if !slices.Equal(got, want) {
		t.Errorf("with the MTP block: %v, without: %v", got, want)
	}
	// The same graph over the same weights: the same logits.
	if d := maxDiff(t, logits, wantLogits); d > 1e-6 {
		t.Errorf("with the MTP block the logits differ by up to %g", d)
	}

	// An eighth layer of these weights moves the logits by about 2e-3
	// (seed 5), not always enough to change a greedy token.
	ranLogits, _ := mtpRun(t, untrimmed)
	if d := maxDiff(t, ranLogits, wantLogits); d < 1e-4 {
		t.Errorf("running block 7 changes the logits by only %g: this test cannot tell whether the MTP block runs", d)
	}
}

// TestMTPBlockOnLinearSlot: the pinned Ollama's qwen3next takes each
// block's kind from full_attention_interval over all of block_count, the
// MTP blocks included, and its Validate, inside model.New and so before
// goengine's trim, refuses a block at a linear-attention index that has no
// linear-attention tensors. Every published Qwen3.5 has a multiple of 4
// layers, so its MTP block (index Layers, (Layers+1)%4 == 1) is refused:
// Load fails with an error wrapping backend.ErrUnsupported that names the
// MTP blocks, and Ollama's error (ollama/ollama#16282), and does not
// panic.
func TestMTPBlockOnLinearSlot(t *testing.T) {
	path := inferencetest.Model(t, inferencetest.Options{Arch: "qwen35", Layers: 4, NextN: 1})
	m, err := goengine.Load(path, goengine.Params{Threads: 2})
	if err == nil {
		m.Close()
		t.Fatal("Load accepted an MTP block at a linear-attention index; Ollama now reads MTP blocks: update this test and the qwen35 notes")
	}
	if !errors.Is(err, backend.ErrUnsupported) || !strings.Contains(err.Error(), "1 multi-token-prediction blocks") ||
		!strings.Contains(err.Error(), "layer 4 missing attn_qkv/attn_gate projections") {
		t.Errorf("Load: %v", err)
	}
}
