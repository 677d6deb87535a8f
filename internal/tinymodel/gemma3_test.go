package tinymodel

import (
	"slices"
	"testing"
)

func TestGemma3Options(t *testing.T) {
	path := Model(t, Options{
		Arch: "gemma3", Layers: 12, Embd: 32, Heads: 2, KVHeads: 1, HeadDim: 32,
		SlidingWindow: 100, TiedEmbeddings: true,
	})
	g, _ := decode(t, path)
	kv := g.KV()
	for key, want := range map[string]uint32{
		"block_count": 12, "attention.sliding_window": 100, "attention.key_length": 32,
		"attention.head_count": 2, "attention.head_count_kv": 1, "rope.dimension_count": 32,
	} {
		if got := kv.Uint(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}
	if got := kv.Float("rope.freq_base"); got != 1e6 {
		t.Errorf("rope.freq_base = %v, want 1e6", got)
	}
	if got := kv.Float("attention.layer_norm_rms_epsilon"); got != 1e-6 {
		t.Errorf("attention.layer_norm_rms_epsilon = %v, want 1e-6", got)
	}
	want := map[string][]uint64{
		"blk.11.attn_q.weight":              {32, 64},
		"blk.11.attn_k.weight":              {32, 32},
		"blk.11.attn_output.weight":         {64, 32},
		"blk.11.attn_q_norm.weight":         {32},
		"blk.11.attn_k_norm.weight":         {32},
		"blk.11.post_attention_norm.weight": {32},
		"blk.11.post_ffw_norm.weight":       {32},
	}
	items := g.Tensors().Items()
	if len(items) != 1+12*13+1 {
		t.Errorf("%d tensors, want %d", len(items), 1+12*13+1)
	}
	for _, ts := range items {
		if ts.Name == "output.weight" {
			t.Error("output.weight written with tied embeddings")
		}
		if shape, ok := want[ts.Name]; ok {
			if !slices.Equal(ts.Shape, shape) {
				t.Errorf("%s shape %v, want %v", ts.Name, ts.Shape, shape)
			}
			delete(want, ts.Name)
		}
	}
	for name := range want {
		t.Errorf("no tensor %s", name)
	}
}
