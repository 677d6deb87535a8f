package tinymodel

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Options describe a model to write. The zero value gives a two-layer llama
// of 64 dimensions with the [ByteLevel] vocabulary and the [ChatML] template,
// in F32 with the weights of seed 0.
type Options struct {
	// Arch is the architecture:
	//   - "llama", the default.
	//   - "qwen3": llama with RMS norms on each head's queries and keys.
	//   - "gemma3": qwen3's norms, RMS norms after attention and after the
	//     feed-forward layer, token embeddings scaled by sqrt(Embd), a GELU
	//     feed-forward layer, and a sliding window in most layers (see
	//     SlidingWindow).
	//   - "qwen2vl": Qwen2-VL's text model, a Qwen2 (biases on the queries,
	//     keys and values) with multimodal rotary embeddings (M-RoPE), which
	//     give an image's tokens a row and a column besides their position,
	//     so that it reads the images of a projector of Type "qwen2vl" (see
	//     [ProjectorOptions]). Its heads must span Embd (Heads*HeadDim =
	//     Embd) and be at least 6 wide; the HeadDim/2 rotated pairs of a head
	//     are split 1:1.5:1.5 between position, row and column, as in the
	//     published models (2, 3 and 3 pairs for the default HeadDim of 16).
	//   - "bert": an encoder with a reranker's classification head (pooling
	//     type rank, one score per sequence), or an embedding model without
	//     one (see Pooling), and a WordPiece vocabulary of
	//     its own ([PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, [MASK] 4, then
	//     lower-case letters, digits and punctuation as word-initial and
	//     continuation pieces). Its context length defaults to 512, and
	//     KVHeads, HeadDim, TiedEmbeddings, SlidingWindow, Tokenizer and
	//     ChatTemplate must be left zero.
	//   - "nomic-bert": a nomic-bert embedding model (nomic-embed-text's
	//     architecture): bert's vocabulary and post-norm encoder layers,
	//     with rotary position embeddings (RoPE base 1,000) instead of
	//     learned positions, one fused query-key-value projection, and a
	//     SwiGLU feed-forward layer, with no biases but the norms'. It has
	//     no classification head, so Pooling is mean (the default), cls
	//     or last. Its context length defaults to 2048, Embd/Heads must be
	//     even, and the options that bert leaves zero must be left zero.
	//
	// Two architectures keep a recurrent state per sequence instead of, or
	// beside, a KV cache. "mamba" is a Mamba (v1) model, whose layers are
	// selective state-space blocks with no attention and no feed-forward
	// layer: llama.cpp runs it with its recurrent memory, and Heads,
	// KVHeads, HeadDim, FF and SlidingWindow must be left zero. "jamba" is
	// a hybrid: the even layers (0, 2, ...) are Mamba blocks and the odd
	// ones attention without positional encoding, each followed by the
	// gated feed-forward layer; llama.cpp runs it with its hybrid memory, a
	// KV cache for the attention layers and a recurrent state for the
	// others. Jamba needs at least 2 Layers, its heads are Embd/Heads wide,
	// and HeadDim and SlidingWindow must be left zero. See StateSize.
	//
	// Three architectures are written as llama.cpp's current converter
	// names them, for the engine's other backends: the pinned llama.cpp,
	// which the engine links, refuses them as an unknown model
	// architecture.
	//   - "qwen35": Qwen3.5, a hybrid whose every fourth layer (3, 7, ...)
	//     attends and whose other layers are gated delta nets ("linear
	//     attention"), each keeping a recurrent state per sequence. The
	//     attention layers are qwen3's with an output gate; RoPE turns a
	//     quarter of each head, with M-RoPE sections, so HeadDim must be a
	//     multiple of 8. The linear-attention layers have heads of their
	//     own: see LinearKeyHeads, LinearValueHeads and StateSize, which
	//     default to the attention layers' KVHeads, Heads and HeadDim.
	//     Layers defaults to 4 and must be at least 4. The default
	//     vocabulary is [ByteLevel] with tokenizer.ggml.pre "qwen35" and
	//     the [Qwen35Template] chat template. SlidingWindow and Pooling
	//     must be left zero. NextN appends multi-token-prediction blocks.
	//   - "qwen35moe": Qwen3.5's mixture of experts, qwen35 whose
	//     feed-forward layers (the MTP blocks' too) are 4 experts of FF
	//     each, 2 used a token, beside a gated shared expert of FF; only
	//     the current llama.cpp (internal/libllama) runs it.
	//   - "gemma4": Gemma 4, gemma3's layers with a learned scale on each
	//     layer's output and soft-capped logits, every sixth layer (5, 11,
	//     ...) global and the others sliding-window (see SlidingWindow),
	//     whose heads are HeadDim wide, while global layers' are twice as
	//     wide and rotate only a quarter of it (rope_freqs), so HeadDim
	//     must be a multiple of 4. Layers defaults to 6 and must be at
	//     least 6. The default vocabulary is [Gemma4Tokenizer].
	//     StateSize and Pooling must be left zero.
	Arch string

	// Layers is the number of transformer blocks (default 2; 6 for gemma3
	// and gemma4, 4 for qwen35).
	Layers int
	// Embd is the width of the hidden state (default 64).
	Embd int
	// Heads is the number of attention heads (default 4).
	Heads int
	// KVHeads is the number of key and value heads; it divides Heads
	// (default 2).
	KVHeads int
	// HeadDim is the width of one head's queries, keys and values (default
	// Embd/Heads). Qwen3 models have 128 whatever their width.
	HeadDim int
	// FF is the width of the feed-forward layer (default 128).
	FF int
	// SlidingWindow is the number of positions, the token's own included,
	// that a sliding-window layer attends to: <arch>.attention.sliding_window,
	// gemma3 and gemma4 only (default 32, so that prompts of a hundred
	// tokens outgrow it). llama.cpp makes every sixth layer of a gemma3 model global (5,
	// 11, ...) and the others sliding-window, and aborts the process when
	// decoding with no global layer, so gemma3 needs at least 6 Layers
	// and defaults to 6: layers 0 to 4 slide and layer 5 is global.
	SlidingWindow int
	// StateSize is the size of the recurrent state of each inner channel of
	// a Mamba block, <arch>.ssm.state_size, mamba and jamba only (default
	// 16, as in the published models). The blocks are 2*Embd channels wide
	// (llama.cpp supports no other expansion) and convolve over the last 4
	// positions, so a sequence's state is (3+StateSize)*2*Embd floats per
	// Mamba layer. For qwen35 it is the width of a linear-attention head's
	// queries, keys and values (default HeadDim; Hugging Face's
	// linear_key_head_dim and linear_value_head_dim, which every published
	// Qwen3.5 and Ollama's engine have equal), so that a sequence's state
	// is LinearValueHeads*StateSize*StateSize floats per such layer,
	// beside its convolution's last 3 positions.
	StateSize int
	// LinearKeyHeads is the number of query and key heads of a qwen35
	// linear-attention layer, <arch>.ssm.group_count (Hugging Face's
	// linear_num_key_heads; default KVHeads). It divides LinearValueHeads:
	// each key head serves as many value heads in turn. Other
	// architectures leave it zero.
	LinearKeyHeads int
	// LinearValueHeads is the number of value heads of a qwen35
	// linear-attention layer, each with a state of its own,
	// <arch>.ssm.time_step_rank (linear_num_value_heads; default Heads).
	// Their values are StateSize wide, so <arch>.ssm.inner_size is
	// LinearValueHeads*StateSize. Other architectures leave it zero.
	LinearValueHeads int
	// NextN is the number of multi-token-prediction (MTP) blocks, qwen35
	// only: MTP blocks appended as upstream's converter writes them
	// (llama.cpp's conversion/qwen.py, _Qwen35MtpMixin), after the Layers
	// blocks, as blocks Layers to Layers+NextN-1. <arch>.block_count
	// counts them and <arch>.nextn_predict_layers is NextN. Each is a
	// full-attention block whatever its index, with
	// blk.N.nextn.eh_proj (2*Embd to Embd) and the norms
	// blk.N.nextn.enorm, nextn.hnorm and nextn.shared_head_norm beside;
	// it shares the token embeddings and the output layer. Speculative
	// decoding alone runs them: the model's forward pass ends with block
	// Layers-1, so the same Seed gives the same model whatever NextN.
	NextN int

	// VocabSize pads the tokenizer's vocabulary with unused tokens up to
	// this size, as real models pad theirs (default: the tokenizer's size).
	VocabSize int
	// ContextLength is the training context, <arch>.context_length (default
	// 2048).
	ContextLength int
	// TiedEmbeddings leaves out output.weight, so that the output layer
	// reuses the token embeddings.
	TiedEmbeddings bool

	// Type is the type of the weight matrices: "f32" (the default), "f16" or
	// "q8_0". Norm weights are F32 whatever the type. Q8_0 needs every
	// matrix's rows (Embd, FF and Heads*HeadDim) to be multiples of 32.
	// The same seed gives the same values in every type, up to rounding.
	Type string
	// Seed selects the random weights: the same options write the same file.
	Seed int64

	// Tokenizer is the vocabulary (default [ByteLevel]; for gemma4
	// [Gemma4Tokenizer]).
	Tokenizer *Tokenizer
	// ChatTemplate overrides the tokenizer's chat template.
	ChatTemplate string
	// Name is general.name (default "inferencetest").
	Name string
	// Weights, when set, are trained values of the tensors they name by
	// their GGUF names (such as "blk.0.attn_q.weight"), each tensor's
	// elements in GGUF order, its first dimension contiguous (a matrix's
	// rows one after the other, as PyTorch's nn.Linear.weight flattens),
	// written in Type: a trained model instead of a random one (see
	// scripts/train-tiny). A name the model lacks, or a length other than
	// the tensor's, is an error; tensors not named keep their random
	// values (norms their ones).
	Weights map[string][]float32
	// Pooling makes an embedding model: <arch>.pooling_type is "mean",
	// "cls" or "last", which llama.cpp pools each input's final states
	// by. "" leaves the key out (a generative model; for "bert", a
	// reranker, as "rank" does), except for "nomic-bert", whose key
	// llama.cpp requires: there "" means mean. "bert" takes all four;
	// "nomic-bert" and the attention architectures take mean, cls and
	// last, which for the latter make a decoder embedding model
	// (Qwen3-Embedding pools last); mamba and jamba take none.
	Pooling string
}

// Qwen3_0_6B returns the shape of Qwen3-0.6B in Q8_0: 28 layers, 1024
// dimensions, 16 query and 8 key-value heads of 128, a feed-forward width of
// 3072, tied embeddings and a vocabulary padded to 151,936 tokens. Random
// weights make it useless for text and faithful for speed and memory; the
// file is about 640 MB and takes a few seconds to write. With the default
// [ByteLevel] vocabulary most of the padded vocabulary is unused tokens,
// which the random weights sample as often as any and which render as
// nothing: set Tokenizer to the real Qwen3 vocabulary (see [LoadTokenizer])
// to get its tokenization, text and chat template too.
func Qwen3_0_6B() Options {
	return Options{
		Arch:           "qwen3",
		Layers:         28,
		Embd:           1024,
		Heads:          16,
		KVHeads:        8,
		HeadDim:        128,
		FF:             3072,
		VocabSize:      151936,
		ContextLength:  40960,
		TiedEmbeddings: true,
		Type:           "q8_0",
		Name:           "Qwen3-0.6B-shaped",
	}
}

// Qwen35_0_8B returns the shape of Qwen3.5-0.8B's language model in Q8_0,
// as its config.json gives it: 24 layers of 1024 dimensions, every fourth
// (3, 7, ..., 23) attending with 8 query and 2 key-value heads of 256,
// the others gated delta nets with 16 key and 16 value heads of 128, a
// feed-forward width of 3584, tied embeddings, a vocabulary padded to
// 248,320 tokens and a context of 262,144; its vision encoder and
// multi-token-prediction layer are left out (NextN: 1 adds the latter). Random weights make it
// useless for text and faithful for speed and memory; the file is about
// 810 MB and takes a few seconds to write. Only Ollama's Go engine loads
// it: the pinned llama.cpp does not know qwen35. With the default [ByteLevel]
// vocabulary nearly all of the 248,320 tokens are unused: set Tokenizer to
// a real vocabulary (see [LoadTokenizer]), padded up to 248,320, for real
// tokenization.
func Qwen35_0_8B() Options {
	return Options{
		Arch:             "qwen35",
		Layers:           24,
		Embd:             1024,
		Heads:            8,
		KVHeads:          2,
		HeadDim:          256,
		FF:               3584,
		StateSize:        128,
		LinearKeyHeads:   16,
		LinearValueHeads: 16,
		VocabSize:        248320,
		ContextLength:    262144,
		TiedEmbeddings:   true,
		Type:             "q8_0",
		Name:             "Qwen3.5-0.8B-shaped",
	}
}

// Model writes the model that opts describe into a temporary directory of t,
// removed when the test ends, and returns its path. It stops the test with
// t.Fatal if writing fails.
func Model(t testing.TB, opts Options) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := WriteModel(path, opts); err != nil {
		t.Fatal(err)
	}
	return path
}

// WriteModel writes the model that opts describe to path as a GGUF file. It
// writes a temporary file beside path and renames it, so path never holds a
// partial model. Large models are streamed: memory use stays at a few
// megabytes plus the vocabulary whatever the model's size. WriteModel may be
// called concurrently, with distinct paths.
func WriteModel(path string, opts Options) error {
	kvs, ts, err := layout(opts)
	if err != nil {
		return err
	}
	if err := setWeights(ts, opts.Weights); err != nil {
		return err
	}
	return writeGGUF(path, kvs, ts, opts.Seed)
}

// setWeights gives the tensors of ts that weights names their values.
func setWeights(ts []tensorSpec, weights map[string][]float32) error {
	found := 0
	for i := range ts {
		v, ok := weights[ts[i].name]
		if !ok {
			continue
		}
		if uint64(len(v)) != ts[i].elems() {
			return fmt.Errorf("inferencetest: Weights[%q] has %d values; the tensor has %d", ts[i].name, len(v), ts[i].elems())
		}
		ts[i].values = v
		found++
	}
	if found != len(weights) {
		for name := range weights {
			if !slices.ContainsFunc(ts, func(t tensorSpec) bool { return t.name == name }) {
				return fmt.Errorf("inferencetest: Weights names %q, which the model has no tensor of", name)
			}
		}
	}
	return nil
}

// arch holds what differs between architectures.
type arch struct {
	ropeBase  float32
	rmsEps    float32
	headNorms bool // attn_q_norm and attn_k_norm
	postNorms bool // post_attention_norm and post_ffw_norm
	// swaPattern, if not 0, makes every swaPattern-th layer global and the
	// others sliding-window (attention.sliding_window), as llama.cpp
	// hard-codes for the architecture. It is also the fewest layers.
	swaPattern int
	qkvBias    bool // attn_q, attn_k and attn_v biases
	// mrope writes rope.dimension_sections, which with the architecture
	// makes llama.cpp rotate with M-RoPE; llama.cpp also wants the heads
	// to span the hidden state.
	mrope bool
}

var archs = map[string]arch{
	"llama": {ropeBase: 10000, rmsEps: 1e-5},
	"qwen3": {ropeBase: 1000000, rmsEps: 1e-6, headNorms: true},
	// llama.cpp hard-codes gemma3's other differences: the scaled
	// embeddings, GELU, and a RoPE base of 10,000 in sliding-window
	// layers; ropeBase is the global layers'.
	"gemma3": {ropeBase: 1000000, rmsEps: 1e-6, headNorms: true, postNorms: true, swaPattern: 6},
	// llama.cpp's LLM_ARCH_QWEN2VL: LLAMA_ROPE_TYPE_MROPE whatever the
	// sections say.
	"qwen2vl": {ropeBase: 1000000, rmsEps: 1e-6, qkvBias: true, mrope: true},
}

// attentionHeads defaults HeadDim to Embd/Heads and checks that the
// heads divide as attention needs.
func (o *Options) attentionHeads() error {
	if o.HeadDim == 0 {
		if o.Embd%o.Heads != 0 {
			return fmt.Errorf("inferencetest: Embd %d is not a multiple of Heads %d; set HeadDim", o.Embd, o.Heads)
		}
		o.HeadDim = o.Embd / o.Heads
	}
	if o.Heads%o.KVHeads != 0 {
		return fmt.Errorf("inferencetest: Heads %d is not a multiple of KVHeads %d", o.Heads, o.KVHeads)
	}
	return nil
}

// sizes fills in the default sizes (context: the architecture's default
// context length) and checks that none is out of range.
func (o *Options) sizes(context int) error {
	for _, f := range []struct {
		p   *int
		def int
	}{{&o.Layers, 2}, {&o.Embd, 64}, {&o.Heads, 4}, {&o.FF, 128}, {&o.ContextLength, context}} {
		if *f.p == 0 {
			*f.p = f.def
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"Layers", o.Layers}, {"Embd", o.Embd}, {"Heads", o.Heads}, {"KVHeads", o.KVHeads}, {"HeadDim", o.HeadDim}, {"FF", o.FF}, {"SlidingWindow", o.SlidingWindow}, {"StateSize", o.StateSize}, {"LinearKeyHeads", o.LinearKeyHeads}, {"LinearValueHeads", o.LinearValueHeads}, {"NextN", o.NextN}, {"VocabSize", o.VocabSize}, {"ContextLength", o.ContextLength}} {
		if f.v < 0 || f.v > 1<<30 {
			return fmt.Errorf("inferencetest: %s %d out of range", f.name, f.v)
		}
	}
	return nil
}

// layout checks opts, fills in the defaults and returns the model's
// metadata and tensors.
func layout(o Options) ([]kv, []tensorSpec, error) {
	if o.Arch == "" {
		o.Arch = "llama"
	}
	qwen35 := o.Arch == "qwen35" || o.Arch == "qwen35moe"
	if !qwen35 && (o.LinearKeyHeads != 0 || o.LinearValueHeads != 0) {
		return nil, nil, fmt.Errorf("inferencetest: LinearKeyHeads and LinearValueHeads do not apply to architecture %s", o.Arch)
	}
	if !qwen35 && o.NextN != 0 {
		return nil, nil, fmt.Errorf("inferencetest: NextN does not apply to architecture %s", o.Arch)
	}
	switch o.Arch {
	case "bert", "nomic-bert":
		return layoutBERT(o)
	case "mamba", "jamba":
		return layoutMamba(o)
	case "qwen35", "qwen35moe":
		return layoutQwen35(o)
	case "gemma4":
		return layoutGemma4(o)
	}
	a, ok := archs[o.Arch]
	if !ok {
		return nil, nil, fmt.Errorf("inferencetest: unknown architecture %q", o.Arch)
	}
	if o.StateSize != 0 {
		return nil, nil, fmt.Errorf("inferencetest: StateSize does not apply to architecture %s", o.Arch)
	}
	if o.KVHeads == 0 {
		o.KVHeads = 2
	}
	if a.swaPattern != 0 {
		o.Layers = cmp.Or(o.Layers, a.swaPattern)
		o.SlidingWindow = cmp.Or(o.SlidingWindow, 32)
	}
	if err := o.sizes(2048); err != nil {
		return nil, nil, err
	}
	if a.swaPattern == 0 && o.SlidingWindow != 0 {
		return nil, nil, fmt.Errorf("inferencetest: SlidingWindow does not apply to architecture %s", o.Arch)
	}
	if o.Layers < a.swaPattern {
		return nil, nil, fmt.Errorf("inferencetest: Layers %d: %s needs at least %d, since llama.cpp aborts on a model with no global layer", o.Layers, o.Arch, a.swaPattern)
	}
	if err := o.attentionHeads(); err != nil {
		return nil, nil, err
	}
	if o.HeadDim%2 != 0 {
		return nil, nil, fmt.Errorf("inferencetest: HeadDim %d is odd; rotary embeddings need it even", o.HeadDim)
	}
	var sections []int32
	if a.mrope {
		if o.Heads*o.HeadDim != o.Embd {
			return nil, nil, fmt.Errorf("inferencetest: Heads*HeadDim %d differs from Embd %d; llama.cpp wants them equal for %s", o.Heads*o.HeadDim, o.Embd, o.Arch)
		}
		if sections = mropeSections(o.HeadDim); sections == nil {
			return nil, nil, fmt.Errorf("inferencetest: HeadDim %d is too narrow for M-RoPE; %s needs at least 6", o.HeadDim, o.Arch)
		}
	}
	typ, fileType, err := weightType(o.Type, o.Embd, o.FF, o.Heads*o.HeadDim)
	if err != nil {
		return nil, nil, err
	}
	nVocab, tokKVs, err := textVocab(o)
	if err != nil {
		return nil, nil, err
	}

	p := o.Arch + "."
	kvs := append(shapeKVs(o, fileType, nVocab),
		kv{p + "feed_forward_length", uint32(o.FF)},
		kv{p + "attention.head_count", uint32(o.Heads)},
		kv{p + "attention.head_count_kv", uint32(o.KVHeads)},
		kv{p + "attention.key_length", uint32(o.HeadDim)},
		kv{p + "attention.value_length", uint32(o.HeadDim)},
		kv{p + "attention.layer_norm_rms_epsilon", a.rmsEps},
		kv{p + "rope.dimension_count", uint32(o.HeadDim)},
		kv{p + "rope.freq_base", a.ropeBase},
	)
	kvs = append(kvs, tokKVs...)
	if o.Pooling != "" {
		n, ok := poolingTypes[o.Pooling]
		if !ok || n == poolingRank {
			return nil, nil, fmt.Errorf("inferencetest: Pooling %q; architecture %s takes mean, cls or last", o.Pooling, o.Arch)
		}
		kvs = append(kvs, kv{p + "pooling_type", n})
	}
	if a.swaPattern != 0 {
		kvs = append(kvs, kv{p + "attention.sliding_window", uint32(o.SlidingWindow)})
	}
	if sections != nil {
		kvs = append(kvs, kv{p + "rope.dimension_sections", sections})
	}

	embd, ff, vocab := uint64(o.Embd), uint64(o.FF), uint64(nVocab)
	q, kvw := uint64(o.Heads*o.HeadDim), uint64(o.KVHeads*o.HeadDim)
	ts := []tensorSpec{matrix("token_embd.weight", typ, embd, vocab)}
	for i := range o.Layers {
		b := fmt.Sprintf("blk.%d.", i)
		ts = append(ts, norm(b+"attn_norm.weight", embd))
		ts = append(ts, attention(b, typ, embd, q, kvw)...)
		if a.qkvBias {
			ts = append(ts, attentionBiases(b, q, kvw)...)
		}
		if a.headNorms {
			ts = append(ts,
				norm(b+"attn_q_norm.weight", uint64(o.HeadDim)),
				norm(b+"attn_k_norm.weight", uint64(o.HeadDim)),
			)
		}
		if a.postNorms {
			ts = append(ts, norm(b+"post_attention_norm.weight", embd))
		}
		ts = append(ts, feedForward(b, typ, embd, ff)...)
		if a.postNorms {
			ts = append(ts, norm(b+"post_ffw_norm.weight", embd))
		}
	}
	return kvs, append(ts, outputTensors(o, typ, embd, vocab)...), nil
}

// generalKVs returns the general.* metadata: o's architecture and name
// (default "inferencetest") and the file type fileType.
func generalKVs(o Options, fileType uint32) []kv {
	return []kv{
		{"general.architecture", o.Arch},
		{"general.name", cmp.Or(o.Name, "inferencetest")},
		{"general.file_type", fileType},
		{"general.quantization_version", uint32(2)},
	}
}

// shapeKVs returns generalKVs and the sizes every text architecture
// writes: vocabulary, context, width and depth.
func shapeKVs(o Options, fileType uint32, nVocab int) []kv {
	p := o.Arch + "."
	return append(generalKVs(o, fileType),
		kv{p + "vocab_size", uint32(nVocab)},
		kv{p + "context_length", uint32(o.ContextLength)},
		kv{p + "embedding_length", uint32(o.Embd)},
		kv{p + "block_count", uint32(o.Layers)},
	)
}

// textVocab returns the size of the vocabulary of o.Tokenizer (default
// [ByteLevel]) padded to o.VocabSize, and its tokenizer.* metadata, the chat
// template included, for the architectures that take a [Tokenizer].
func textVocab(o Options) (int, []kv, error) {
	tok := o.Tokenizer
	if tok == nil {
		tok = ByteLevel()
	}
	n, kvs, err := tok.metadata(o.VocabSize)
	if err != nil {
		return 0, nil, err
	}
	if template := cmp.Or(o.ChatTemplate, tok.ChatTemplate); template != "" {
		kvs = append(kvs, kv{"tokenizer.chat_template", template})
	}
	return n, kvs, nil
}

// matrix is a weight matrix of type typ with rows of cols values.
func matrix(name string, typ tensorType, cols, rows uint64) tensorSpec {
	return tensorSpec{name: name, shape: []uint64{cols, rows}, typ: typ}
}

// norm is a norm weight of n ones, in F32.
func norm(name string, n uint64) tensorSpec {
	return tensorSpec{name: name, shape: []uint64{n}, typ: typeF32, ones: true}
}

// f32 is an F32 tensor of random values times scale, plus offset.
func f32(name string, scale, offset float32, shape ...uint64) tensorSpec {
	return tensorSpec{name: name, shape: shape, typ: typeF32, scale: scale, offset: offset}
}

// scaled is t with its random values times scale.
func scaled(t tensorSpec, scale float32) tensorSpec {
	t.scale = scale
	return t
}

// attention returns the attention projections of the layer whose tensor
// names start with b: queries q wide, keys and values kv wide.
func attention(b string, typ tensorType, embd, q, kv uint64) []tensorSpec {
	return []tensorSpec{
		matrix(b+"attn_q.weight", typ, embd, q),
		matrix(b+"attn_k.weight", typ, embd, kv),
		matrix(b+"attn_v.weight", typ, embd, kv),
		matrix(b+"attn_output.weight", typ, q, embd),
	}
}

// attentionBiases returns the biases, random and in F32, of the query, key
// and value projections that attention returns.
func attentionBiases(b string, q, kv uint64) []tensorSpec {
	return []tensorSpec{
		{name: b + "attn_q.bias", shape: []uint64{q}, typ: typeF32},
		{name: b + "attn_k.bias", shape: []uint64{kv}, typ: typeF32},
		{name: b + "attn_v.bias", shape: []uint64{kv}, typ: typeF32},
	}
}

// mropeSections returns <arch>.rope.dimension_sections for heads of
// headDim: the numbers of rotated pairs that turn with the token's
// position, its row and its column (and a fourth, unused section, 0),
// split 1:1.5:1.5 as Qwen2-VL's [16, 24, 24] for heads of 128. llama.cpp
// takes pair i of a head to section (i mod the sections' sum), so that
// with a sum of headDim/2 each pair is in one section. It returns nil if
// the heads are too narrow for each section to have a pair.
func mropeSections(headDim int) []int32 {
	pairs := headDim / 2
	hw := 3 * pairs / 8
	if hw == 0 {
		return nil
	}
	return []int32{int32(pairs - 2*hw), int32(hw), int32(hw), 0}
}

// feedForward returns the norm and the gated feed-forward layer, ff wide,
// of the layer whose tensor names start with b.
func feedForward(b string, typ tensorType, embd, ff uint64) []tensorSpec {
	return []tensorSpec{
		norm(b+"ffn_norm.weight", embd),
		matrix(b+"ffn_gate.weight", typ, embd, ff),
		matrix(b+"ffn_up.weight", typ, embd, ff),
		matrix(b+"ffn_down.weight", typ, ff, embd),
	}
}

// outputTensors returns the final norm and, unless o.TiedEmbeddings, the
// output layer.
func outputTensors(o Options, typ tensorType, embd, vocab uint64) []tensorSpec {
	ts := []tensorSpec{norm("output_norm.weight", embd)}
	if !o.TiedEmbeddings {
		ts = append(ts, matrix("output.weight", typ, embd, vocab))
	}
	return ts
}

// weightType returns the tensor type and general.file_type of the type
// name t, checking that the matrices' rows (embd, ff and q wide) suit it.
func weightType(t string, embd, ff, q int) (tensorType, uint32, error) {
	switch strings.ToLower(t) {
	case "", "f32":
		return typeF32, 0, nil
	case "f16":
		return typeF16, 1, nil
	case "q8_0":
		for _, d := range []struct {
			name string
			v    int
		}{{"Embd", embd}, {"FF", ff}, {"Heads*HeadDim", q}} {
			if d.v%q8Block != 0 {
				return 0, 0, fmt.Errorf("inferencetest: Q8_0 needs %s (%d) to be a multiple of %d", d.name, d.v, q8Block)
			}
		}
		return typeQ8_0, 7, nil
	}
	return 0, 0, fmt.Errorf("inferencetest: unknown type %q; want f32, f16 or q8_0", t)
}
