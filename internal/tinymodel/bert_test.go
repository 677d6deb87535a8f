package tinymodel

import (
	"bytes"
	"encoding/binary"
	"fmt"
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
	if len(toks) != WordPieceSize {
		t.Errorf("%d tokens, WordPieceSize %d", len(toks), WordPieceSize)
	}
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

// TestNomicBERTRoundTrip checks the keys and tensors that llama.cpp's
// LLM_ARCH_NOMIC_BERT loader reads: the fused attn_qkv, the SwiGLU
// ffn_gate, ffn_up and ffn_down, no learned positions, and no biases but
// the layer norms'.
func TestNomicBERTRoundTrip(t *testing.T) {
	opts := Options{Arch: "nomic-bert", Pooling: "mean", Seed: 3}
	path := Model(t, opts)
	g, f := decode(t, path)
	kv := g.KV()
	if got := kv.Architecture(); got != "nomic-bert" {
		t.Fatalf("architecture %q", got)
	}
	for key, want := range map[string]uint32{
		"context_length": 2048, "embedding_length": 64, "block_count": 2,
		"feed_forward_length": 128, "attention.head_count": 4, "pooling_type": poolingMean,
	} {
		if got := kv.Uint(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}
	if got := kv.Float("rope.freq_base"); got != 1000 {
		t.Errorf("rope.freq_base = %v, want 1000", got)
	}
	if got := kv.Float("attention.layer_norm_epsilon"); got != 1e-12 {
		t.Errorf("attention.layer_norm_epsilon = %v", got)
	}
	if kv.Bool("attention.causal", true) {
		t.Error("attention.causal is not false")
	}
	if got := kv.String("tokenizer.ggml.model"); got != "bert" {
		t.Errorf("tokenizer model %q", got)
	}
	if got := kv.Uint("tokenizer.ggml.token_type_count"); got != 2 {
		t.Errorf("token_type_count %d", got)
	}
	if toks := kv.Strings("tokenizer.ggml.tokens"); !slices.Equal(toks[:5], []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
		t.Errorf("tokens %q...", toks[:8])
	}

	shapes := map[string][]uint64{}
	for _, ts := range g.Tensors().Items() {
		shapes[ts.Name] = ts.Shape
	}
	want := map[string][]uint64{
		"token_embd.weight":      {64, uint64(len(kv.Strings("tokenizer.ggml.tokens")))},
		"token_types.weight":     {64, 2},
		"token_embd_norm.weight": {64},
		"token_embd_norm.bias":   {64},
	}
	for i := range 2 {
		b := fmt.Sprintf("blk.%d.", i)
		for name, shape := range map[string][]uint64{
			"attn_qkv.weight":          {64, 3 * 64},
			"attn_output.weight":       {64, 64},
			"attn_output_norm.weight":  {64},
			"attn_output_norm.bias":    {64},
			"ffn_gate.weight":          {64, 128},
			"ffn_up.weight":            {64, 128},
			"ffn_down.weight":          {128, 64},
			"layer_output_norm.weight": {64},
			"layer_output_norm.bias":   {64},
		} {
			want[b+name] = shape
		}
	}
	for name, shape := range want {
		if got, ok := shapes[name]; !ok {
			t.Errorf("no tensor %s", name)
		} else if !slices.Equal(got, shape) {
			t.Errorf("%s shape %v, want %v", name, got, shape)
		}
	}
	// llama.cpp's nomic-bert layers are these tensors and no more: a
	// tensor it does not expect (position_embd, attn_q, a projection's
	// bias, a classification head) fails the load.
	for name := range shapes {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected tensor %s", name)
		}
	}
	// The attention projections are scaled up to fanIn, beyond the
	// largest value weightStd gives (sqrt(3)*weightStd), so that word
	// order moves the vectors; the feed-forward layer is not.
	for name, scaled := range map[string]bool{"blk.1.attn_qkv.weight": true, "blk.1.attn_output.weight": true, "blk.1.ffn_up.weight": false} {
		var most float64
		for _, x := range floats(t, g, f, name) {
			most = max(most, math.Abs(float64(x)))
		}
		if limit := math.Sqrt(3) * weightStd; most == 0 || (most > limit*1.001) != scaled {
			t.Errorf("%s: largest value %v, scaled %v", name, most, scaled)
		}
	}

	// The same seed writes the same file; another seed another.
	again := filepath.Join(t.TempDir(), "again.gguf")
	if err := WriteModel(again, opts); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(path)
	c, _ := os.ReadFile(again)
	if !bytes.Equal(a, c) {
		t.Error("the same options wrote different files")
	}
	opts.Seed = 4
	if d, _ := os.ReadFile(Model(t, opts)); bytes.Equal(a, d) {
		t.Error("seeds 3 and 4 wrote the same file")
	}
	// Pooling defaults to mean, since llama.cpp requires the key.
	g, _ = decode(t, Model(t, Options{Arch: "nomic-bert"}))
	if got := g.KV().Uint("pooling_type"); got != poolingMean {
		t.Errorf("default pooling_type %d, want %d", got, poolingMean)
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
		{Arch: "nomic-bert", Pooling: "rank"},
		{Arch: "nomic-bert", Pooling: "max"},
		{Arch: "nomic-bert", Embd: 36, Heads: 4},
		{Arch: "nomic-bert", KVHeads: 2},
		{Arch: "nomic-bert", HeadDim: 16},
		{Arch: "nomic-bert", Tokenizer: ByteLevel()},
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
