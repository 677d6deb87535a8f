package inferencetest

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestBERTRoundTrip(t *testing.T) {
	path := Model(t, Options{Arch: "bert", Seed: 3})
	g, f := decode(t, path)
	kv := g.KV()
	if got := kv.Architecture(); got != "bert" {
		t.Fatalf("architecture %q", got)
	}
	for key, want := range map[string]uint32{
		"context_length": 512, "embedding_length": 64, "block_count": 2,
		"feed_forward_length": 128, "attention.head_count": 4, "pooling_type": poolingRank,
	} {
		if got := kv.Uint(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}
	if kv.Bool("attention.causal", true) {
		t.Error("attention.causal is not false")
	}
	if got := kv.String("tokenizer.ggml.model"); got != "bert" {
		t.Errorf("tokenizer model %q", got)
	}
	toks := kv.Strings("tokenizer.ggml.tokens")
	if !slices.Equal(toks[:5], []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) || !slices.Contains(toks, "\u2581a") || !slices.Contains(toks, "a") {
		t.Errorf("tokens %q...", toks[:8])
	}
	names := map[string]bool{}
	for _, ts := range g.Tensors().Items() {
		names[ts.Name] = true
	}
	for _, n := range []string{
		"token_embd.weight", "token_types.weight", "position_embd.weight", "token_embd_norm.weight", "token_embd_norm.bias",
		"blk.1.attn_q.weight", "blk.1.attn_q.bias", "blk.1.attn_k.bias", "blk.1.attn_v.bias", "blk.1.attn_output.weight",
		"blk.1.attn_output_norm.bias", "blk.1.ffn_up.weight", "blk.1.ffn_down.weight", "blk.1.layer_output_norm.weight",
		"cls.weight", "cls.bias", "cls.output.weight", "cls.output.bias",
	} {
		if !names[n] {
			t.Errorf("no tensor %s", n)
		}
	}
	ts, b := tensorData(t, g, f, "cls.output.weight")
	if !slices.Equal(ts.Shape, []uint64{64, 1}) {
		t.Errorf("cls.output.weight shape %v", ts.Shape)
	}
	if x := math.Float32frombits(binary.LittleEndian.Uint32(b)); x == 0 || math.Abs(float64(x)) > 50*weightStd*2 {
		t.Errorf("cls.output.weight[0] = %v", x)
	}
	_, b = tensorData(t, g, f, "blk.0.layer_output_norm.bias")
	if !bytes.Equal(b, make([]byte, len(b))) {
		t.Error("norm bias is not zero")
	}

	// The same seed writes the same file; another seed another.
	again := filepath.Join(t.TempDir(), "again.gguf")
	if err := WriteModel(again, Options{Arch: "bert", Seed: 3}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(path)
	c, _ := os.ReadFile(again)
	if !bytes.Equal(a, c) {
		t.Error("the same options wrote different files")
	}
	other := Model(t, Options{Arch: "bert", Seed: 4})
	if d, _ := os.ReadFile(other); bytes.Equal(a, d) {
		t.Error("seeds 3 and 4 wrote the same file")
	}
}

func TestBERTOptionErrors(t *testing.T) {
	for _, o := range []Options{
		{Arch: "bert", Tokenizer: ByteLevel()},
		{Arch: "bert", ChatTemplate: "x"},
		{Arch: "bert", KVHeads: 2},
		{Arch: "bert", SlidingWindow: 32},
		{Arch: "bert", Embd: 30, Heads: 4},
		{Arch: "bert", VocabSize: 10},
		{Arch: "bert", Type: "q8_0", Embd: 48, Heads: 4},
	} {
		if err := WriteModel(filepath.Join(t.TempDir(), "m.gguf"), o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

func TestPoolingOption(t *testing.T) {
	for _, c := range []struct {
		opts    Options
		want    uint32
		classes bool
	}{
		{Options{Arch: "bert", Pooling: "mean"}, poolingMean, false},
		{Options{Arch: "bert", Pooling: "cls"}, poolingCLS, false},
		{Options{Arch: "bert"}, poolingRank, true},
		{Options{Arch: "qwen3", Pooling: "last"}, poolingLast, false},
		{Options{Pooling: "mean"}, poolingMean, false},
	} {
		g, _ := decode(t, Model(t, c.opts))
		if got := g.KV().Uint("pooling_type"); got != c.want {
			t.Errorf("%+v: pooling_type %d, want %d", c.opts, got, c.want)
		}
		head := false
		for _, ts := range g.Tensors().Items() {
			head = head || ts.Name == "cls.output.weight"
		}
		if head != c.classes {
			t.Errorf("%+v: classification head %v, want %v", c.opts, head, c.classes)
		}
	}
	for _, o := range []Options{{Arch: "bert", Pooling: "max"}, {Arch: "qwen3", Pooling: "rank"}, {Arch: "mamba", Pooling: "last"}} {
		if err := WriteModel(filepath.Join(t.TempDir(), "m.gguf"), o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}
