package inferencetest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ollama/ollama/fs/ggml"
)

func TestProjectorRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name                                        string
		opts                                        ProjectorOptions
		typ                                         string
		text, image, patch, embd, layers, heads, ff uint64
		merge                                       uint64 // 0: no scale_factor key
	}{
		{"default", ProjectorOptions{}, "mlp", 64, 32, 8, 32, 2, 2, 64, 0},
		{"custom", ProjectorOptions{TextEmbd: 96, ImageSize: 24, PatchSize: 4, Embd: 48, Layers: 3, Heads: 4, FF: 80, Seed: 9}, "mlp", 96, 24, 4, 48, 3, 4, 80, 0},
		{"gemma3", ProjectorOptions{Type: "gemma3"}, "gemma3", 64, 32, 4, 32, 2, 2, 64, 2},
		{"gemma3 custom", ProjectorOptions{Type: "gemma3", TextEmbd: 96, ImageSize: 48, PatchSize: 4, Merge: 3, Embd: 48, Layers: 3, Heads: 4, FF: 80, Seed: 9}, "gemma3", 96, 48, 4, 48, 3, 4, 80, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gemma := tc.typ == "gemma3"
			path := Projector(t, tc.opts)
			g, f := decode(t, path)
			kv := g.KV()
			if got := kv.Architecture(); got != "clip" {
				t.Fatalf("architecture %q", got)
			}
			if got := kv.String("projector_type"); got != tc.typ {
				t.Errorf("projector type %q, want %q", got, tc.typ)
			}
			if !kv.Bool("has_vision_encoder") {
				t.Error("has_vision_encoder is not true")
			}
			if got := kv.Bool("use_gelu", !gemma); got != gemma {
				t.Errorf("use_gelu is %v, want %v", got, gemma)
			}
			for key, want := range map[string]uint64{
				"vision.image_size": tc.image, "vision.patch_size": tc.patch, "vision.embedding_length": tc.embd,
				"vision.feed_forward_length": tc.ff, "vision.projection_dim": tc.text, "vision.block_count": tc.layers,
				"vision.attention.head_count": tc.heads,
			} {
				if got := kv.Uint(key, math.MaxUint32); uint64(got) != want {
					t.Errorf("%s = %d, want %d", key, got, want)
				}
			}
			if got := kv.Uint("vision.projector.scale_factor"); uint64(got) != tc.merge {
				t.Errorf("scale_factor = %d, want %d", got, tc.merge)
			}
			eps, mean, std := float32(1e-5), clipImageMean, clipImageStd
			if gemma {
				eps, mean, std = 1e-6, siglipImageMean, siglipImageStd
			}
			if got := kv.Float("vision.attention.layer_norm_epsilon"); got != eps {
				t.Errorf("layer_norm_epsilon = %v, want %v", got, eps)
			}
			if got := kv.Floats("vision.image_mean"); !slices.Equal(got, mean) {
				t.Errorf("image_mean %v, want %v", got, mean)
			}
			if got := kv.Floats("vision.image_std"); !slices.Equal(got, std) {
				t.Errorf("image_std %v, want %v", got, std)
			}

			e, ff, text, side := tc.embd, tc.ff, tc.text, tc.image/tc.patch
			last := fmt.Sprintf("v.blk.%d.", tc.layers-1)
			want := map[string][]uint64{
				"v.patch_embd.weight":    {tc.patch, tc.patch, 3, e},
				last + "ln1.weight":      {e},
				last + "ln1.bias":        {e},
				last + "attn_q.weight":   {e, e},
				last + "attn_q.bias":     {e},
				last + "attn_k.weight":   {e, e},
				last + "attn_k.bias":     {e},
				last + "attn_v.weight":   {e, e},
				last + "attn_v.bias":     {e},
				last + "attn_out.weight": {e, e},
				last + "attn_out.bias":   {e},
				last + "ln2.weight":      {e},
				last + "ln2.bias":        {e},
				last + "ffn_up.weight":   {e, ff},
				last + "ffn_up.bias":     {ff},
				last + "ffn_down.weight": {ff, e},
				last + "ffn_down.bias":   {e},
			}
			mlpOnly := map[string][]uint64{
				"v.class_embd":    {e},
				"v.pre_ln.weight": {e},
				"v.pre_ln.bias":   {e},
				"mm.0.weight":     {e, text},
				"mm.0.bias":       {text},
				"mm.2.weight":     {text, text},
				"mm.2.bias":       {text},
			}
			gemmaOnly := map[string][]uint64{
				"v.patch_embd.bias":          {e},
				"v.post_ln.weight":           {e},
				"v.post_ln.bias":             {e},
				"mm.soft_emb_norm.weight":    {e},
				"mm.input_projection.weight": {text, e},
			}
			present, absent, n := mlpOnly, gemmaOnly, 5+16*int(tc.layers)+4
			want["v.position_embd.weight"] = []uint64{e, side*side + 1}
			if gemma {
				present, absent, n = gemmaOnly, mlpOnly, 3+16*int(tc.layers)+4
				want["v.position_embd.weight"] = []uint64{e, side * side}
			}
			maps.Copy(want, present)
			items := g.Tensors().Items()
			if len(items) != n {
				t.Errorf("%d tensors, want %d", len(items), n)
			}
			for _, ts := range items {
				if ggml.TensorType(ts.Kind) != ggml.TensorTypeF32 {
					t.Errorf("%s is %s, want F32", ts.Name, ggml.TensorType(ts.Kind))
				}
				if (g.Tensors().Offset+ts.Offset)%ggufAlignment != 0 {
					t.Errorf("%s at offset %d, not aligned", ts.Name, ts.Offset)
				}
				if shape, ok := want[ts.Name]; ok && !slices.Equal(ts.Shape, shape) {
					t.Errorf("%s shape %v, want %v", ts.Name, ts.Shape, shape)
				}
				if _, ok := absent[ts.Name]; ok {
					t.Errorf("%s in a %s projector", ts.Name, tc.typ)
				}
			}
			for name := range want {
				if !slices.ContainsFunc(items, func(ts *ggml.Tensor) bool { return ts.Name == name }) {
					t.Errorf("no tensor %s", name)
				}
			}

			floats := func(name string) []float32 {
				_, b := tensorData(t, g, f, name)
				v := make([]float32, len(b)/4)
				for i := range v {
					v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
				}
				return v
			}
			ones, zeros := []string{last + "ln2.weight"}, []string{last + "ln1.bias"}
			random := []string{"v.patch_embd.weight", last + "attn_q.bias"}
			if gemma {
				ones = append(ones, "v.post_ln.weight", "mm.soft_emb_norm.weight")
				zeros = append(zeros, "v.post_ln.bias")
				random = append(random, "v.patch_embd.bias", "mm.input_projection.weight")
			} else {
				ones = append(ones, "v.pre_ln.weight")
				zeros = append(zeros, "v.pre_ln.bias")
				random = append(random, "v.class_embd", "mm.2.weight")
			}
			for _, name := range ones {
				for _, v := range floats(name) {
					if v != 1 {
						t.Fatalf("%s: norm weight %v, want 1", name, v)
					}
				}
			}
			for _, name := range zeros {
				for _, v := range floats(name) {
					if v != 0 {
						t.Fatalf("%s: norm bias %v, want 0", name, v)
					}
				}
			}
			for _, name := range random {
				w := floats(name)
				if w[0] == 0 || w[0] == w[1] || slices.ContainsFunc(w, func(x float32) bool { return math.Abs(float64(x)) > 2*weightStd }) {
					t.Errorf("%s %v... is not random within ±%v", name, w[:4], 2*weightStd)
				}
			}
		})
	}
}

func TestProjectorDeterministic(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, o ProjectorOptions) []byte {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := WriteProjector(p, o); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// A vision tower bigger than one chunk, so that chunks are encoded in
	// parallel.
	o := ProjectorOptions{Embd: 256, FF: 512, Heads: 4, Seed: 42}
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
	// "mlp" is the default, and gemma3 is deterministic too.
	if d := write("d.gguf", ProjectorOptions{Type: "mlp", Embd: 256, FF: 512, Heads: 4, Seed: 42}); !bytes.Equal(a, d) {
		t.Error(`Type "mlp" and the default Type write different files`)
	}
	g := ProjectorOptions{Type: "gemma3", Embd: 256, FF: 512, Heads: 4, Seed: 42}
	if e, f := write("e.gguf", g), write("f.gguf", g); !bytes.Equal(e, f) {
		t.Error("two gemma3 writes with the same options differ")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 6 {
		t.Errorf("%d files in the directory, want 6 (no temporary files left)", len(entries))
	}
}

func TestProjectorOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		o    ProjectorOptions
		want string
	}{
		{ProjectorOptions{ImageSize: 30}, "not a multiple of PatchSize"},
		{ProjectorOptions{ImageSize: 32, PatchSize: 6}, "not a multiple of PatchSize"},
		{ProjectorOptions{Embd: 30, Heads: 4}, "not a multiple of Heads"},
		{ProjectorOptions{TextEmbd: -1}, "TextEmbd -1 out of range"},
		{ProjectorOptions{ImageSize: -32}, "ImageSize -32 out of range"},
		{ProjectorOptions{PatchSize: -8}, "PatchSize -8 out of range"},
		{ProjectorOptions{Embd: -32}, "Embd -32 out of range"},
		{ProjectorOptions{Layers: -1}, "Layers -1 out of range"},
		{ProjectorOptions{Heads: -2}, "Heads -2 out of range"},
		{ProjectorOptions{FF: -1}, "FF -1 out of range"},
		{ProjectorOptions{ImageSize: 1 << 21}, "ImageSize 2097152 out of range"},
		{ProjectorOptions{ImageSize: 1024, PatchSize: 2}, "patches per image"},
		{ProjectorOptions{Type: "clip"}, `unknown projector Type "clip"`},
		{ProjectorOptions{Type: "Gemma3"}, `unknown projector Type "Gemma3"`},
		{ProjectorOptions{Merge: 2}, "Merge 2: mlp merges no patches"},
		{ProjectorOptions{Type: "mlp", Merge: -1}, "Merge -1: mlp merges no patches"},
		{ProjectorOptions{Type: "gemma3", Merge: -1}, "Merge -1 out of range"},
		{ProjectorOptions{Type: "gemma3", Merge: 3}, "Merge 3 does not divide the 8 patches"},
		{ProjectorOptions{Type: "gemma3", Merge: 16}, "Merge 16 does not divide the 8 patches"},
		{ProjectorOptions{Type: "gemma3", PatchSize: 6}, "not a multiple of PatchSize"},
	} {
		path := filepath.Join(t.TempDir(), "mmproj.gguf")
		if err := WriteProjector(path, tc.o); err == nil {
			t.Errorf("%+v: no error", tc.o)
		} else if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "inferencetest: ") {
			t.Errorf("%+v: error %q, want one with %q", tc.o, err, tc.want)
		} else if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%+v: wrote a file despite the error", tc.o)
		}
	}
}
