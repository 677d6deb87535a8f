package tinymodel

import (
	"bytes"
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
		merge                                       uint64 // 0: no merge key
	}{
		{"default", ProjectorOptions{}, "mlp", 64, 32, 8, 32, 2, 2, 64, 0},
		{"custom", ProjectorOptions{TextEmbd: 96, ImageSize: 24, PatchSize: 4, Embd: 48, Layers: 3, Heads: 4, FF: 80, Seed: 9}, "mlp", 96, 24, 4, 48, 3, 4, 80, 0},
		{"gemma3", ProjectorOptions{Type: "gemma3"}, "gemma3", 64, 32, 4, 32, 2, 2, 64, 2},
		{"gemma3 custom", ProjectorOptions{Type: "gemma3", TextEmbd: 96, ImageSize: 48, PatchSize: 4, Merge: 3, Embd: 48, Layers: 3, Heads: 4, FF: 80, Seed: 9}, "gemma3", 96, 48, 4, 48, 3, 4, 80, 3},
		// qwen2vl writes an image size of 560 that llama.cpp does not use.
		{"qwen2vl", ProjectorOptions{Type: "qwen2vl"}, "qwen2vl", 64, 560, 4, 32, 2, 2, 64, 2},
		{"qwen2vl custom", ProjectorOptions{Type: "qwen2vl", TextEmbd: 96, PatchSize: 6, Merge: 2, Embd: 48, Layers: 3, Heads: 4, FF: 80, Seed: 9}, "qwen2vl", 96, 560, 6, 48, 3, 4, 80, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gemma, qwen := tc.typ == "gemma3", tc.typ == "qwen2vl"
			path := Projector(t, tc.opts)
			g, f := decode(t, path)
			kv := g.KV()
			if got := kv.Architecture(); got != "clip" {
				t.Fatalf("architecture %q", got)
			}
			wantType := tc.typ
			if qwen {
				wantType = "qwen2vl_merger"
			}
			if got := kv.String("projector_type"); got != wantType {
				t.Errorf("projector type %q, want %q", got, wantType)
			}
			if !kv.Bool("has_vision_encoder") {
				t.Error("has_vision_encoder is not true")
			}
			gelu := gemma || qwen
			if got := kv.Bool("use_gelu", !gelu); got != gelu {
				t.Errorf("use_gelu is %v, want %v", got, gelu)
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
			scale, spatial := tc.merge, uint64(0)
			if qwen {
				scale, spatial = 0, tc.merge
			}
			if got := kv.Uint("vision.projector.scale_factor"); uint64(got) != scale {
				t.Errorf("scale_factor = %d, want %d", got, scale)
			}
			if got := kv.Uint("vision.spatial_merge_size"); uint64(got) != spatial {
				t.Errorf("spatial_merge_size = %d, want %d", got, spatial)
			}
			eps, mean, std := float32(1e-5), clipImageMean, clipImageStd
			switch {
			case gemma:
				eps, mean, std = 1e-6, siglipImageMean, siglipImageStd
			case qwen:
				eps = 1e-6
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
			// The tensors of each type beside the blocks and the first
			// patch convolution.
			only := map[string]map[string][]uint64{
				"mlp": {
					"v.class_embd":           {e},
					"v.position_embd.weight": {e, side*side + 1},
					"v.pre_ln.weight":        {e},
					"v.pre_ln.bias":          {e},
					"mm.0.weight":            {e, text},
					"mm.0.bias":              {text},
					"mm.2.weight":            {text, text},
					"mm.2.bias":              {text},
				},
				"gemma3": {
					"v.patch_embd.bias":          {e},
					"v.position_embd.weight":     {e, side * side},
					"v.post_ln.weight":           {e},
					"v.post_ln.bias":             {e},
					"mm.soft_emb_norm.weight":    {e},
					"mm.input_projection.weight": {text, e},
				},
				"qwen2vl": {
					"v.patch_embd.weight.1": {tc.patch, tc.patch, 3, e},
					"v.post_ln.weight":      {e},
					"v.post_ln.bias":        {e},
					"mm.0.weight":           {4 * e, 4 * e},
					"mm.0.bias":             {4 * e},
					"mm.2.weight":           {4 * e, text},
					"mm.2.bias":             {text},
				},
			}
			maps.Copy(want, only[tc.typ])
			absent := map[string]bool{}
			for _, names := range only {
				for name := range names {
					if _, ok := want[name]; !ok {
						absent[name] = true
					}
				}
			}
			items := g.Tensors().Items()
			if n := 1 + 16*int(tc.layers) + len(only[tc.typ]); len(items) != n {
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
				if absent[ts.Name] {
					t.Errorf("%s in a %s projector", ts.Name, tc.typ)
				}
			}
			for name := range want {
				if !slices.ContainsFunc(items, func(ts *ggml.Tensor) bool { return ts.Name == name }) {
					t.Errorf("no tensor %s", name)
				}
			}

			floats := func(name string) []float32 { return floats(t, g, f, name) }
			ones, zeros := []string{last + "ln2.weight"}, []string{last + "ln1.bias"}
			random := []string{"v.patch_embd.weight", last + "attn_q.bias"}
			switch {
			case gemma:
				ones = append(ones, "v.post_ln.weight", "mm.soft_emb_norm.weight")
				zeros = append(zeros, "v.post_ln.bias")
				random = append(random, "v.patch_embd.bias", "mm.input_projection.weight")
			case qwen:
				ones = append(ones, "v.post_ln.weight")
				zeros = append(zeros, "v.post_ln.bias")
				random = append(random, "v.patch_embd.weight.1", "mm.0.weight", "mm.2.bias")
			default:
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
			if qwen && slices.Equal(floats("v.patch_embd.weight"), floats("v.patch_embd.weight.1")) {
				t.Error("the two patch convolutions are equal")
			}
		})
	}
}

func TestProjectorImageGrid(t *testing.T) {
	for _, tc := range []struct {
		opts          ProjectorOptions
		width, height int
		nx, ny        int
	}{
		// mlp and gemma3: the same square grid for every picture.
		{ProjectorOptions{}, 40, 30, 4, 4},
		{ProjectorOptions{ImageSize: 48, PatchSize: 4}, 1, 1, 12, 12},
		{ProjectorOptions{Type: "gemma3"}, 64, 16, 4, 4},
		{ProjectorOptions{Type: "gemma3", ImageSize: 48, Merge: 3}, 7, 700, 4, 4},
		// qwen2vl, 8×8 pixels per embedding: sides round to multiples
		// of 8, halves up.
		{ProjectorOptions{Type: "qwen2vl"}, 32, 32, 4, 4},
		{ProjectorOptions{Type: "qwen2vl"}, 40, 30, 5, 4},
		{ProjectorOptions{Type: "qwen2vl"}, 24, 24, 3, 3},
		{ProjectorOptions{Type: "qwen2vl"}, 64, 16, 8, 2},
		{ProjectorOptions{Type: "qwen2vl"}, 36, 28, 5, 4},
		{ProjectorOptions{Type: "qwen2vl"}, 35, 27, 4, 3},
		{ProjectorOptions{Type: "qwen2vl"}, 200, 8, 25, 1},
		// Fewer than 8: scaled up, rounding up.
		{ProjectorOptions{Type: "qwen2vl"}, 16, 16, 3, 3},
		{ProjectorOptions{Type: "qwen2vl"}, 1, 1, 3, 3},
		{ProjectorOptions{Type: "qwen2vl"}, 40, 10, 6, 2},
		// More than 4096: scaled down, rounding down.
		{ProjectorOptions{Type: "qwen2vl"}, 1024, 512, 90, 45},
		{ProjectorOptions{Type: "qwen2vl"}, 600, 600, 64, 64},
		// Patches of 14, as in Qwen2-VL: 28×28 pixels per embedding.
		{ProjectorOptions{Type: "qwen2vl", PatchSize: 14}, 640, 480, 23, 17},
	} {
		nx, ny, err := tc.opts.ImageGrid(tc.width, tc.height)
		if err != nil || nx != tc.nx || ny != tc.ny {
			t.Errorf("%+v: %d×%d picture: grid %d×%d, %v; want %d×%d", tc.opts, tc.width, tc.height, nx, ny, err, tc.nx, tc.ny)
		}
	}
	for _, tc := range []struct {
		opts          ProjectorOptions
		width, height int
		want          string
	}{
		{ProjectorOptions{Type: "qwen2vl"}, 0, 10, "picture of 0×10 pixels out of range"},
		{ProjectorOptions{}, 10, -1, "picture of 10×-1 pixels out of range"},
		{ProjectorOptions{Type: "qwen2vl"}, 1 << 16, 10, "out of range"},
		{ProjectorOptions{Type: "qwen2vl", ImageSize: 32}, 10, 10, "ImageSize 32: qwen2vl sizes each image on its own"},
		{ProjectorOptions{Type: "bogus"}, 10, 10, `unknown projector Type "bogus"`},
	} {
		if _, _, err := tc.opts.ImageGrid(tc.width, tc.height); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %d×%d picture: error %v, want one with %q", tc.opts, tc.width, tc.height, err, tc.want)
		}
	}
}

func TestProjectorDeterministic(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, o ProjectorOptions) []byte {
		t.Helper()
		return readBack(t, filepath.Join(dir, name), func(p string) error { return WriteProjector(p, o) })
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
	q := ProjectorOptions{Type: "qwen2vl", Embd: 256, FF: 512, Heads: 4, Seed: 42}
	if g, h := write("g.gguf", q), write("h.gguf", q); !bytes.Equal(g, h) {
		t.Error("two qwen2vl writes with the same options differ")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 8 {
		t.Errorf("%d files in the directory, want 8 (no temporary files left)", len(entries))
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
		{ProjectorOptions{Type: "qwen2vl", ImageSize: 32}, "ImageSize 32: qwen2vl sizes each image on its own"},
		{ProjectorOptions{Type: "qwen2vl", Merge: 3}, "Merge 3: llama.cpp merges qwen2vl patches 2×2 only"},
		{ProjectorOptions{Type: "qwen2vl", Merge: -1}, "Merge -1: llama.cpp merges qwen2vl"},
		{ProjectorOptions{Type: "qwen2vl", Embd: 24, Heads: 4}, "heads of 6 (Embd/Heads) are not a multiple of 4"},
		{ProjectorOptions{Type: "qwen2vl", Embd: 30, Heads: 4}, "not a multiple of Heads"},
		{ProjectorOptions{Type: "qwen2vl", PatchSize: -4}, "PatchSize -4 out of range"},
		{ProjectorOptions{Type: "Qwen2VL"}, `unknown projector Type "Qwen2VL"`},
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
