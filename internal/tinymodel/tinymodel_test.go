package tinymodel

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ollama/ollama/fs/ggml"
)

// decode reads a GGUF file back with Ollama's decoder, an implementation
// independent of ours.
func decode(t *testing.T, path string) (*ggml.GGML, *os.File) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	g, err := ggml.Decode(f, -1)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return g, f
}

// tensorData reads a tensor's raw bytes.
func tensorData(t *testing.T, g *ggml.GGML, f *os.File, name string) (*ggml.Tensor, []byte) {
	t.Helper()
	for _, ts := range g.Tensors().Items() {
		if ts.Name == name {
			b := make([]byte, ts.Size())
			if _, err := f.ReadAt(b, int64(g.Tensors().Offset+ts.Offset)); err != nil {
				t.Fatalf("read %s: %v", name, err)
			}
			return ts, b
		}
	}
	t.Fatalf("no tensor %s", name)
	return nil, nil
}

// floats reads an F32 tensor's values.
func floats(t *testing.T, g *ggml.GGML, f *os.File, name string) []float32 {
	t.Helper()
	_, b := tensorData(t, g, f, name)
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// readBack writes the file at path with write and returns its bytes.
func readBack(t *testing.T, p string, write func(path string) error) []byte {
	t.Helper()
	if err := write(p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWriteModelRoundTrip(t *testing.T) {
	for _, arch := range []string{"llama", "qwen3", "gemma3"} {
		layers := uint32(2)
		if arch == "gemma3" {
			layers = 6
		}
		for _, typ := range []struct {
			name   string
			kind   ggml.TensorType
			ftype  uint32
			matrix ggml.TensorType
		}{
			{"f32", ggml.TensorTypeF32, 0, ggml.TensorTypeF32},
			{"f16", ggml.TensorTypeF16, 1, ggml.TensorTypeF16},
			{"q8_0", ggml.TensorTypeQ8_0, 7, ggml.TensorTypeQ8_0},
		} {
			t.Run(arch+"/"+typ.name, func(t *testing.T) {
				path := Model(t, Options{Arch: arch, Type: typ.name})
				g, _ := decode(t, path)
				kv := g.KV()

				uints := map[string]uint32{
					"general.file_type":               typ.ftype,
					"context_length":                  2048,
					"embedding_length":                64,
					"block_count":                     layers,
					"feed_forward_length":             128,
					"attention.head_count":            4,
					"attention.head_count_kv":         2,
					"attention.key_length":            16,
					"attention.value_length":          16,
					"rope.dimension_count":            16,
					"vocab_size":                      263,
					"tokenizer.ggml.bos_token_id":     256,
					"tokenizer.ggml.eos_token_id":     258,
					"tokenizer.ggml.padding_token_id": 256,
				}
				for k, want := range uints {
					if got := kv.Uint(k, math.MaxUint32); got != want {
						t.Errorf("%s = %d, want %d", k, got, want)
					}
				}
				strs := map[string]string{
					"general.architecture":    arch,
					"general.name":            "inferencetest",
					"tokenizer.ggml.model":    "gpt2",
					"tokenizer.ggml.pre":      "qwen2",
					"tokenizer.chat_template": ChatML,
				}
				for k, want := range strs {
					if got := kv.String(k); got != want {
						t.Errorf("%s = %q, want %q", k, got, want)
					}
				}
				if kv.Bool("tokenizer.ggml.add_bos_token", true) {
					t.Error("add_bos_token is true")
				}
				tokens := kv.Strings("tokenizer.ggml.tokens")
				types := kv.Ints("tokenizer.ggml.token_type")
				if len(tokens) != 263 || len(types) != 263 {
					t.Fatalf("%d tokens, %d types", len(tokens), len(types))
				}
				if tokens[32] != "Ġ" || tokens[10] != "Ċ" || tokens[257] != "<|im_start|>" || types[257] != 3 || types[259] != 4 || types[97] != 1 {
					t.Errorf("tokens %q %q %q, types %d %d %d", tokens[32], tokens[10], tokens[257], types[257], types[259], types[97])
				}
				if merges, ok := kv["tokenizer.ggml.merges"]; !ok {
					t.Error("no tokenizer.ggml.merges (llama.cpp requires the key)")
				} else if n := len(kv.Strings("tokenizer.ggml.merges")); n != 0 {
					t.Errorf("%d merges (%v), want 0", n, merges)
				}

				want := map[string][]uint64{
					"token_embd.weight":        {64, 263},
					"output.weight":            {64, 263},
					"output_norm.weight":       {64},
					"blk.1.attn_norm.weight":   {64},
					"blk.1.attn_q.weight":      {64, 64},
					"blk.1.attn_k.weight":      {64, 32},
					"blk.1.attn_v.weight":      {64, 32},
					"blk.1.attn_output.weight": {64, 64},
					"blk.1.ffn_norm.weight":    {64},
					"blk.1.ffn_gate.weight":    {64, 128},
					"blk.1.ffn_up.weight":      {64, 128},
					"blk.1.ffn_down.weight":    {128, 64},
				}
				perLayer := 9
				if arch != "llama" {
					want["blk.1.attn_q_norm.weight"] = []uint64{16}
					want["blk.1.attn_k_norm.weight"] = []uint64{16}
					perLayer += 2
				}
				if arch == "gemma3" {
					want["blk.5.post_attention_norm.weight"] = []uint64{64}
					want["blk.5.post_ffw_norm.weight"] = []uint64{64}
					perLayer += 2
					if got := kv.Uint("attention.sliding_window"); got != 32 {
						t.Errorf("attention.sliding_window = %d, want 32", got)
					}
				} else if _, ok := kv[arch+".attention.sliding_window"]; ok {
					t.Error("attention.sliding_window written")
				}
				n := 3 + int(layers)*perLayer
				items := g.Tensors().Items()
				if len(items) != n {
					t.Errorf("%d tensors, want %d", len(items), n)
				}
				for _, ts := range items {
					wantKind := typ.matrix
					if len(ts.Shape) == 1 {
						wantKind = ggml.TensorTypeF32
					}
					if ggml.TensorType(ts.Kind) != wantKind {
						t.Errorf("%s is %s, want %s", ts.Name, ggml.TensorType(ts.Kind), wantKind)
					}
					if (g.Tensors().Offset+ts.Offset)%32 != 0 {
						t.Errorf("%s at offset %d, not aligned", ts.Name, ts.Offset)
					}
					if shape, ok := want[ts.Name]; ok && !slices.Equal(ts.Shape, shape) {
						t.Errorf("%s shape %v, want %v", ts.Name, ts.Shape, shape)
					}
				}
				for name := range want {
					if !slices.ContainsFunc(items, func(ts *ggml.Tensor) bool { return ts.Name == name }) {
						t.Errorf("no tensor %s", name)
					}
				}
			})
		}
	}
}

func TestWeightValues(t *testing.T) {
	path := Model(t, Options{Arch: "qwen3", Type: "q8_0", Seed: 3})
	g, f := decode(t, path)

	_, norm := tensorData(t, g, f, "blk.0.attn_k_norm.weight")
	for i := 0; i < len(norm); i += 4 {
		if v := math.Float32frombits(binary.LittleEndian.Uint32(norm[i:])); v != 1 {
			t.Fatalf("norm weight %d = %v, want 1", i/4, v)
		}
	}

	ts, q := tensorData(t, g, f, "blk.0.ffn_down.weight")
	if len(q) != int(ts.Elements()/32*34) {
		t.Fatalf("q8_0 tensor of %d elements has %d bytes", ts.Elements(), len(q))
	}
	var sum, sq float64
	for b := 0; b < len(q); b += 34 {
		d := f16to32(binary.LittleEndian.Uint16(q[b:]))
		for _, x := range q[b+2 : b+34] {
			v := float64(d) * float64(int8(x))
			sum += v
			sq += v * v
		}
	}
	n := float64(ts.Elements())
	mean, std := sum/n, math.Sqrt(sq/n)
	if math.Abs(mean) > 0.002 || math.Abs(std-weightStd) > 0.002 {
		t.Errorf("weights have mean %.4f and std %.4f, want 0 and %.2f", mean, std, weightStd)
	}
}

func TestDeterministic(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, o Options) []byte {
		t.Helper()
		return readBack(t, filepath.Join(dir, name), func(p string) error { return WriteModel(p, o) })
	}
	// Bigger than one chunk, so that chunks are encoded in parallel.
	o := Options{Embd: 256, FF: 512, Heads: 8, KVHeads: 4, Seed: 42}
	a, b := write("a.gguf", o), write("b.gguf", o)
	if !bytes.Equal(a, b) {
		t.Error("two writes with the same options differ")
	}
	o.Seed = 43
	if c := write("c.gguf", o); bytes.Equal(a, c) {
		t.Error("seeds 42 and 43 give the same file")
	} else if len(a) != len(c) {
		t.Errorf("seeds change the size: %d and %d", len(a), len(c))
	}

	// The same seed gives the same values in every type, up to rounding.
	o.Seed = 42
	o.Type = "f16"
	write("h.gguf", o)
	g32, f32 := decode(t, filepath.Join(dir, "a.gguf"))
	g16, f16f := decode(t, filepath.Join(dir, "h.gguf"))
	_, x := tensorData(t, g32, f32, "blk.1.attn_v.weight")
	_, h := tensorData(t, g16, f16f, "blk.1.attn_v.weight")
	for i := range len(h) / 2 {
		v := math.Float32frombits(binary.LittleEndian.Uint32(x[4*i:]))
		if got, want := binary.LittleEndian.Uint16(h[2*i:]), f16(v); got != want {
			t.Fatalf("element %d: f16 %#04x, want %#04x (f32 %v)", i, got, want, v)
		}
	}
}

func TestWriteModelReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.gguf")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteModel(p, Options{Type: "bogus"}); err == nil {
		t.Fatal("no error for a bad type")
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("failed write changed the file: %q", b)
	}
	if err := WriteModel(p, Options{}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("model file: %v, %v", st.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the model", len(entries))
	}
	decode(t, p)
}

func TestOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Arch: "gpt-j"}, "unknown architecture"},
		{Options{Type: "q4_0"}, "unknown type"},
		{Options{Layers: -1}, "Layers -1 out of range"},
		{Options{Heads: 4, KVHeads: 3}, "not a multiple of KVHeads"},
		{Options{Embd: 60, Heads: 8}, "set HeadDim"},
		{Options{Embd: 48, Type: "q8_0"}, "Q8_0 needs Embd"},
		{Options{FF: 100, Type: "q8_0"}, "Q8_0 needs FF"},
		{Options{HeadDim: 15}, "odd"},
		{Options{SlidingWindow: 32}, "SlidingWindow does not apply to architecture llama"},
		{Options{Arch: "qwen3", SlidingWindow: 32}, "SlidingWindow does not apply to architecture qwen3"},
		{Options{Arch: "gemma3", SlidingWindow: -1}, "SlidingWindow -1 out of range"},
		{Options{Arch: "gemma3", Layers: 5}, "Layers 5: gemma3 needs at least 6"},
		{Options{Arch: "qwen2vl", HeadDim: 32}, "Heads*HeadDim 128 differs from Embd 64"},
		{Options{Arch: "qwen2vl", Embd: 16, Heads: 4}, "HeadDim 4 is too narrow for M-RoPE; qwen2vl needs at least 6"},
		{Options{Arch: "qwen2vl", SlidingWindow: 8}, "SlidingWindow does not apply to architecture qwen2vl"},
		{Options{Arch: "qwen2vl", StateSize: 8}, "StateSize does not apply to architecture qwen2vl"},
		{Options{Arch: "Qwen2VL"}, `unknown architecture "Qwen2VL"`},
		{Options{Arch: "qwen35", Layers: 3}, "Layers 3: qwen35 needs at least 4"},
		{Options{Arch: "qwen35", HeadDim: 12}, "HeadDim 12: qwen35"},
		{Options{Arch: "qwen35", SlidingWindow: 8}, "SlidingWindow and Pooling do not apply to architecture qwen35"},
		{Options{Arch: "qwen35", Type: "q8_0", Embd: 64, StateSize: 4}, "Q8_0 needs LinearValueHeads*StateSize (16)"},
		{Options{Arch: "qwen35", Type: "q8_0", LinearKeyHeads: 1, LinearValueHeads: 3}, "Q8_0 needs LinearValueHeads*StateSize (48)"},
		{Options{Arch: "qwen35", LinearKeyHeads: 3}, "LinearValueHeads 4 is not a multiple of LinearKeyHeads 3"},
		{Options{Arch: "qwen35", LinearKeyHeads: 4, LinearValueHeads: 2}, "LinearValueHeads 2 is not a multiple of LinearKeyHeads 4"},
		{Options{Arch: "qwen35", LinearKeyHeads: -2}, "LinearKeyHeads -2 out of range"},
		{Options{Arch: "qwen35", LinearValueHeads: 1 << 31}, "LinearValueHeads 2147483648 out of range"},
		{Options{Arch: "qwen35", NextN: -1}, "NextN -1 out of range"},
		{Options{NextN: 1}, "NextN does not apply to architecture llama"},
		{Options{Arch: "gemma4", NextN: 1}, "NextN does not apply to architecture gemma4"},
		{Options{Arch: "jamba", NextN: 1}, "NextN does not apply to architecture jamba"},
		{Options{Arch: "bert", NextN: 1}, "NextN does not apply to architecture bert"},
		{Options{LinearKeyHeads: 2}, "LinearKeyHeads and LinearValueHeads do not apply to architecture llama"},
		{Options{Arch: "qwen3", LinearValueHeads: 4}, "LinearKeyHeads and LinearValueHeads do not apply to architecture qwen3"},
		{Options{Arch: "mamba", LinearKeyHeads: 1}, "LinearKeyHeads and LinearValueHeads do not apply to architecture mamba"},
		{Options{Arch: "gemma4", LinearValueHeads: 8}, "LinearKeyHeads and LinearValueHeads do not apply to architecture gemma4"},
		{Options{Arch: "gemma4", Layers: 5}, "Layers 5: gemma4 needs at least 6"},
		{Options{Arch: "gemma4", HeadDim: 6}, "HeadDim 6: gemma4"},
		{Options{Arch: "gemma4", StateSize: 8}, "StateSize and Pooling do not apply to architecture gemma4"},
		{Options{Tokenizer: &Tokenizer{Model: "bert", Tokens: []string{"a"}, Types: []TokenType{1}}}, "want gpt2, llama or gemma4"},
		{Options{VocabSize: 100}, "below the tokenizer's 263 tokens"},
		{Options{Tokenizer: &Tokenizer{Tokens: []string{"a", "a"}, Types: []TokenType{1, 1}, BOS: -1, EOS: -1, PAD: -1}}, `both "a"`},
		{Options{Tokenizer: &Tokenizer{Tokens: []string{"a"}, Types: nil}}, "1 tokens and 0 types"},
		{Options{Tokenizer: &Tokenizer{Tokens: []string{"a"}, Types: []TokenType{1}, BOS: 5, EOS: -1, PAD: -1}}, "BOS id 5 out of range"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			err := WriteModel(filepath.Join(t.TempDir(), "m.gguf"), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "inferencetest: ") {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestShapeOptions(t *testing.T) {
	tok := ByteLevel()
	tok.ChatTemplate = ""
	path := Model(t, Options{
		Arch: "qwen3", Layers: 1, Embd: 32, Heads: 2, KVHeads: 1, HeadDim: 64, FF: 96,
		VocabSize: 300, ContextLength: 512, TiedEmbeddings: true, Type: "Q8_0",
		Tokenizer: tok, Name: "tiny",
	})
	g, _ := decode(t, path)
	kv := g.KV()
	if _, ok := kv["tokenizer.chat_template"]; ok {
		t.Error("chat template written for a tokenizer without one")
	}
	if kv.String("general.name") != "tiny" || kv.Uint("context_length") != 512 || kv.Uint("attention.key_length") != 64 {
		t.Errorf("name %q, context %d, key length %d", kv.String("general.name"), kv.Uint("context_length"), kv.Uint("attention.key_length"))
	}
	tokens, types := kv.Strings("tokenizer.ggml.tokens"), kv.Ints("tokenizer.ggml.token_type")
	if len(tokens) != 300 || tokens[299] != "[PAD299]" || types[299] != int32(TokenUnused) {
		t.Errorf("%d tokens, last %q type %d", len(tokens), tokens[len(tokens)-1], types[len(types)-1])
	}
	for _, ts := range g.Tensors().Items() {
		switch ts.Name {
		case "output.weight":
			t.Error("output.weight written with tied embeddings")
		case "blk.0.attn_q.weight":
			if !slices.Equal(ts.Shape, []uint64{32, 128}) {
				t.Errorf("attn_q shape %v", ts.Shape)
			}
		case "blk.0.attn_output.weight":
			if !slices.Equal(ts.Shape, []uint64{128, 32}) {
				t.Errorf("attn_output shape %v", ts.Shape)
			}
		case "blk.0.attn_k.weight":
			if !slices.Equal(ts.Shape, []uint64{32, 64}) {
				t.Errorf("attn_k shape %v", ts.Shape)
			}
		}
	}

	p := filepath.Join(t.TempDir(), "m.gguf")
	if err := WriteModel(p, Options{ChatTemplate: "{{ x }}"}); err != nil {
		t.Fatal(err)
	}
	if g, _ := decode(t, p); g.KV().String("tokenizer.chat_template") != "{{ x }}" {
		t.Error("ChatTemplate did not override the tokenizer's")
	}
}

func TestQwen3_0_6BLayout(t *testing.T) {
	kvs, ts, err := layout(Qwen3_0_6B())
	if err != nil {
		t.Fatal(err)
	}
	var params, size uint64
	for _, s := range ts {
		params += s.elems()
		size += s.size()
	}
	// Qwen3-0.6B has 596M parameters with tied embeddings.
	if params < 590e6 || params > 600e6 {
		t.Errorf("%d parameters", params)
	}
	if size < 620e6 || size > 650e6 {
		t.Errorf("%d bytes of tensors", size)
	}
	if len(ts) != 1+28*11+1 {
		t.Errorf("%d tensors", len(ts))
	}
	for _, p := range kvs {
		if p.Key == "qwen3.vocab_size" && p.Value != uint32(151936) {
			t.Errorf("vocab_size %v", p.Value)
		}
	}
}

func TestQwen35_0_8BLayout(t *testing.T) {
	kvs, ts, err := layout(Qwen35_0_8B())
	if err != nil {
		t.Fatal(err)
	}
	var params, size uint64
	shapes := map[string][]uint64{}
	for _, s := range ts {
		params += s.elems()
		size += s.size()
		shapes[s.name] = s.shape
	}
	// 254.3M embeddings (tied), 18 linear-attention layers of 21.6M and
	// 6 attention layers of 18.4M: 752M, Qwen3.5-0.8B without its vision
	// encoder and multi-token-prediction layer.
	if params < 745e6 || params > 760e6 {
		t.Errorf("%d parameters", params)
	}
	if size < 780e6 || size > 820e6 {
		t.Errorf("%d bytes of tensors", size)
	}
	// token_embd, 18 layers of 14 tensors and 6 of 11, output_norm.
	if len(ts) != 1+18*14+6*11+1 {
		t.Errorf("%d tensors", len(ts))
	}
	got := map[string]any{}
	for _, p := range kvs {
		got[strings.TrimPrefix(p.Key, "qwen35.")] = p.Value
	}
	for key, want := range map[string]any{
		"general.name":            "Qwen3.5-0.8B-shaped",
		"vocab_size":              uint32(248320),
		"context_length":          uint32(262144),
		"embedding_length":        uint32(1024),
		"block_count":             uint32(24),
		"feed_forward_length":     uint32(3584),
		"attention.head_count":    uint32(8),
		"attention.head_count_kv": uint32(2),
		"attention.key_length":    uint32(256),
		"rope.dimension_count":    uint32(64),
		"rope.dimension_sections": []int32{11, 11, 10, 0},
		"ssm.state_size":          uint32(128),
		"ssm.group_count":         uint32(16),
		"ssm.time_step_rank":      uint32(16),
		"ssm.inner_size":          uint32(2048),
		"ssm.conv_kernel":         uint32(4),
		"full_attention_interval": uint32(4),
	} {
		if fmt.Sprintf("%T %v", got[key], got[key]) != fmt.Sprintf("%T %v", want, want) {
			t.Errorf("%s = %T %v, want %T %v", key, got[key], got[key], want, want)
		}
	}
	for name, want := range map[string][]uint64{
		"token_embd.weight":         {1024, 248320},
		"blk.0.attn_qkv.weight":     {1024, 6144}, // queries and keys of 16 heads, values of 16, 128 wide
		"blk.0.attn_gate.weight":    {1024, 2048},
		"blk.0.ssm_beta.weight":     {1024, 16},
		"blk.0.ssm_conv1d.weight":   {4, 6144},
		"blk.0.ssm_a":               {16},
		"blk.0.ssm_norm.weight":     {128},
		"blk.0.ssm_out.weight":      {2048, 1024},
		"blk.23.attn_q.weight":      {1024, 4096}, // queries and gates of 8 heads of 256
		"blk.23.attn_k.weight":      {1024, 512},
		"blk.23.attn_output.weight": {2048, 1024},
		"blk.23.ffn_down.weight":    {3584, 1024},
	} {
		if !slices.Equal(shapes[name], want) {
			t.Errorf("%s shape %v, want %v", name, shapes[name], want)
		}
	}
	if _, ok := shapes["output.weight"]; ok {
		t.Error("output.weight written with tied embeddings")
	}
}

func TestQ8_0(t *testing.T) {
	// A block whose scale is a power of two, so every product is exact:
	// max |x| = 127/64 gives d = 1/64 (fp16 0x2400) and x/d = 64x.
	x := make([]float32, 32)
	x[0] = -127.0 / 64 // -127
	x[1] = 0.5         // 32
	x[2] = 3.0 / 128   // 1.5 rounds away from zero to 2
	x[3] = -3.0 / 128  // -2
	x[4] = 1.0 / 128   // 0.5 rounds to 1, not to even 0
	x[5] = -1.0 / 128  // -1
	x[6] = 1.0         // 64
	x[7] = 0.1         // 6.4 rounds to 6
	want := []byte{0x00, 0x24, 0x81, 32, 2, 0xfe, 1, 0xff, 64, 6}
	want = append(want, make([]byte, 24)...)
	// A second block of zeros has scale 0 and zero quants.
	x = append(x, make([]float32, 32)...)
	want = append(want, make([]byte, 34)...)

	if got := appendQ8_0(nil, x); !bytes.Equal(got, want) {
		t.Errorf("Q8_0\n got % x\nwant % x", got, want)
	}

	// Random blocks against the plain definition, appended after a prefix.
	v := make([]float32, 32*1000)
	fillRandom(v, 1, 2)
	for i := 0; i < len(v); i += 97 {
		v[i] *= 1000 // some blocks with one large value
	}
	got := appendQ8_0([]byte("prefix"), v)
	if string(got[:6]) != "prefix" || len(got) != 6+34*1000 {
		t.Fatalf("appended %d bytes", len(got)-6)
	}
	got = got[6:]
	for b := range 1000 {
		blk := v[32*b : 32*b+32]
		var amax float32
		for _, x := range blk {
			amax = max(amax, float32(math.Abs(float64(x))))
		}
		d := amax / 127
		id := 1 / d
		ref := binary.LittleEndian.AppendUint16(nil, f16(d))
		for _, x := range blk {
			ref = append(ref, byte(int8(math.Round(float64(x*id)))))
		}
		if !bytes.Equal(got[34*b:34*b+34], ref) {
			t.Fatalf("block %d\n got % x\nwant % x", b, got[34*b:34*b+34], ref)
		}
	}
}

func TestF16(t *testing.T) {
	for _, tc := range []struct {
		x    float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.02, 0x251f},
		{65504, 0x7bff},
		{65520, 0x7c00}, // rounds up to infinity
		{float32(math.Inf(-1)), 0xfc00},
		{float32(math.NaN()), 0x7e00},
		{1 + 1.0/2048, 0x3c00}, // halfway, to even
		{1 + 3.0/2048, 0x3c02}, // halfway, to even
		{1 + 1.5/2048, 0x3c01}, // above halfway
		{0x1p-14, 0x0400},      // smallest normal
		{0x1p-24, 0x0001},      // smallest subnormal
		{0x1p-25, 0x0000},      // halfway to the smallest subnormal, to even
		{0x1.8p-25, 0x0001},    // above halfway
		{0x3p-24, 0x0003},      // subnormal
		{0x1.ff8p-15, 0x03ff},  // largest subnormal
		{0x1.ffcp-15, 0x0400},  // halfway, to even: the smallest normal
		{-0x1p-30, 0x8000},     // underflows to -0
		{float32(0x1p-130), 0}, // float32 subnormal
		{0.000123, 0x0808},
	} {
		if got := f16(tc.x); got != tc.want {
			t.Errorf("f16(%g) = %#04x, want %#04x", tc.x, got, tc.want)
		}
	}
}

// f16to32 converts half precision back, for reading tensors.
func f16to32(h uint16) float32 {
	sign := float32(1)
	if h&0x8000 != 0 {
		sign = -1
	}
	e, m := int(h>>10)&0x1f, float64(h&0x3ff)
	switch e {
	case 0:
		return sign * float32(math.Ldexp(m, -24))
	case 0x1f:
		return sign * float32(math.Inf(1))
	}
	return sign * float32(math.Ldexp(1024+m, e-25))
}

func TestByteLevel(t *testing.T) {
	tok := ByteLevel()
	if len(tok.Tokens) != 263 || len(tok.Types) != 263 {
		t.Fatalf("%d tokens, %d types", len(tok.Tokens), len(tok.Types))
	}
	// Token i is byte i in GPT-2's byte-level encoding: 256 distinct
	// single code points below U+0144.
	seen := map[string]bool{}
	for b := range 256 {
		s := tok.Tokens[b]
		r, n := utf8.DecodeRuneInString(s)
		if n != len(s) || r > 0x143 || seen[s] {
			t.Errorf("byte %#02x is token %q", b, s)
		}
		seen[s] = true
	}
	for b, want := range map[byte]string{' ': "Ġ", '\n': "Ċ", '\t': "ĉ", 'a': "a", '!': "!", 0x00: "Ā", 0xad: "Ń", 0xff: "ÿ", 0x7f: "ġ"} {
		if tok.Tokens[b] != want {
			t.Errorf("byte %#02x is %q, want %q", b, tok.Tokens[b], want)
		}
	}
	if tok.Tokens[tok.EOS] != "<|im_end|>" || tok.Tokens[tok.BOS] != "<|endoftext|>" || tok.Types[257] != TokenControl || tok.Types[262] != TokenUserDefined {
		t.Errorf("special tokens: bos %q eos %q", tok.Tokens[tok.BOS], tok.Tokens[tok.EOS])
	}
	// Each call returns its own copy.
	tok.Tokens[0] = "x"
	if ByteLevel().Tokens[0] != "Ā" {
		t.Error("ByteLevel shares its slices between calls")
	}
}

func TestLoadTokenizer(t *testing.T) {
	tok, err := LoadTokenizer("testdata/tokenizer.json", "testdata/tokenizer_config.json")
	if err != nil {
		t.Fatal(err)
	}
	wantTokens := []string{"a", "b", "Ġ", "ab", "Ġab", "c", "[PAD6]", "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "<|fim_pad|>"}
	wantTypes := []TokenType{1, 1, 1, 1, 1, 1, TokenUnused, TokenControl, TokenControl, TokenControl, TokenUserDefined, TokenControl}
	if !slices.Equal(tok.Tokens, wantTokens) || !slices.Equal(tok.Types, wantTypes) {
		t.Errorf("tokens %q\ntypes %v", tok.Tokens, tok.Types)
	}
	if !slices.Equal(tok.Merges, []string{"a b", "Ġ ab"}) {
		t.Errorf("merges %q", tok.Merges)
	}
	// No bos_token: <|endoftext|> stands in.
	if tok.Pre != "qwen2" || tok.BOS != 7 || tok.EOS != 9 || tok.PAD != 7 || tok.AddBOS {
		t.Errorf("pre %q bos %d eos %d pad %d add_bos %v", tok.Pre, tok.BOS, tok.EOS, tok.PAD, tok.AddBOS)
	}
	if !strings.HasPrefix(tok.ChatTemplate, "{% for m in messages %}") {
		t.Errorf("chat template %q", tok.ChatTemplate)
	}

	// And the file has what llama.cpp reads.
	path := Model(t, Options{Tokenizer: tok, VocabSize: 16})
	g, _ := decode(t, path)
	kv := g.KV()
	if got := kv.Strings("tokenizer.ggml.merges"); !slices.Equal(got, tok.Merges) {
		t.Errorf("merges in file %q", got)
	}
	if got := kv.Strings("tokenizer.ggml.tokens"); len(got) != 16 || got[11] != "<|fim_pad|>" || got[15] != "[PAD15]" {
		t.Errorf("tokens in file %q", got)
	}
	if kv.String("tokenizer.chat_template") != tok.ChatTemplate || kv.Uint("tokenizer.ggml.eos_token_id") != 9 {
		t.Error("chat template or eos id not written")
	}

	if _, err := LoadTokenizer("testdata/missing.json", ""); err == nil {
		t.Error("no error for a missing file")
	}
	if tok, err := LoadTokenizer("testdata/tokenizer.json", ""); err != nil || tok.ChatTemplate != "" || tok.EOS != 7 {
		t.Errorf("without config: %v, eos %d", err, tok.EOS)
	}
}

func TestParseTokenizerVariants(t *testing.T) {
	base, err := os.ReadFile("testdata/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	llama3 := strings.Replace(string(base), `\\p{N}|`, `\\p{N}{1,3}|`, 1)
	if llama3 == string(base) {
		t.Fatal("fixture regex not found")
	}
	gpt2 := `{"added_tokens":[{"id":2,"content":"<|endoftext|>","special":true}],
		"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":true},
		"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<|endoftext|>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}]},
		"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":["a b"]}}`
	for _, tc := range []struct {
		name, tokenizer, config string
		check                   func(*Tokenizer) string
		err                     string
	}{
		{name: "llama3 regex", tokenizer: llama3, check: func(tok *Tokenizer) string {
			return cmpStr(tok.Pre, "llama-bpe")
		}},
		{name: "gpt2 with string merges and bos added by the post-processor", tokenizer: gpt2,
			config: `{"bos_token":"<|endoftext|>","chat_template":[{"name":"tool_use","template":"T"},{"name":"default","template":"D"}]}`,
			check: func(tok *Tokenizer) string {
				return cmpStr(fmt.Sprintf("%s %q %v %d %d %s", tok.Pre, tok.Merges, tok.AddBOS, tok.BOS, tok.EOS, tok.ChatTemplate), `gpt-2 ["a b"] true 2 2 D`)
			}},
		{name: "add_bos_token wins", tokenizer: gpt2, config: `{"bos_token":"<|endoftext|>","add_bos_token":false}`,
			check: func(tok *Tokenizer) string { return cmpStr(fmt.Sprint(tok.AddBOS), "false") }},
		{name: "unknown regex", tokenizer: strings.Replace(string(base), `\\s+(?!\\S)|`, ``, 1),
			check: func(tok *Tokenizer) string { return cmpStr(tok.Pre, "default") }},
		{name: "wordpiece", tokenizer: `{"model":{"type":"WordPiece","vocab":{"a":0}}}`, err: `model type "WordPiece", want BPE`},
		{name: "not byte-level", tokenizer: `{"model":{"type":"BPE","vocab":{"a":0}},"decoder":{"type":"Metaspace"}}`, err: "neither a byte-level BPE nor a SentencePiece"},
		{name: "unknown eos", tokenizer: gpt2, config: `{"eos_token":"</s>"}`, err: `eos_token "</s>" is not in the vocabulary`},
		{name: "bad json", tokenizer: `{`, err: "tokenizer.json"},
		{name: "bad config", tokenizer: gpt2, config: `[`, err: "tokenizer_config.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg []byte
			if tc.config != "" {
				cfg = []byte(tc.config)
			}
			tok, err := ParseTokenizer([]byte(tc.tokenizer), cfg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if msg := tc.check(tok); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func cmpStr(got, want string) string {
	if got != want {
		return fmt.Sprintf("got %q, want %q", got, want)
	}
	return ""
}

// TestWriteError checks that a failing writer reports its error.
func TestWriteError(t *testing.T) {
	_, ts, err := layout(Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := &ggufWriter{w: bufioWriter(failAfter(1000))}
	writeData(g, ts, 0)
	if g.err == nil {
		g.err = g.w.Flush()
	}
	if g.err == nil || !strings.Contains(g.err.Error(), "disk full") {
		t.Errorf("error %v", g.err)
	}
}

type failWriter struct{ left int }

func failAfter(n int) *failWriter { return &failWriter{n} }

func (w *failWriter) Write(b []byte) (int, error) {
	if len(b) > w.left {
		n := w.left
		w.left = 0
		return n, fmt.Errorf("disk full")
	}
	w.left -= len(b)
	return len(b), nil
}

var _ io.Writer = (*failWriter)(nil)

func BenchmarkWriteModel(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts Options
		big  string // what it writes, if -short skips it
	}{
		{"tiny", Options{}, ""},
		{"tiny-q8_0", Options{Type: "q8_0", Arch: "qwen3"}, ""},
		{"qwen3-0.6b-q8_0", Qwen3_0_6B(), "640 MB"},
		{"qwen3.5-0.8b-q8_0", Qwen35_0_8B(), "810 MB"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if testing.Short() && bc.big != "" {
				b.Skip("writes " + bc.big)
			}
			p := filepath.Join(b.TempDir(), "m.gguf")
			for b.Loop() {
				if err := WriteModel(p, bc.opts); err != nil {
					b.Fatal(err)
				}
			}
			if st, err := os.Stat(p); err == nil {
				b.SetBytes(st.Size())
			}
		})
	}
}

func bufioWriter(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, 64) }

// TestF16Nearest checks f16 against its definition on many values: the
// result is a nearest half, and of two nearest the even one.
func TestF16Nearest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		x := math.Float32frombits(r.Uint32())
		if math.IsNaN(float64(x)) || math.Abs(float64(x)) > 65504 {
			continue
		}
		h := f16(x)
		d := math.Abs(float64(f16to32(h)) - float64(x))
		for _, n := range []uint16{h - 1, h + 1} {
			if n&0x7fff > 0x7bff || (n^h)&0x8000 != 0 {
				continue // not a finite neighbour of the same sign
			}
			dn := math.Abs(float64(f16to32(n)) - float64(x))
			if dn < d || dn == d && n&1 == 0 {
				t.Fatalf("f16(%g) = %#04x, but %#04x is nearer or even", x, h, n)
			}
		}
	}
}
