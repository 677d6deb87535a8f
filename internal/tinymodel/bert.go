package tinymodel

import (
	"cmp"
	"fmt"
)

// Pooling types, as <arch>.pooling_type stores them.
const (
	poolingMean = 1
	poolingCLS  = 2
	poolingLast = 3
	poolingRank = 4
)

// poolingTypes are the values of Options.Pooling.
var poolingTypes = map[string]uint32{"mean": poolingMean, "cls": poolingCLS, "last": poolingLast, "rank": poolingRank}

// bertPieces are the characters of the [WordPiece] vocabulary: each is a
// token at the start of a word ("▁c", the way llama.cpp's converter writes
// a WordPiece word) and one inside a word ("c", WordPiece's "##c").
const bertPieces = "abcdefghijklmnopqrstuvwxyz0123456789.,:;!?'\"-()/"

// wordPiece returns the vocabulary of the "bert" architecture: the five
// special tokens [PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3 and [MASK] 4 (control
// tokens), then for every lower-case letter, digit and common punctuation
// mark a word-initial piece and a continuation piece. llama.cpp lower-cases
// and splits text on whitespace and punctuation before matching, so any
// ASCII text tokenizes without [UNK].
func wordPiece() (tokens []string, types []int32) {
	for _, s := range []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"} {
		tokens, types = append(tokens, s), append(types, int32(TokenControl))
	}
	for _, c := range bertPieces {
		tokens, types = append(tokens, "\u2581"+string(c)), append(types, int32(TokenNormal))
	}
	for _, c := range bertPieces {
		tokens, types = append(tokens, string(c)), append(types, int32(TokenNormal))
	}
	return tokens, types
}

// WordPieceSize is the number of tokens of the encoders' vocabulary
// (see [Options].Arch "bert"): its specials, then each character of
// bertPieces twice.
const WordPieceSize = 5 + 2*len(bertPieces)

// encoder holds what differs between the encoder architectures, which
// share the [WordPiece] vocabulary, bidirectional attention, token type
// embeddings and post-norm layers (a layer norm with a bias after the
// embeddings, after attention and after the feed-forward layer).
type encoder struct {
	context int    // the default ContextLength
	pooling string // the default Pooling
	// nomic makes llama.cpp's LLM_ARCH_NOMIC_BERT (nomic-embed-text's
	// architecture): rotary positions of base ropeBase instead of learned
	// position embeddings, one fused query-key-value projection
	// (attn_qkv) and a SwiGLU feed-forward layer (ffn_gate, ffn_up and
	// ffn_down), all without biases, and no classification head, so no
	// rank pooling.
	nomic    bool
	ropeBase float32
}

var encoders = map[string]encoder{
	"bert": {context: 512, pooling: "rank"},
	// nomic-embed-text-v1.5's context and RoPE base. llama.cpp requires
	// nomic-bert.pooling_type, so the default is mean, the model's own.
	"nomic-bert": {context: 2048, pooling: "mean", nomic: true, ropeBase: 1000},
}

// layoutBERT is layout for the encoder architectures "bert" and
// "nomic-bert", as llama.cpp's LLM_ARCH_BERT and LLM_ARCH_NOMIC_BERT load
// them. A bert model is a reranker with a classification head (pooling
// type rank, one output), or with pooling mean, cls or last and no head,
// an embedding model; its positions are learned embeddings and every
// projection has a bias. A nomic-bert model is an embedding model whose
// differences [encoder].nomic lists. Attention is bidirectional, every
// layer norm has a bias, and KVHeads, HeadDim, TiedEmbeddings,
// SlidingWindow, StateSize, Tokenizer and ChatTemplate do not apply.
func layoutBERT(o Options) ([]kv, []tensorSpec, error) {
	enc := encoders[o.Arch]
	if o.Tokenizer != nil || o.ChatTemplate != "" {
		return nil, nil, fmt.Errorf("inferencetest: architecture %s has its own WordPiece vocabulary and no chat template", o.Arch)
	}
	if o.TiedEmbeddings || o.HeadDim != 0 || o.KVHeads != 0 || o.SlidingWindow != 0 || o.StateSize != 0 {
		return nil, nil, fmt.Errorf("inferencetest: TiedEmbeddings, HeadDim, KVHeads, SlidingWindow and StateSize do not apply to architecture %s", o.Arch)
	}
	if err := o.sizes(enc.context); err != nil {
		return nil, nil, err
	}
	pooling, ok := poolingTypes[cmp.Or(o.Pooling, enc.pooling)]
	if !ok || enc.nomic && pooling == poolingRank {
		takes := "mean, cls, last or rank"
		if enc.nomic {
			takes = "mean, cls or last"
		}
		return nil, nil, fmt.Errorf("inferencetest: Pooling %q; architecture %s takes %s", o.Pooling, o.Arch, takes)
	}
	if o.Embd%o.Heads != 0 {
		return nil, nil, fmt.Errorf("inferencetest: Embd %d is not a multiple of Heads %d", o.Embd, o.Heads)
	}
	if enc.nomic && o.Embd/o.Heads%2 != 0 {
		return nil, nil, fmt.Errorf("inferencetest: heads of Embd/Heads = %d are odd; rotary embeddings need them even", o.Embd/o.Heads)
	}
	typ, fileType, err := weightType(o.Type, o.Embd, o.FF, o.Embd)
	if err != nil {
		return nil, nil, err
	}
	tokens, types := wordPiece()
	if o.VocabSize != 0 && o.VocabSize < len(tokens) {
		return nil, nil, fmt.Errorf("inferencetest: vocabulary size %d is below the tokenizer's %d tokens", o.VocabSize, len(tokens))
	}
	for id := len(tokens); id < o.VocabSize; id++ {
		tokens, types = append(tokens, fmt.Sprintf("[unused%d]", id)), append(types, int32(TokenUnused))
	}
	p := o.Arch + "."
	kvs := append(shapeKVs(o, fileType, len(tokens)), []kv{
		{p + "feed_forward_length", uint32(o.FF)},
		{p + "attention.head_count", uint32(o.Heads)},
		{p + "attention.layer_norm_epsilon", float32(1e-12)},
		{p + "attention.causal", false},
		{p + "pooling_type", pooling},
		{"tokenizer.ggml.model", "bert"},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.token_type_count", uint32(2)},
		{"tokenizer.ggml.padding_token_id", uint32(0)},
		{"tokenizer.ggml.unknown_token_id", uint32(1)},
		{"tokenizer.ggml.bos_token_id", uint32(2)},
		{"tokenizer.ggml.cls_token_id", uint32(2)},
		{"tokenizer.ggml.seperator_token_id", uint32(3)},
		{"tokenizer.ggml.mask_token_id", uint32(4)},
	}...)
	if enc.nomic {
		// Optional to llama.cpp, whose default is 10,000.
		kvs = append(kvs, kv{p + "rope.freq_base", enc.ropeBase})
	}

	embd, ff, vocab := uint64(o.Embd), uint64(o.FF), uint64(len(tokens))
	vec := func(name string, n uint64) tensorSpec {
		return tensorSpec{name: name, shape: []uint64{n}, typ: typeF32}
	}
	layerNorm := func(name string) []tensorSpec {
		return []tensorSpec{
			{name: name + ".weight", shape: []uint64{embd}, typ: typeF32, ones: true},
			{name: name + ".bias", shape: []uint64{embd}, typ: typeF32, zeros: true},
		}
	}
	ts := []tensorSpec{
		matrix("token_embd.weight", typ, embd, vocab),
		{name: "token_types.weight", shape: []uint64{embd, 2}, typ: typeF32},
	}
	if !enc.nomic {
		ts = append(ts, tensorSpec{name: "position_embd.weight", shape: []uint64{embd, uint64(o.ContextLength)}, typ: typeF32})
	}
	ts = append(ts, layerNorm("token_embd_norm")...)
	for i := range o.Layers {
		b := fmt.Sprintf("blk.%d.", i)
		if enc.nomic {
			// The rows of attn_qkv give a token's queries, then its
			// keys, then its values, Embd each. Attention is the only
			// place where rotary positions act, and at weightStd it
			// would weigh the tokens almost evenly and add little to
			// the residual, so that word order barely moved a vector:
			// fanIn gives the scores, and attention's output, the
			// size of the hidden state.
			qkv := matrix(b+"attn_qkv.weight", typ, embd, 3*embd)
			out := matrix(b+"attn_output.weight", typ, embd, embd)
			qkv.scale, out.scale = fanIn(o.Embd), fanIn(o.Embd)
			ts = append(ts, qkv, out)
		} else {
			ts = append(ts,
				matrix(b+"attn_q.weight", typ, embd, embd), vec(b+"attn_q.bias", embd),
				matrix(b+"attn_k.weight", typ, embd, embd), vec(b+"attn_k.bias", embd),
				matrix(b+"attn_v.weight", typ, embd, embd), vec(b+"attn_v.bias", embd),
				matrix(b+"attn_output.weight", typ, embd, embd), vec(b+"attn_output.bias", embd),
			)
		}
		ts = append(ts, layerNorm(b+"attn_output_norm")...)
		if enc.nomic {
			ts = append(ts,
				matrix(b+"ffn_gate.weight", typ, embd, ff),
				matrix(b+"ffn_up.weight", typ, embd, ff),
				matrix(b+"ffn_down.weight", typ, ff, embd),
			)
		} else {
			ts = append(ts,
				matrix(b+"ffn_up.weight", typ, embd, ff), vec(b+"ffn_up.bias", ff),
				matrix(b+"ffn_down.weight", typ, ff, embd), vec(b+"ffn_down.bias", embd),
			)
		}
		ts = append(ts, layerNorm(b+"layer_output_norm")...)
	}
	if pooling != poolingRank {
		return kvs, ts, nil
	}
	// The classification head of a reranker: a dense layer with tanh on
	// the [CLS] state, then one output, the relevance score.
	ts = append(ts,
		tensorSpec{name: "cls.weight", shape: []uint64{embd, embd}, typ: typeF32, scale: 5},
		vec("cls.bias", embd),
		tensorSpec{name: "cls.output.weight", shape: []uint64{embd, 1}, typ: typeF32, scale: 50},
		vec("cls.output.bias", 1),
	)
	return kvs, ts, nil
}
