package tinymodel

import (
	"fmt"
	"math"
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
	//   - "qwen2vl": Qwen2-VL's, clip.projector_type "qwen2vl_merger": a
	//     vision tower that sees each picture at about its own size and
	//     aspect ratio, with 2-D rotary embeddings instead of position
	//     embeddings (two patch convolutions, as converters split
	//     Qwen2-VL's two-frame one, GELU, a final layer norm), whose output
	//     is merged 2×2 patches at a time by two linear layers with a GELU
	//     between them. Pair it with a text model of Options{Arch:
	//     "qwen2vl"}. An image gives a grid of nx×ny embeddings, row by row,
	//     that follows the picture (8 to 4096 of them; see
	//     [ProjectorOptions.ImageGrid]): with the defaults (4×4 patches, so
	//     8×8 pixels per embedding) a 32×32 picture gives 4×4 embeddings
	//     and a 64×16 one 8×2. mtmd gives them M-RoPE positions: for an
	//     image that starts at position p, the embedding in row y and
	//     column x has position p, row p+y and column p+x, and the image
	//     takes max(nx, ny) positions. It puts the text <|vision_start|>
	//     before the embeddings and <|vision_end|> after them.
	Type string
	// TextEmbd is the width of the embeddings the projector outputs, which
	// must be the text model's Embd (default 64).
	TextEmbd int
	// ImageSize is the width and height, in pixels, of the square images
	// the vision tower sees (default 32). llama.cpp resizes every image to
	// ImageSize×ImageSize, padding it to a square first for mlp and
	// stretching it for gemma3. It must be left zero for qwen2vl, which
	// sizes each image on its own (the file says 560, as converters write
	// for Qwen2-VL, and llama.cpp does not use it).
	ImageSize int
	// PatchSize is the width and height of a patch; it divides ImageSize
	// (default 8; 4 for gemma3 and qwen2vl).
	PatchSize int
	// Merge is the side of the square of patches that gemma3 averages into
	// one embedding, clip.vision.projector.scale_factor; it divides
	// ImageSize/PatchSize (default 2; real Gemma 3 has 4). It must be left
	// zero for mlp; for qwen2vl it is clip.vision.spatial_merge_size, which
	// llama.cpp supports only at 2, the default.
	Merge int
	// Embd is the width of the vision tower's hidden state (default 32).
	// For qwen2vl, each head (Embd/Heads wide) must be a multiple of 4
	// wide, for the 2-D rotary embeddings.
	Embd int
	// Layers is the number of vision transformer blocks (default 2). As in
	// LLaVA, an mlp projector takes the output of the next-to-last block, so
	// the last block is loaded but never run, and a one-block tower runs
	// only the patch and position embeddings and the pre-norm. Gemma3 and
	// qwen2vl projectors run every block.
	Layers int
	// Heads is the number of attention heads; it divides Embd (default 2).
	Heads int
	// FF is the width of the vision blocks' feed-forward layer (default 64).
	// Where it equals Embd, llama.cpp takes the file for an old one whose
	// ffn_up and ffn_down are named the wrong way round, logs a warning and
	// swaps them, which is harmless for random weights (all types).
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
// model, of the Type that opts names (a LLaVA-1.5, Gemma 3 or Qwen2-VL
// projector), all in F32. Its TextEmbd must equal the text model's Embd. Like
// [WriteModel], it writes a temporary file beside path and renames it, and
// may be called concurrently with distinct paths.
func WriteProjector(path string, opts ProjectorOptions) error {
	kvs, ts, err := layoutProjector(opts)
	if err != nil {
		return err
	}
	return writeGGUF(path, kvs, ts, opts.Seed)
}

// Qwen2-VL's dynamic resolution, as llama.cpp's clip.cpp hard-codes it
// for projector type qwen2vl: an image gives 8 to 4096 embeddings.
const (
	qwen2vlMinTokens = 8
	qwen2vlMaxTokens = 4096
	qwen2vlMerge     = 2
)

// fill checks o and fills in the defaults.
func (o *ProjectorOptions) fill() error {
	patchSize, merge, imageSize := 8, 0, 32
	switch o.Type {
	case "", "mlp":
		o.Type = "mlp"
		if o.Merge != 0 {
			return fmt.Errorf("inferencetest: projector Merge %d: mlp merges no patches", o.Merge)
		}
	case "gemma3":
		patchSize, merge = 4, 2
	case "qwen2vl":
		patchSize, merge, imageSize = 4, qwen2vlMerge, 0
		if o.ImageSize != 0 {
			return fmt.Errorf("inferencetest: projector ImageSize %d: qwen2vl sizes each image on its own", o.ImageSize)
		}
		if o.Merge != 0 && o.Merge != qwen2vlMerge {
			return fmt.Errorf("inferencetest: projector Merge %d: llama.cpp merges qwen2vl patches %d×%d only", o.Merge, qwen2vlMerge, qwen2vlMerge)
		}
	default:
		return fmt.Errorf("inferencetest: unknown projector Type %q; want mlp, gemma3 or qwen2vl", o.Type)
	}
	for _, f := range []struct {
		name string
		p    *int
		def  int
	}{
		{"TextEmbd", &o.TextEmbd, 64}, {"ImageSize", &o.ImageSize, imageSize}, {"PatchSize", &o.PatchSize, patchSize},
		{"Merge", &o.Merge, merge}, {"Embd", &o.Embd, 32}, {"Layers", &o.Layers, 2}, {"Heads", &o.Heads, 2},
		{"FF", &o.FF, 64},
	} {
		if *f.p == 0 {
			*f.p = f.def
		}
		if *f.p < 0 || *f.p > 1<<20 {
			return fmt.Errorf("inferencetest: projector %s %d out of range", f.name, *f.p)
		}
	}
	if o.Embd%o.Heads != 0 {
		return fmt.Errorf("inferencetest: projector Embd %d is not a multiple of Heads %d", o.Embd, o.Heads)
	}
	if o.Type == "qwen2vl" {
		if head := o.Embd / o.Heads; head%4 != 0 {
			return fmt.Errorf("inferencetest: projector heads of %d (Embd/Heads) are not a multiple of 4; qwen2vl's 2-D rotary embeddings need it", head)
		}
		return nil
	}
	if o.ImageSize%o.PatchSize != 0 {
		return fmt.Errorf("inferencetest: projector ImageSize %d is not a multiple of PatchSize %d", o.ImageSize, o.PatchSize)
	}
	side := o.ImageSize / o.PatchSize
	if side*side > 1<<16 {
		return fmt.Errorf("inferencetest: projector has %d patches per image, more than %d", side*side, 1<<16)
	}
	if o.Type == "gemma3" && side%o.Merge != 0 {
		return fmt.Errorf("inferencetest: projector Merge %d does not divide the %d patches of a side", o.Merge, side)
	}
	return nil
}

// ImageGrid returns the grid of embeddings that llama.cpp's mtmd makes of
// a width×height picture with the projector that o describes: ny rows of
// nx, nx*ny embeddings in all, row by row. It fails if o is not valid or a
// side is not between 1 and 32768.
//
// For mlp and gemma3, which see every picture at ImageSize×ImageSize,
// the grid is square whatever the picture (mtmd itself reports it as one
// row of nx*ny). For qwen2vl it follows the picture, which llama.cpp
// resizes as Qwen2-VL's smart_resize does, in float32. With f =
// 2*PatchSize, the pixels of one embedding's side, each side is rounded
// to the nearest multiple of f (halves away from zero), at least f; if
// that gives fewer than 8 or more than 4096 embeddings, both sides are
// instead scaled by the one factor that reaches the bound and rounded up
// (below 8) or down (above 4096, and at least f) to multiples of f. nx and
// ny are the resized sides divided by f. With the default PatchSize of 4
// (f = 8): 32×32 gives 4×4, 40×30 gives 5×4 (30 rounds to 32), 64×16
// gives 8×2 and 24×24 3×3, while 16×16 (2×2, under 8) is scaled by
// sqrt(2) to 3×3.
func (o ProjectorOptions) ImageGrid(width, height int) (nx, ny int, err error) {
	if err := o.fill(); err != nil {
		return 0, 0, err
	}
	if width <= 0 || height <= 0 || width > 1<<15 || height > 1<<15 {
		return 0, 0, fmt.Errorf("inferencetest: picture of %d×%d pixels out of range", width, height)
	}
	switch o.Type {
	case "mlp":
		side := o.ImageSize / o.PatchSize
		return side, side, nil
	case "gemma3":
		side := o.ImageSize / o.PatchSize / o.Merge
		return side, side, nil
	}
	// clip.cpp's img_tool::calc_size_preserved_ratio with align_size f,
	// in the same float32 operations.
	f := qwen2vlMerge * o.PatchSize
	minPixels, maxPixels := qwen2vlMinTokens*f*f, qwen2vlMaxTokens*f*f
	by := func(round func(float64) float64, x float32) int {
		return int(round(float64(x/float32(f)))) * f
	}
	w, h := max(f, by(math.Round, float32(width))), max(f, by(math.Round, float32(height)))
	switch {
	case w*h > maxPixels:
		beta := float32(math.Sqrt(float64(float32(height*width) / float32(maxPixels))))
		w, h = max(f, by(math.Floor, float32(width)/beta)), max(f, by(math.Floor, float32(height)/beta))
	case w*h < minPixels:
		beta := float32(math.Sqrt(float64(float32(minPixels) / float32(height*width))))
		w, h = by(math.Ceil, float32(width)*beta), by(math.Ceil, float32(height)*beta)
	}
	return w / f, h / f, nil
}

// layoutProjector checks o, fills in the defaults and returns the
// projector's metadata and tensors, under the names and in the shapes that
// llama.cpp's clip.cpp loads for projector types mlp, gemma3 and qwen2vl.
func layoutProjector(o ProjectorOptions) ([]kv, []tensorSpec, error) {
	if err := o.fill(); err != nil {
		return nil, nil, err
	}
	gemma, qwen := o.Type == "gemma3", o.Type == "qwen2vl"

	const p = "clip.vision."
	eps, mean, std := float32(1e-5), clipImageMean, clipImageStd
	if gemma {
		eps, mean, std = 1e-6, siglipImageMean, siglipImageStd
	}
	projType, imageSize := o.Type, o.ImageSize
	if qwen {
		// Qwen2-VL normalises as CLIP does.
		eps, projType, imageSize = 1e-6, "qwen2vl_merger", 560
	}
	kvs := []kv{
		{"general.architecture", "clip"},
		{"general.name", "inferencetest"},
		{"general.file_type", uint32(0)},
		{"clip.has_vision_encoder", true},
		{"clip.projector_type", projType},
		// mlp: CLIP's quick GELU in the vision blocks, as in LLaVA-1.5
		// (the GELU between mm.0 and mm.2 is GELU whatever this says);
		// gemma3: SigLIP's GELU; qwen2vl: GELU, as converters write it.
		{"clip.use_gelu", gemma || qwen},
		{p + "image_size", uint32(imageSize)},
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
	switch {
	case gemma:
		kvs = append(kvs, kv{p + "projector.scale_factor", uint32(o.Merge)})
	case qwen:
		kvs = append(kvs, kv{p + "spatial_merge_size", uint32(o.Merge)})
	}

	embd, ff, text, patch := uint64(o.Embd), uint64(o.FF), uint64(o.TextEmbd), uint64(o.PatchSize)
	side := uint64(o.ImageSize / o.PatchSize)
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
	switch {
	case gemma:
		// SigLIP: a bias on the convolution, one position per patch, no
		// class embedding and no norm before the blocks.
		ts = append(ts, vec("v.patch_embd.bias", embd), matrix("v.position_embd.weight", embd, side*side))
	case qwen:
		// Qwen2-VL's convolution spans two video frames; converters split
		// it into one kernel per frame, and llama.cpp adds the two
		// convolutions of the picture. No position embeddings (the blocks
		// rotate queries and keys by row and column) and no pre-norm.
		ts = append(ts, tensorSpec{name: "v.patch_embd.weight.1", shape: []uint64{patch, patch, 3, embd}, typ: typeF32})
	default:
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
	switch {
	case gemma:
		ts = append(ts, norm("v.post_ln")...)
		// The RMS norm of the pooled patches, of weight 1 (converters store
		// Gemma's 1 + w, which llama.cpp multiplies by), and the projection
		// to the text model's width, which llama.cpp transposes first.
		ts = append(ts,
			tensorSpec{name: "mm.soft_emb_norm.weight", shape: []uint64{embd}, typ: typeF32, ones: true},
			matrix("mm.input_projection.weight", text, embd),
		)
	case qwen:
		// The merger: a layer norm (Qwen2-VL's ln_q), then the 2×2 patches
		// of each embedding side by side, through two linear layers as wide
		// as the four patches, with a GELU between them.
		merged := embd * qwen2vlMerge * qwen2vlMerge
		ts = append(ts, norm("v.post_ln")...)
		ts = append(ts,
			matrix("mm.0.weight", merged, merged), vec("mm.0.bias", merged),
			matrix("mm.2.weight", merged, text), vec("mm.2.bias", text),
		)
	default:
		ts = append(ts,
			matrix("mm.0.weight", embd, text), vec("mm.0.bias", text),
			matrix("mm.2.weight", text, text), vec("mm.2.bias", text),
		)
	}
	return kvs, ts, nil
}
