package tinymodel

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ollama/ollama/fs/ggml"
)

func TestMambaRoundTrip(t *testing.T) {
	for _, arch := range []string{"mamba", "jamba"} {
		for _, typ := range []struct {
			name   string
			ftype  uint32
			matrix ggml.TensorType
		}{
			{"f32", 0, ggml.TensorTypeF32},
			{"f16", 1, ggml.TensorTypeF16},
			{"q8_0", 7, ggml.TensorTypeQ8_0},
		} {
			t.Run(arch+"/"+typ.name, func(t *testing.T) {
				path := Model(t, Options{Arch: arch, Type: typ.name})
				g, _ := decode(t, path)
				kv := g.KV()
				if got := kv.Architecture(); got != arch {
					t.Fatalf("architecture %q", got)
				}
				ff, heads := uint32(0), uint32(0)
				if arch == "jamba" {
					ff, heads = 128, 4
				}
				for k, want := range map[string]uint32{
					"general.file_type":           typ.ftype,
					"vocab_size":                  263,
					"context_length":              2048,
					"embedding_length":            64,
					"block_count":                 2,
					"feed_forward_length":         ff,
					"attention.head_count":        heads,
					"ssm.conv_kernel":             4,
					"ssm.inner_size":              128,
					"ssm.state_size":              16,
					"ssm.time_step_rank":          4,
					"tokenizer.ggml.eos_token_id": 258,
				} {
					if got := kv.Uint(k, math.MaxUint32); got != want {
						t.Errorf("%s = %d, want %d", k, got, want)
					}
				}
				if got := kv.Float("attention.layer_norm_rms_epsilon"); got != 1e-5 {
					t.Errorf("attention.layer_norm_rms_epsilon = %v", got)
				}
				if got := kv.String("tokenizer.chat_template"); got != ChatML {
					t.Errorf("chat template %q", got)
				}
				if got := len(kv.Strings("tokenizer.ggml.tokens")); got != 263 {
					t.Errorf("%d tokens", got)
				}
				if arch == "jamba" {
					// llama.cpp makes the layers with no key-value heads recurrent.
					if got := kv.Ints("attention.head_count_kv"); !slices.Equal(got, []int32{0, 2}) {
						t.Errorf("attention.head_count_kv = %v, want [0 2]", got)
					}
				} else {
					if _, ok := kv["mamba.attention.head_count_kv"]; ok {
						t.Error("mamba has attention.head_count_kv")
					}
					if kv.Bool("ssm.dt_b_c_rms", true) {
						t.Error("ssm.dt_b_c_rms is not false")
					}
				}

				want := map[string][]uint64{
					"token_embd.weight":       {64, 263},
					"output_norm.weight":      {64},
					"output.weight":           {64, 263},
					"blk.0.attn_norm.weight":  {64},
					"blk.0.ssm_in.weight":     {64, 256},
					"blk.0.ssm_conv1d.weight": {4, 128},
					"blk.0.ssm_conv1d.bias":   {128},
					"blk.0.ssm_x.weight":      {128, 4 + 2*16},
					"blk.0.ssm_dt.weight":     {4, 128},
					"blk.0.ssm_dt.bias":       {128},
					"blk.0.ssm_a":             {16, 128},
					"blk.0.ssm_d":             {128},
					"blk.0.ssm_out.weight":    {128, 64},
					"blk.1.attn_norm.weight":  {64},
				}
				// Per layer: attn_norm and 9 tensors of a Mamba block; jamba
				// adds 3 norms and the feed-forward layer to its Mamba
				// blocks, and has attention in layer 1.
				n := 3 + 2*10
				if arch == "jamba" {
					for name, shape := range map[string][]uint64{
						"blk.0.ssm_dt_norm.weight": {4},
						"blk.0.ssm_b_norm.weight":  {16},
						"blk.0.ssm_c_norm.weight":  {16},
						"blk.0.ffn_norm.weight":    {64},
						"blk.0.ffn_gate.weight":    {64, 128},
						"blk.1.attn_q.weight":      {64, 64},
						"blk.1.attn_k.weight":      {64, 32},
						"blk.1.attn_v.weight":      {64, 32},
						"blk.1.attn_output.weight": {64, 64},
						"blk.1.ffn_down.weight":    {128, 64},
					} {
						want[name] = shape
					}
					n = 3 + (1 + 9 + 3 + 4) + (1 + 4 + 4)
				} else {
					want["blk.1.ssm_a"] = []uint64{16, 128}
				}
				items := g.Tensors().Items()
				if len(items) != n {
					t.Errorf("%d tensors, want %d", len(items), n)
				}
				typed := map[string]bool{"token_embd": true, "output": true, "ssm_in": true, "ssm_x": true, "ssm_out": true,
					"attn_q": true, "attn_k": true, "attn_v": true, "attn_output": true, "ffn_gate": true, "ffn_up": true, "ffn_down": true}
				for _, ts := range items {
					kind := ggml.TensorTypeF32
					if typed[tensorKind(ts.Name)] {
						kind = typ.matrix
					}
					if ggml.TensorType(ts.Kind) != kind {
						t.Errorf("%s is %s, want %s", ts.Name, ggml.TensorType(ts.Kind), kind)
					}
					if arch == "mamba" && (slices.Contains([]string{"attn_q", "ffn_up", "ffn_norm"}, tensorKind(ts.Name))) {
						t.Errorf("mamba has %s", ts.Name)
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
			})
		}
	}
}

// tensorKind is a tensor's name without its layer and suffix:
// "blk.0.ssm_in.weight" is "ssm_in".
func tensorKind(name string) string {
	var i, j int
	if len(name) > 4 && name[:4] == "blk." {
		for i = 4; name[i] != '.'; i++ {
		}
		i++
	}
	for j = i; j < len(name) && name[j] != '.'; j++ {
	}
	return name[i:j]
}

// The values that make the recurrence stable and let the state carry.
func TestMambaWeightValues(t *testing.T) {
	path := Model(t, Options{Arch: "jamba", Layers: 3, StateSize: 8, Seed: 9})
	g, f := decode(t, path)
	floats := func(name string) []float32 { return floats(t, g, f, name) }
	between := func(name string, lo, hi float32) {
		v := floats(name)
		var vmin, vmax float32 = math.MaxFloat32, -math.MaxFloat32
		for _, x := range v {
			vmin, vmax = min(vmin, x), max(vmax, x)
		}
		if vmin < lo || vmax >= hi {
			t.Errorf("%s in [%v, %v], want within [%v, %v)", name, vmin, vmax, lo, hi)
		}
		// The bounds are tight: the values fill most of the range.
		if vmax-vmin < (hi-lo)/2 {
			t.Errorf("%s in [%v, %v], which spans less than half of [%v, %v)", name, vmin, vmax, lo, hi)
		}
	}
	ones := func(name string) {
		for i, x := range floats(name) {
			if x != 1 {
				t.Fatalf("%s[%d] = %v, want 1", name, i, x)
			}
		}
	}
	for _, layer := range []string{"blk.0.", "blk.2."} {
		between(layer+"ssm_a", -1.5, -0.5)
		ones(layer + "ssm_d")
		ones(layer + "ssm_b_norm.weight")
		between(layer+"ssm_dt.bias", -2.65, -1.85)
		// Unit gain: standard deviation 1/sqrt(inputs), uniform values up
		// to sqrt(3) times that.
		between(layer+"ssm_in.weight", -1.7321/8, 1.7321/8)
		between(layer+"ssm_conv1d.weight", -1.7321/2, 1.7321/2)
	}
	if g.KV().Uint("ssm.state_size") != 8 {
		t.Error("StateSize not written")
	}
	if got := g.KV().Ints("attention.head_count_kv"); !slices.Equal(got, []int32{0, 2, 0}) {
		t.Errorf("attention.head_count_kv = %v, want [0 2 0]", got)
	}
	if v := floats("blk.1.attn_q.weight"); math.Abs(float64(v[0])) > 1.7321*weightStd {
		t.Errorf("attention weight %v is scaled", v[0])
	}
}

func TestMambaOptionErrors(t *testing.T) {
	for _, o := range []Options{
		{Arch: "mamba", Heads: 4},
		{Arch: "mamba", KVHeads: 2},
		{Arch: "mamba", FF: 128},
		{Arch: "mamba", HeadDim: 16},
		{Arch: "mamba", SlidingWindow: 32},
		{Arch: "mamba", StateSize: -1},
		{Arch: "mamba", Type: "q8_0", Embd: 48},
		{Arch: "mamba", Tokenizer: &Tokenizer{Tokens: []string{"a", "a"}, Types: []TokenType{1, 1}, BOS: -1, EOS: -1, PAD: -1}},
		{Arch: "jamba", Layers: 1},
		{Arch: "jamba", HeadDim: 16},
		{Arch: "jamba", SlidingWindow: 32},
		{Arch: "jamba", Embd: 30, Heads: 4},
		{Arch: "jamba", Heads: 4, KVHeads: 3},
		{Arch: "jamba", Type: "q8_0", FF: 48},
		{Arch: "llama", StateSize: 16},
		{Arch: "gemma3", StateSize: 16},
		{Arch: "bert", StateSize: 16},
	} {
		if err := WriteModel(filepath.Join(t.TempDir(), "m.gguf"), o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	// What mamba ignores it must be given as zero, but every size it uses
	// may change.
	path := Model(t, Options{Arch: "mamba", Layers: 3, Embd: 96, StateSize: 4, TiedEmbeddings: true, Type: "q8_0"})
	g, _ := decode(t, path)
	kv := g.KV()
	for k, want := range map[string]uint32{"block_count": 3, "embedding_length": 96, "ssm.inner_size": 192, "ssm.state_size": 4, "ssm.time_step_rank": 6} {
		if got := kv.Uint(k); got != want {
			t.Errorf("%s = %d, want %d", k, got, want)
		}
	}
	for _, ts := range g.Tensors().Items() {
		if ts.Name == "output.weight" {
			t.Error("output.weight written with tied embeddings")
		}
	}
}
