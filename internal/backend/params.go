package backend

import "fmt"

// ContextParams configures Model.NewContext. Zero fields take the
// defaults noted.
type ContextParams struct {
	// Context is the number of memory cells shared by all sequences.
	Context int
	// Batch is the largest batch Decode accepts (default 512).
	Batch int
	// Sequences is the number of sequence ids the batch may use (default 1).
	Sequences int
	// Threads is the number of CPU threads (default: the backend's choice).
	Threads int
	// SplitKV gives every sequence its own KV stream of Context/Sequences
	// cells instead of one unified cache. Tokens then cannot be shared
	// between sequences, and only whole-buffer sequence copies are allowed.
	SplitKV bool
	// KeyType and ValueType are the KV cache's element types; the zero
	// value is f16.
	KeyType, ValueType CacheType
	// Pooling, when not PoolingNone, makes an encoder context: one
	// output per sequence instead of logits per token.
	Pooling Pooling
	// FlashAttention runs attention through flash attention on an f16
	// value cache too, where the backend lets the caller choose (the
	// library's, internal/libllama): faster prefill, but a sequence's
	// logits then vary slightly with what else shares its batch. A
	// quantized value cache uses it anyway.
	FlashAttention bool
	// Rollback asks a recurrent or hybrid model's context to let each
	// sequence drop up to this many of its last positions after a
	// Decode (RemoveTokens to the end, once per Decode), as verifying
	// drafted tokens needs: the backend keeps as many snapshots of each
	// sequence's recurrent state, where it can, and RollbackLimit says
	// how many it keeps. 0: none. An attention cache cuts back anywhere
	// and ignores it.
	Rollback int
}

// SamplerParams configures a sampler. Temperature <= 0 is greedy.
type SamplerParams struct {
	Temperature float32
	TopK        int     // 0 disables
	TopP        float32 // 1 disables
	MinP        float32 // 0 disables
	Seed        uint32

	RepeatLastN      int     // tokens the penalties look back over
	RepeatPenalty    float32 // 1 disables
	FrequencyPenalty float32 // 0 disables
	PresencePenalty  float32 // 0 disables

	// Ban lists tokens that are never sampled, such as the end-of-turn
	// tokens to generate a fixed length.
	Ban []Token
}

// CacheType is the element type of a KV cache. The zero value is f16.
type CacheType int

// The KV cache types: f16 (2 bytes an element), q8_0 (34 bytes a block of
// 32, about half of f16) and q4_0 (18 bytes a block of 32, about a
// quarter).
const (
	CacheF16 CacheType = iota
	CacheQ8_0
	CacheQ4_0
)

// ParseCacheType reads "f16", "q8_0" or "q4_0"; "" is f16.
func ParseCacheType(s string) (CacheType, error) {
	switch s {
	case "", "f16":
		return CacheF16, nil
	case "q8_0":
		return CacheQ8_0, nil
	case "q4_0":
		return CacheQ4_0, nil
	}
	return 0, fmt.Errorf("KV cache type %q: want f16, q8_0 or q4_0", s)
}

// String is the type's name, as ParseCacheType reads it.
func (t CacheType) String() string {
	switch t {
	case CacheQ8_0:
		return "q8_0"
	case CacheQ4_0:
		return "q4_0"
	}
	return "f16"
}

// Quantized reports whether t is a block-quantized type.
func (t CacheType) Quantized() bool { return t == CacheQ8_0 || t == CacheQ4_0 }

// Pooling is how an encoder context turns the states of a sequence's
// tokens into the sequence's one output. The values are those of
// llama.cpp's enum and of the GGUF key <arch>.pooling_type.
type Pooling int

// The poolings.
const (
	// PoolingNone pools nothing: a generation context, or a model that
	// outputs no sequence vector.
	PoolingNone Pooling = 0
	// PoolingMean averages the final states of all of a sequence's tokens.
	PoolingMean Pooling = 1
	// PoolingCLS takes the final state of the sequence's first token
	// (BERT's [CLS]).
	PoolingCLS Pooling = 2
	// PoolingLast takes the final state of the sequence's last token
	// (decoder embedding models such as Qwen3-Embedding).
	PoolingLast Pooling = 3
	// PoolingRank runs a reranker's classification head on the pooled
	// state: one score per output class and sequence.
	PoolingRank Pooling = 4
)

// String returns the pooling's name: "none", "mean", "cls", "last",
// "rank", or "pooling(N)" for a value llama.cpp does not define.
func (p Pooling) String() string {
	switch p {
	case PoolingNone:
		return "none"
	case PoolingMean:
		return "mean"
	case PoolingCLS:
		return "cls"
	case PoolingLast:
		return "last"
	case PoolingRank:
		return "rank"
	}
	return fmt.Sprintf("pooling(%d)", int(p))
}
