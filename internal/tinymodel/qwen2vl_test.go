package tinymodel

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

func TestQwen2VLRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     Options
		sections []int32
	}{
		{"default", Options{Arch: "qwen2vl"}, []int32{2, 3, 3, 0}},
		// Qwen2-VL-2B's heads: 12 of 128, sections [16, 24, 24].
		{"published heads", Options{Arch: "qwen2vl", Embd: 256, Heads: 2, KVHeads: 1, HeadDim: 128, Type: "q8_0"}, []int32{16, 24, 24, 0}},
		{"narrowest heads", Options{Arch: "qwen2vl", Embd: 24, Heads: 4, KVHeads: 1}, []int32{1, 1, 1, 0}},
		{"heads of 12", Options{Arch: "qwen2vl", Embd: 48, Heads: 4, KVHeads: 4, TiedEmbeddings: true}, []int32{2, 2, 2, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, f := decode(t, Model(t, tc.opts))
			kv := g.KV()
			if got := kv.Architecture(); got != "qwen2vl" {
				t.Fatalf("architecture %q", got)
			}
			// Ints finds only an array of int32, the type llama.cpp reads.
			if got := kv.Ints("rope.dimension_sections"); !slices.Equal(got, tc.sections) {
				t.Errorf("rope.dimension_sections %v, want the int32s %v", got, tc.sections)
			}
			if got := kv.Float("rope.freq_base"); got != 1e6 {
				t.Errorf("rope.freq_base = %v, want 1e6", got)
			}
			if got := kv.Float("attention.layer_norm_rms_epsilon"); got != 1e-6 {
				t.Errorf("attention.layer_norm_rms_epsilon = %v, want 1e-6", got)
			}
			embd := uint64(cmp.Or(tc.opts.Embd, 64))
			heads := uint64(cmp.Or(tc.opts.Heads, 4))
			kvHeads := uint64(cmp.Or(tc.opts.KVHeads, 2))
			headDim := embd / heads
			if got := uint64(kv.Uint("rope.dimension_count")); got != headDim {
				t.Errorf("rope.dimension_count = %d, want %d", got, headDim)
			}
			// llama.cpp wants queries as wide as the hidden state.
			want := map[string][]uint64{
				"blk.1.attn_q.weight": {embd, embd},
				"blk.1.attn_q.bias":   {embd},
				"blk.1.attn_k.weight": {embd, kvHeads * headDim},
				"blk.1.attn_k.bias":   {kvHeads * headDim},
				"blk.1.attn_v.bias":   {kvHeads * headDim},
			}
			perLayer, n := 12, 1+1 // per layer; token embeddings and output norm
			if !tc.opts.TiedEmbeddings {
				n++
			}
			items := g.Tensors().Items()
			if len(items) != n+2*perLayer {
				t.Errorf("%d tensors, want %d", len(items), n+2*perLayer)
			}
			for _, ts := range items {
				if shape, ok := want[ts.Name]; ok {
					if !slices.Equal(ts.Shape, shape) {
						t.Errorf("%s shape %v, want %v", ts.Name, ts.Shape, shape)
					}
					delete(want, ts.Name)
				}
				if len(ts.Shape) == 1 && ts.Kind != 0 {
					t.Errorf("%s is of type %d, want F32", ts.Name, ts.Kind)
				}
			}
			for name := range want {
				t.Errorf("no tensor %s", name)
			}
			_, b := tensorData(t, g, f, "blk.0.attn_k.bias")
			bias := make([]float32, len(b)/4)
			for i := range bias {
				bias[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
			if bias[0] == 0 || bias[0] == bias[1] || slices.ContainsFunc(bias, func(x float32) bool { return math.Abs(float64(x)) > 2*weightStd }) {
				t.Errorf("attn_k.bias %v... is not random within ±%v", bias[:2], 2*weightStd)
			}
		})
	}
}
