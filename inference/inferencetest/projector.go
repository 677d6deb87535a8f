package inferencetest

import (
	"fmt"
	"path/filepath"
	"testing"
)

// ProjectorOptions describe a vision projector to write. The zero value gives
// a LLaVA-style projector for the default text model of [Options] (64
// dimensions): a CLIP vision tower of 32 dimensions, 2 heads and 2 blocks
// over 32×32 images cut into 8×8 patches, so that every image becomes 16
// embeddings of 64 dimensions, in F32 with the weights of seed 0.
type ProjectorOptions struct {
	// Type is the kind of projector, clip.projector_type:
	//
	//   - "mlp" (the default): LLaVA-1.5's, a CLIP vision tower (class
	//     embedding, quick GELU) followed by two linear layers with a GELU
	//     between them. An image gives (ImageSize/PatchSize)² embeddings, 16
	//     with the defaults.
	//   - "gemma3": Gemma 3's, a SigLIP vision tower (patch bias, GELU, a
	//     final layer norm) whose output is average-pooled over Merge×Merge
	//     patches, RMS-normed and projected by one matrix; pair it with a
	//     text model of Options{Arch: "gemma3"}. mtmd puts the text
	//     <start_of_image> before an image's embeddings and <end_of_image>
	//     after them (byte tokens in the [ByteLevel] vocabulary), and wants
	//     the embeddings decoded in one batch with non-causal attention. An
	//     image gives (ImageSize/PatchSize/Merge)² embeddings, 16 with the
	//     defaults (32×32 images, 4×4 patches, Merge 2).
	Type string
	// TextEmbd is the width of the embeddings the projector outputs, which
	// must be the text model's Embd (default 64).
	TextEmbd int
	// ImageSize is the width and height, in pixels, of the square images
	// the vision tower sees (default 32). llama.cpp resizes every image to
	// ImageSize×ImageSize, padding it to a square first for mlp and
	// stretching it for gemma3.
	ImageSize int
	// PatchSize is the width and height of a patch; it divides ImageSize
	// (default 8; 4 for gemma3).
	PatchSize int
	// Merge is the side of the square of patches that gemma3 averages into
	// one embedding, clip.vision.projector.scale_factor; it divides
	// ImageSize/PatchSize (default 2; real Gemma 3 has 4). It must be left
	// zero for mlp.
	Merge int
	// Embd is the width of the vision tower's hidden state (default 32).
	Embd int
	// Layers is the number of vision transformer blocks (default 2). As in
	// LLaVA, an mlp projector takes the output of the next-to-last block, so
	// the last block is loaded but never run, and a one-block tower runs
	// only the patch and position embeddings and the pre-norm. A gemma3
	// projector runs every block.
	Layers int
	// Heads is the number of attention heads; it divides Embd (default 2).
	Heads int
	// FF is the width of the vision blocks' feed-forward layer (default 64).
	// Where it equals Embd, llama.cpp takes the file for an old one whose
	// ffn_up and ffn_down are named the wrong way round, logs a warning and
	// swaps them, which is harmless for random weights (both types).
	FF int
	// Seed selects the random weights: the same options write the same file.
	Seed int64
}

// CLIP's image normalisation, which LLaVA-1.5 uses, and SigLIP's, which
// Gemma 3 uses.
var (
	clipImageMean   = []float32{0.48145466, 0.4578275, 0.40821073}
	clipImageStd    = []float32{0.26862954, 0.26130258, 0.27577711}
	siglipImageMean = []float32{0.5, 0.5, 0.5}
	siglipImageStd  = []float32{0.5, 0.5, 0.5}
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
// model, of the Type that opts names (a LLaVA-1.5 or a Gemma 3 projector),
// all in F32. Its TextEmbd must equal the text model's Embd. Like
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
// llama.cpp's clip.cpp loads for projector types mlp and gemma3.
func layoutProjector(o ProjectorOptions) ([]kv, []tensorSpec, error) {
	patchSize, merge := 8, 0
	switch o.Type {
	case "", "mlp":
		o.Type = "mlp"
		if o.Merge != 0 {
			return nil, nil, fmt.Errorf("inferencetest: projector Merge %d: mlp merges no patches", o.Merge)
		}
	case "gemma3":
		patchSize, merge = 4, 2
	default:
		return nil, nil, fmt.Errorf("inferencetest: unknown projector Type %q; want mlp or gemma3", o.Type)
	}
	gemma := o.Type == "gemma3"
	for _, f := range []struct {
		name string
		p    *int
		def  int
	}{
		{"TextEmbd", &o.TextEmbd, 64}, {"ImageSize", &o.ImageSize, 32}, {"PatchSize", &o.PatchSize, patchSize},
		{"Merge", &o.Merge, merge}, {"Embd", &o.Embd, 32}, {"Layers", &o.Layers, 2}, {"Heads", &o.Heads, 2},
		{"FF", &o.FF, 64},
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
	if gemma && side%uint64(o.Merge) != 0 {
		return nil, nil, fmt.Errorf("inferencetest: projector Merge %d does not divide the %d patches of a side", o.Merge, side)
	}

	const p = "clip.vision."
	eps, mean, std := float32(1e-5), clipImageMean, clipImageStd
	if gemma {
		eps, mean, std = 1e-6, siglipImageMean, siglipImageStd
	}
	kvs := []kv{
		{"general.architecture", "clip"},
		{"general.name", "inferencetest"},
		{"general.file_type", uint32(0)},
		{"clip.has_vision_encoder", true},
		{"clip.projector_type", o.Type},
		// mlp: CLIP's quick GELU in the vision blocks, as in LLaVA-1.5
		// (the GELU between mm.0 and mm.2 is GELU whatever this says);
		// gemma3: SigLIP's GELU.
		{"clip.use_gelu", gemma},
		{p + "image_size", uint32(o.ImageSize)},
		{p + "patch_size", uint32(o.PatchSize)},
		{p + "embedding_length", uint32(o.Embd)},
		{p + "feed_forward_length", uint32(o.FF)},
		{p + "projection_dim", uint32(o.TextEmbd)},
		{p + "block_count", uint32(o.Layers)},
		{p + "attention.head_count", uint32(o.Heads)},
		{p + "attention.layer_norm_epsilon", eps},
		{p + "image_mean", mean},
		{p + "image_std", std},
	}
	if gemma {
		kvs = append(kvs, kv{p + "projector.scale_factor", uint32(o.Merge)})
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
	}
	if gemma {
		// SigLIP: a bias on the convolution, one position per patch, no
		// class embedding and no norm before the blocks.
		ts = append(ts, vec("v.patch_embd.bias", embd), matrix("v.position_embd.weight", embd, side*side))
	} else {
		// CLIP: one position per patch and one for the class embedding.
		ts = append(ts, vec("v.class_embd", embd), matrix("v.position_embd.weight", embd, side*side+1))
		ts = append(ts, norm("v.pre_ln")...)
	}
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
	if gemma {
		ts = append(ts, norm("v.post_ln")...)
		// The RMS norm of the pooled patches, of weight 1 (converters store
		// Gemma's 1 + w, which llama.cpp multiplies by), and the projection
		// to the text model's width, which llama.cpp transposes first.
		ts = append(ts,
			tensorSpec{name: "mm.soft_emb_norm.weight", shape: []uint64{embd}, typ: typeF32, ones: true},
			matrix("mm.input_projection.weight", text, embd),
		)
		return kvs, ts, nil
	}
	ts = append(ts,
		matrix("mm.0.weight", embd, text), vec("mm.0.bias", text),
		matrix("mm.2.weight", text, text), vec("mm.2.bias", text),
	)
	return kvs, ts, nil
}
