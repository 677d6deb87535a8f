package inferencetest

import (
	"fmt"
	"path/filepath"
	"testing"
)

// ProjectorOptions describe a vision projector to write. The zero value gives
// a projector for the default text model of [Options] (64 dimensions): a
// CLIP vision tower of 32 dimensions, 2 heads and 2 blocks over 32×32
// images cut into 8×8 patches, so that every image becomes 16 embeddings of
// 64 dimensions, in F32 with the weights of seed 0.
type ProjectorOptions struct {
	// TextEmbd is the width of the embeddings the projector outputs, which
	// must be the text model's Embd (default 64).
	TextEmbd int
	// ImageSize is the width and height, in pixels, of the square images
	// the vision tower sees (default 32). llama.cpp pads every image to a
	// square and resizes it to ImageSize×ImageSize.
	ImageSize int
	// PatchSize is the width and height of a patch; it divides ImageSize
	// (default 8). An image gives (ImageSize/PatchSize)² embeddings.
	PatchSize int
	// Embd is the width of the vision tower's hidden state (default 32).
	Embd int
	// Layers is the number of vision transformer blocks (default 2). As in
	// LLaVA, the projector takes the output of the next-to-last block, so
	// the last block is loaded but never run, and a one-block tower runs
	// only the patch and position embeddings and the pre-norm.
	Layers int
	// Heads is the number of attention heads; it divides Embd (default 2).
	Heads int
	// FF is the width of the vision blocks' feed-forward layer (default 64).
	// Where it equals Embd, llama.cpp takes the file for an old one whose
	// ffn_up and ffn_down are named the wrong way round, logs a warning and
	// swaps them, which is harmless for random weights.
	FF int
	// Seed selects the random weights: the same options write the same file.
	Seed int64
}

// CLIP's image normalisation, which LLaVA-1.5 uses.
var (
	clipImageMean = []float32{0.48145466, 0.4578275, 0.40821073}
	clipImageStd  = []float32{0.26862954, 0.26130258, 0.27577711}
)

// Projector writes the projector that opts describe into a temporary
// directory of t, removed when the test ends, and returns its path. It stops
// the test with t.Fatal if writing fails.
func Projector(t testing.TB, opts ProjectorOptions) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mmproj.gguf")
	if err := WriteProjector(path, opts); err != nil {
		t.Fatal(err)
	}
	return path
}

// WriteProjector writes the vision projector that opts describe to path as
// a GGUF file that llama.cpp's multimodal library (mtmd) loads beside a text
// model: a LLaVA-1.5 style projector (clip.projector_type "mlp"), that is a
// CLIP vision transformer followed by two linear layers with a GELU between
// them, all in F32. Its TextEmbd must equal the text model's Embd. Like
// [WriteModel], it writes a temporary file beside path and renames it, and
// may be called concurrently with distinct paths.
func WriteProjector(path string, opts ProjectorOptions) error {
	kvs, ts, err := layoutProjector(opts)
	if err != nil {
		return err
	}
	return writeGGUF(path, kvs, ts, opts.Seed)
}

// layoutProjector checks o, fills in the defaults and returns the
// projector's metadata and tensors, under the names and in the shapes that
// llama.cpp's clip.cpp loads for projector type mlp.
func layoutProjector(o ProjectorOptions) ([]kv, []tensorSpec, error) {
	for _, f := range []struct {
		name string
		p    *int
		def  int
	}{
		{"TextEmbd", &o.TextEmbd, 64}, {"ImageSize", &o.ImageSize, 32}, {"PatchSize", &o.PatchSize, 8},
		{"Embd", &o.Embd, 32}, {"Layers", &o.Layers, 2}, {"Heads", &o.Heads, 2}, {"FF", &o.FF, 64},
	} {
		if *f.p == 0 {
			*f.p = f.def
		}
		if *f.p < 0 || *f.p > 1<<20 {
			return nil, nil, fmt.Errorf("inferencetest: projector %s %d out of range", f.name, *f.p)
		}
	}
	if o.ImageSize%o.PatchSize != 0 {
		return nil, nil, fmt.Errorf("inferencetest: projector ImageSize %d is not a multiple of PatchSize %d", o.ImageSize, o.PatchSize)
	}
	if o.Embd%o.Heads != 0 {
		return nil, nil, fmt.Errorf("inferencetest: projector Embd %d is not a multiple of Heads %d", o.Embd, o.Heads)
	}
	side := uint64(o.ImageSize / o.PatchSize)
	if side*side > 1<<16 {
		return nil, nil, fmt.Errorf("inferencetest: projector has %d patches per image, more than %d", side*side, 1<<16)
	}

	const p = "clip.vision."
	kvs := []kv{
		{"general.architecture", "clip"},
		{"general.name", "inferencetest"},
		{"general.file_type", uint32(0)},
		{"clip.has_vision_encoder", true},
		{"clip.projector_type", "mlp"},
		// CLIP's quick GELU in the vision blocks, as in LLaVA-1.5; the
		// GELU between mm.0 and mm.2 is GELU whatever this says.
		{"clip.use_gelu", false},
		{p + "image_size", uint32(o.ImageSize)},
		{p + "patch_size", uint32(o.PatchSize)},
		{p + "embedding_length", uint32(o.Embd)},
		{p + "feed_forward_length", uint32(o.FF)},
		{p + "projection_dim", uint32(o.TextEmbd)},
		{p + "block_count", uint32(o.Layers)},
		{p + "attention.head_count", uint32(o.Heads)},
		{p + "attention.layer_norm_epsilon", float32(1e-5)},
		{p + "image_mean", clipImageMean},
		{p + "image_std", clipImageStd},
	}

	embd, ff, text, patch := uint64(o.Embd), uint64(o.FF), uint64(o.TextEmbd), uint64(o.PatchSize)
	matrix := func(name string, cols, rows uint64) tensorSpec {
		return tensorSpec{name: name, shape: []uint64{cols, rows}, typ: typeF32}
	}
	vec := func(name string, n uint64) tensorSpec {
		return tensorSpec{name: name, shape: []uint64{n}, typ: typeF32}
	}
	norm := func(name string) []tensorSpec {
		return []tensorSpec{
			{name: name + ".weight", shape: []uint64{embd}, typ: typeF32, ones: true},
			{name: name + ".bias", shape: []uint64{embd}, typ: typeF32, zeros: true},
		}
	}
	ts := []tensorSpec{
		// A convolution with a PatchSize kernel and stride over the three
		// colour channels, one output channel per dimension.
		{name: "v.patch_embd.weight", shape: []uint64{patch, patch, 3, embd}, typ: typeF32},
		vec("v.class_embd", embd),
		// One position per patch and one for the class embedding.
		matrix("v.position_embd.weight", embd, side*side+1),
	}
	ts = append(ts, norm("v.pre_ln")...)
	for i := range o.Layers {
		b := fmt.Sprintf("v.blk.%d.", i)
		ts = append(ts, norm(b+"ln1")...)
		ts = append(ts,
			matrix(b+"attn_q.weight", embd, embd), vec(b+"attn_q.bias", embd),
			matrix(b+"attn_k.weight", embd, embd), vec(b+"attn_k.bias", embd),
			matrix(b+"attn_v.weight", embd, embd), vec(b+"attn_v.bias", embd),
			matrix(b+"attn_out.weight", embd, embd), vec(b+"attn_out.bias", embd),
		)
		ts = append(ts, norm(b+"ln2")...)
		ts = append(ts,
			matrix(b+"ffn_up.weight", embd, ff), vec(b+"ffn_up.bias", ff),
			matrix(b+"ffn_down.weight", ff, embd), vec(b+"ffn_down.bias", embd),
		)
	}
	ts = append(ts,
		matrix("mm.0.weight", embd, text), vec("mm.0.bias", text),
		matrix("mm.2.weight", text, text), vec("mm.2.bias", text),
	)
	return kvs, ts, nil
}
