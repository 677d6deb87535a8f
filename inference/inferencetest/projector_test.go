package inferencetest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ollama/ollama/fs/ggml"
)

func TestProjectorRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name                                        string
		opts                                        ProjectorOptions
		text, image, patch, embd, layers, heads, ff uint64
	}{
		{"default", ProjectorOptions{}, 64, 32, 8, 32, 2, 2, 64},
		{"custom", ProjectorOptions{TextEmbd: 96, ImageSize: 24, PatchSize: 4, Embd: 48, Layers: 3, Heads: 4, FF: 80, Seed: 9}, 96, 24, 4, 48, 3, 4, 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := Projector(t, tc.opts)
			g, f := decode(t, path)
			kv := g.KV()
			if got := kv.Architecture(); got != "clip" {
				t.Fatalf("architecture %q", got)
			}
			if got := kv.String("projector_type"); got != "mlp" {
				t.Errorf("projector type %q", got)
			}
			if !kv.Bool("has_vision_encoder") {
				t.Error("has_vision_encoder is not true")
			}
			if kv.Bool("use_gelu", true) {
				t.Error("use_gelu is not false")
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
			if got := kv.Float("vision.attention.layer_norm_epsilon"); got != 1e-5 {
				t.Errorf("layer_norm_epsilon = %v", got)
			}
			if got := kv.Floats("vision.image_mean"); !slices.Equal(got, clipImageMean) {
				t.Errorf("image_mean %v", got)
			}
			if got := kv.Floats("vision.image_std"); !slices.Equal(got, clipImageStd) {
				t.Errorf("image_std %v", got)
			}

			e, ff, text, side := tc.embd, tc.ff, tc.text, tc.image/tc.patch
			last := fmt.Sprintf("v.blk.%d.", tc.layers-1)
			want := map[string][]uint64{
				"v.patch_embd.weight":    {tc.patch, tc.patch, 3, e},
				"v.class_embd":           {e},
				"v.position_embd.weight": {e, side*side + 1},
				"v.pre_ln.weight":        {e},
				"v.pre_ln.bias":          {e},
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
				"mm.0.weight":            {e, text},
				"mm.0.bias":              {text},
				"mm.2.weight":            {text, text},
				"mm.2.bias":              {text},
			}
			items := g.Tensors().Items()
			if n := 5 + 16*int(tc.layers) + 4; len(items) != n {
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
			for _, v := range floats(last + "ln2.weight") {
				if v != 1 {
					t.Fatalf("norm weight %v, want 1", v)
				}
			}
			for _, v := range floats("v.pre_ln.bias") {
				if v != 0 {
					t.Fatalf("norm bias %v, want 0", v)
				}
			}
			w := floats("v.patch_embd.weight")
			if w[0] == 0 || w[0] == w[1] || slices.ContainsFunc(w, func(x float32) bool { return math.Abs(float64(x)) > 2*weightStd }) {
				t.Errorf("patch embedding %v... is not random within ±%v", w[:4], 2*weightStd)
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
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("%d files in the directory, want 3 (no temporary files left)", len(entries))
	}
}

func TestProjectorOptionErrors(t *testing.T) {
	for _, o := range []ProjectorOptions{
		{ImageSize: 30},
		{ImageSize: 32, PatchSize: 6},
		{Embd: 30, Heads: 4},
		{TextEmbd: -1},
		{ImageSize: -32},
		{PatchSize: -8},
		{Embd: -32},
		{Layers: -1},
		{Heads: -2},
		{FF: -1},
		{ImageSize: 1 << 21},
		{ImageSize: 1024, PatchSize: 2},
	} {
		path := filepath.Join(t.TempDir(), "mmproj.gguf")
		if err := WriteProjector(path, o); err == nil {
			t.Errorf("%+v: no error", o)
		} else if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%+v: wrote a file despite the error", o)
		}
	}
}
