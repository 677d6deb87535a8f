package inferencetest

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

// layoutBERT is layout for Arch "bert": a BERT encoder with a reranker's
// classification head (pooling type rank, one output), or with pooling
// mean, cls or last and no head, an embedding model, as llama.cpp's
// LLM_ARCH_BERT loads it. Attention is bidirectional, positions are learned
// embeddings, every layer norm has a bias, and KVHeads, HeadDim,
// TiedEmbeddings, SlidingWindow, StateSize, Tokenizer and ChatTemplate do
// not apply.
func layoutBERT(o Options) ([]kv, []tensorSpec, error) {
	if o.Tokenizer != nil || o.ChatTemplate != "" {
		return nil, nil, fmt.Errorf("inferencetest: architecture bert has its own WordPiece vocabulary and no chat template")
	}
	if o.TiedEmbeddings || o.HeadDim != 0 || o.KVHeads != 0 || o.SlidingWindow != 0 || o.StateSize != 0 {
		return nil, nil, fmt.Errorf("inferencetest: TiedEmbeddings, HeadDim, KVHeads, SlidingWindow and StateSize do not apply to architecture bert")
	}
	if err := o.sizes(512); err != nil {
		return nil, nil, err
	}
	pooling, ok := poolingTypes[cmp.Or(o.Pooling, "rank")]
	if !ok {
		return nil, nil, fmt.Errorf("inferencetest: Pooling %q; architecture bert takes mean, cls, last or rank", o.Pooling)
	}
	if o.Embd%o.Heads != 0 {
		return nil, nil, fmt.Errorf("inferencetest: Embd %d is not a multiple of Heads %d", o.Embd, o.Heads)
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
	const p = "bert."
	kvs := append(generalKVs(o, fileType), []kv{
		{p + "vocab_size", uint32(len(tokens))},
		{p + "context_length", uint32(o.ContextLength)},
		{p + "embedding_length", uint32(o.Embd)},
		{p + "block_count", uint32(o.Layers)},
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
		{name: "position_embd.weight", shape: []uint64{embd, uint64(o.ContextLength)}, typ: typeF32},
	}
	ts = append(ts, layerNorm("token_embd_norm")...)
	for i := range o.Layers {
		b := fmt.Sprintf("blk.%d.", i)
		ts = append(ts,
			matrix(b+"attn_q.weight", typ, embd, embd), vec(b+"attn_q.bias", embd),
			matrix(b+"attn_k.weight", typ, embd, embd), vec(b+"attn_k.bias", embd),
			matrix(b+"attn_v.weight", typ, embd, embd), vec(b+"attn_v.bias", embd),
			matrix(b+"attn_output.weight", typ, embd, embd), vec(b+"attn_output.bias", embd),
		)
		ts = append(ts, layerNorm(b+"attn_output_norm")...)
		ts = append(ts,
			matrix(b+"ffn_up.weight", typ, embd, ff), vec(b+"ffn_up.bias", ff),
			matrix(b+"ffn_down.weight", typ, ff, embd), vec(b+"ffn_down.bias", embd),
		)
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
