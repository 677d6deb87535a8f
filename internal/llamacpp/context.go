package llamacpp

/*
#include "bridge.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/inferkit/inferkit/internal/backend"
)

// ContextParams configures NewContext: backend's, shared by the engines.
type ContextParams = backend.ContextParams

// CacheType is the element type of a KV cache (backend.CacheType).
type CacheType = backend.CacheType

// The KV cache types, backend's.
const (
	CacheF16  = backend.CacheF16
	CacheQ8_0 = backend.CacheQ8_0
	CacheQ4_0 = backend.CacheQ4_0
)

// ParseCacheType reads "f16", "q8_0" or "q4_0"; "" is f16
// (backend.ParseCacheType).
func ParseCacheType(s string) (CacheType, error) { return backend.ParseCacheType(s) }

// ggmlType is t as llama.cpp's ggml_type.
func ggmlType(t CacheType) C.enum_ggml_type {
	switch t {
	case CacheQ8_0:
		return C.GGML_TYPE_Q8_0
	case CacheQ4_0:
		return C.GGML_TYPE_Q4_0
	}
	return C.GGML_TYPE_F16
}

// Pooling is how an encoder context turns the states of a sequence's
// tokens into the sequence's one output (backend.Pooling). PoolingRank is
// a reranker's or classifier's head, which Context.SequenceScores reads;
// the others pool an embedding, which Context.SequenceEmbedding reads.
type Pooling = backend.Pooling

// The poolings, backend's.
const (
	PoolingNone = backend.PoolingNone
	PoolingMean = backend.PoolingMean
	PoolingCLS  = backend.PoolingCLS
	PoolingLast = backend.PoolingLast
	PoolingRank = backend.PoolingRank
)

// Context holds a KV cache over a model and decodes batches. It is not safe
// for concurrent use. Its owner must call Close.
type Context struct {
	c       *C.struct_llama_context
	mem     C.llama_memory_t
	model   *Model
	nCtx    int
	nBatch  int
	nSeq    int
	unified bool
	pooling Pooling
	// last holds, after Encode with PoolingLast, the batch index of each
	// sequence's last token, or -1.
	last []int
	// layout is what this context's sequence states hold, which
	// SetSequenceState checks a state against; nil, with layoutErr,
	// when it could not be read.
	layout    *stateLayout
	layoutErr error
}

// NewContext creates a context over m. A quantized value cache needs
// flash attention, which NewContext then switches on (on the CPU too). A
// context made with a Pooling is an encoder's, which Encode runs; its
// pooling should be the model's own (Model.Pooling), or PoolingRank for a
// reranker's or classifier's head.
func NewContext(m *Model, p ContextParams) (*Context, error) {
	if p.Batch <= 0 {
		p.Batch = 512
	}
	if p.Sequences <= 0 {
		p.Sequences = 1
	}
	if p.Sequences > 256 {
		return nil, fmt.Errorf("llamacpp: %d sequences, at most 256", p.Sequences)
	}
	if p.Context <= 0 {
		return nil, fmt.Errorf("llamacpp: context of %d cells", p.Context)
	}
	params := C.llama_context_default_params()
	params.n_ctx = C.uint32_t(p.Context)
	params.n_batch = C.uint32_t(p.Batch)
	params.n_ubatch = C.uint32_t(p.Batch)
	params.n_seq_max = C.uint32_t(p.Sequences)
	if p.Threads > 0 {
		params.n_threads = C.int32_t(p.Threads)
		params.n_threads_batch = C.int32_t(p.Threads)
	}
	params.kv_unified = C.bool(!p.SplitKV)
	// A sliding-window model's window layers keep every cell, as the
	// others do, rather than only the last window's: a prompt cut back to
	// any prefix, or copied to another sequence, then still has all it
	// attends to. It costs those layers' cache the full context.
	params.swa_full = true
	params.embeddings = false
	switch p.Pooling {
	case PoolingNone:
	case PoolingMean, PoolingCLS, PoolingRank:
		params.embeddings = true
		params.pooling_type = C.enum_llama_pooling_type(p.Pooling)
	case PoolingLast:
		// Last-token pooling is the last token's final state, which an
		// unpooled context outputs for the tokens asked for: asking for
		// one token a sequence spares a decoder the vocabulary
		// projection of all the others, which llama.cpp's own last
		// pooling needs every token's output for.
		params.embeddings = true
		params.pooling_type = C.LLAMA_POOLING_TYPE_NONE
	default:
		return nil, fmt.Errorf("llamacpp: unknown pooling %d", int(p.Pooling))
	}
	// A quantized cache stores each head's keys or values in blocks of
	// 32: llama.cpp aborts on heads of another width, so they are
	// refused here.
	hk, hv := m.HeadDims()
	for _, c := range []struct {
		what string
		t    CacheType
		dim  int
	}{{"key", p.KeyType, hk}, {"value", p.ValueType, hv}} {
		if c.t.Quantized() && c.dim%32 != 0 {
			return nil, fmt.Errorf("llamacpp: a %s KV cache for %s needs heads of a multiple of 32 dimensions; this model's are %d", c.t, c.what+"s", c.dim)
		}
	}
	params.type_k, params.type_v = ggmlType(p.KeyType), ggmlType(p.ValueType)
	if p.ValueType.Quantized() {
		params.flash_attn_type = C.LLAMA_FLASH_ATTN_TYPE_ENABLED
	}
	params.no_perf = true
	c := C.llama_init_from_model(m.c, params)
	if c == nil {
		return nil, fmt.Errorf("llamacpp: cannot create a context of %d cells", p.Context)
	}
	ctx := &Context{
		c:       c,
		mem:     C.llama_get_memory(c),
		model:   m,
		nCtx:    int(C.llama_n_ctx(c)),
		nBatch:  int(C.llama_n_batch(c)),
		nSeq:    p.Sequences,
		unified: !p.SplitKV,
		pooling: p.Pooling,
		last:    make([]int, p.Sequences),
	}
	if ctx.mem != nil {
		ctx.layout, ctx.layoutErr = readStateLayout(c)
	} else {
		ctx.layoutErr = backend.Unsupported("llamacpp", "sequence states of a context without memory")
	}
	return ctx, nil
}

// Close frees the context.
func (c *Context) Close() {
	if c.c != nil {
		C.inferkit_free_context(c.c)
		c.c = nil
	}
}

// Size is the number of KV cells.
func (c *Context) Size() int { return c.nCtx }

// BatchSize is the largest batch Decode accepts.
func (c *Context) BatchSize() int { return c.nBatch }

// Errors of Decode.
var (
	// ErrNoKVSlot means the KV cache has no room for the batch.
	ErrNoKVSlot = errors.New("llamacpp: no KV cache slot for the batch")
	// ErrDecode is any other failure of llama_decode.
	ErrDecode = errors.New("llamacpp: decode failed")
)

// NewBatch makes a token batch of up to n tokens for c (the package's
// NewBatch), for backend.Context.
func (c *Context) NewBatch(n int) backend.Batch { return NewBatch(c, n) }

// Decode runs the model over the batch, filling the KV cache and the logits
// of the tokens marked for output. The batch must be one of this package's
// (NewBatch or NewEmbeddingBatch).
func (c *Context) Decode(bb backend.Batch) error {
	b, ok := bb.(*Batch)
	if !ok || b == nil {
		return fmt.Errorf("llamacpp: Decode of a %T, not a llama.cpp batch", bb)
	}
	if b.n == 0 {
		return nil
	}
	b.c.n_tokens = C.int32_t(b.n)
	b.layout()
	switch rc := C.llama_decode(c.c, b.c); {
	case rc == 0:
		return nil
	case rc == 1:
		return ErrNoKVSlot
	default:
		return fmt.Errorf("%w (code %d)", ErrDecode, int(rc))
	}
}

// SetCausal turns causal attention on (the default) or off for the next
// decodes: off while an image of a Projector with NonCausal is decoded.
func (c *Context) SetCausal(on bool) { C.llama_set_causal_attn(c.c, C.bool(on)) }

// Logits returns the logits of the i-th token of the last decoded batch,
// which must have been marked for output. The slice aliases llama.cpp's
// buffer: it is valid until the next Decode and must not be kept.
func (c *Context) Logits(i int) []float32 {
	p := C.llama_get_logits_ith(c.c, C.int32_t(i))
	if p == nil {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(p)), c.model.nVocab)
}

// RemoveTokens drops the cells of seq at positions [from, to); to < 0 means
// to the end. It reports false when the cache cannot remove a partial range.
func (c *Context) RemoveTokens(seq, from, to int) bool {
	if !c.validSeq(seq) {
		return false
	}
	return bool(C.llama_memory_seq_rm(c.mem, C.llama_seq_id(seq), C.llama_pos(from), C.llama_pos(to)))
}

// CopyTokens makes seq dst share the cells of seq src at positions [from,
// to); to < 0 means to the end. On a unified cache this is metadata only.
// Only whole sequences (from 0, to -1) can be copied on a split cache,
// where llama.cpp aborts the process on a partial copy, and on a recurrent
// or hybrid model, whose state llama.cpp copies whole whatever the range:
// CopyTokens refuses a partial copy there.
func (c *Context) CopyTokens(src, dst, from, to int) error {
	if !c.validSeq(src) || !c.validSeq(dst) {
		return fmt.Errorf("llamacpp: copy between sequences %d and %d of %d", src, dst, c.nSeq)
	}
	if (!c.unified || !c.model.SharesKV()) && (from > 0 || to >= 0) {
		return errors.New("llamacpp: partial sequence copy on a split KV cache or a recurrent state")
	}
	C.llama_memory_seq_cp(c.mem, C.llama_seq_id(src), C.llama_seq_id(dst), C.llama_pos(from), C.llama_pos(to))
	return nil
}

// ClearSequence drops every cell of seq.
func (c *Context) ClearSequence(seq int) {
	if c.validSeq(seq) {
		C.llama_memory_seq_rm(c.mem, C.llama_seq_id(seq), -1, -1)
	}
}

// MaxPos is the largest position seq holds, or -1 when it is empty.
func (c *Context) MaxPos(seq int) int {
	if !c.validSeq(seq) {
		return -1
	}
	return int(C.llama_memory_seq_pos_max(c.mem, C.llama_seq_id(seq)))
}

// Clear empties the whole KV cache.
func (c *Context) Clear() { C.llama_memory_clear(c.mem, true) }

func (c *Context) validSeq(s int) bool { return s >= 0 && s < c.nSeq }

// Encode runs an encoder context (made with a Pooling) over the batch,
// every token of which must belong to one sequence only, at positions
// from 0, and pools each sequence's outputs. The batch must fit in one
// micro-batch (BatchSize). Encode sets the batch's output flags itself:
// every token, or each sequence's last for PoolingLast. A model with a
// KV cache (a decoder embedding model) decodes causally with its cache
// emptied first, so that each batch stands alone; an encoder without
// one (BERT) encodes with bidirectional attention.
func (c *Context) Encode(bb backend.Batch) error {
	b, ok := bb.(*Batch)
	if !ok || b == nil {
		return fmt.Errorf("llamacpp: Encode of a %T, not a llama.cpp batch", bb)
	}
	if c.pooling == PoolingNone {
		return errors.New("llamacpp: Encode on a context made without pooling")
	}
	if b.n == 0 {
		return nil
	}
	if b.n > c.nBatch {
		return fmt.Errorf("llamacpp: batch of %d tokens, an encoder takes at most %d", b.n, c.nBatch)
	}
	if b.tokens == nil {
		return errors.New("llamacpp: Encode takes a token batch")
	}
	for s := range c.last {
		c.last[s] = -1
	}
	for i := range b.n {
		if b.nSeqID[i] != 1 {
			return fmt.Errorf("llamacpp: token %d of an encoder batch belongs to %d sequences", i, int(b.nSeqID[i]))
		}
		b.logits[i] = 1
		if c.pooling == PoolingLast {
			b.logits[i] = 0
			s := int(*b.seqIDs[i])
			if l := c.last[s]; l < 0 || b.pos[l] <= b.pos[i] {
				c.last[s] = i
			}
		}
	}
	for _, l := range c.last {
		if l >= 0 {
			b.logits[l] = 1
		}
	}
	b.c.n_tokens = C.int32_t(b.n)
	var rc C.int32_t
	if c.mem != nil {
		C.llama_memory_clear(c.mem, true)
		rc = C.llama_decode(c.c, b.c)
	} else {
		rc = C.llama_encode(c.c, b.c)
	}
	if rc != 0 {
		for s := range c.last {
			c.last[s] = -1
		}
		return fmt.Errorf("%w (encode, code %d)", ErrDecode, int(rc))
	}
	return nil
}

// SequenceScores returns the classifier outputs of seq after Encode on a
// PoolingRank context: llama.cpp stores ClassifierOutputs floats per
// sequence (not the embedding width), and only those are read. It
// returns nil when seq was not in the last batch. The slice is a copy.
func (c *Context) SequenceScores(seq int) []float32 {
	if c.pooling != PoolingRank || !c.validSeq(seq) {
		return nil
	}
	p := C.llama_get_embeddings_seq(c.c, C.llama_seq_id(seq))
	if p == nil {
		return nil
	}
	n := c.model.ClassifierOutputs()
	return append([]float32(nil), unsafe.Slice((*float32)(unsafe.Pointer(p)), n)...)
}

// SequenceEmbedding returns the pooled embedding of seq after Encode on a
// context with mean, CLS or last pooling: EmbeddingSize floats, as the
// model computes them (not normalised). It returns nil when seq was not
// in the last batch, or on another context. The slice is a copy.
func (c *Context) SequenceEmbedding(seq int) []float32 {
	if !c.validSeq(seq) {
		return nil
	}
	var p *C.float
	switch c.pooling {
	case PoolingMean, PoolingCLS:
		p = C.llama_get_embeddings_seq(c.c, C.llama_seq_id(seq))
	case PoolingLast:
		if c.last[seq] < 0 {
			return nil
		}
		p = C.llama_get_embeddings_ith(c.c, C.int32_t(c.last[seq]))
	}
	if p == nil {
		return nil
	}
	return append([]float32(nil), unsafe.Slice((*float32)(unsafe.Pointer(p)), c.model.EmbeddingSize())...)
}

// LogSumExp returns log Σ exp(l) over logits, from the largest: the
// normaliser of a log-softmax, so that a token's log-probability is its
// logit less this. It runs in C, where exp is several times faster than
// Go's: a vocabulary of 151,936 takes about half a millisecond. Logits
// more than 50 below the largest are left out (each term is below 2e-22).
func LogSumExp(logits []float32) float64 {
	if len(logits) == 0 {
		return math.Inf(-1)
	}
	return float64(C.inferkit_log_sum_exp((*C.float)(unsafe.Pointer(&logits[0])), C.int(len(logits))))
}

// SequenceStateSize returns the bytes that the state of seq takes, its KV
// cells' keys and values with their metadata: what saving it would write.
// It grows with the tokens in the sequence and shrinks with a quantized
// cache type.
func (c *Context) SequenceStateSize(seq int) int {
	if !c.validSeq(seq) || c.SequenceStateLimit() == 0 {
		return 0
	}
	return int(C.llama_state_seq_get_size(c.c, C.llama_seq_id(seq)))
}

// SequenceState returns the state of seq: its KV cells' positions, keys
// and values, as llama.cpp serialises them for this context's model and
// cache types. SetSequenceState puts it back, into this context or
// another made over the same model file with the same cache types.
func (c *Context) SequenceState(seq int) ([]byte, error) {
	if !c.validSeq(seq) {
		return nil, fmt.Errorf("llamacpp: sequence %d of %d", seq, c.nSeq)
	}
	if c.SequenceStateLimit() == 0 {
		// Nothing could restore it (see stateLayout.posPerEmbd).
		return nil, c.noStates()
	}
	n := int(C.llama_state_seq_get_size(c.c, C.llama_seq_id(seq)))
	if n == 0 {
		return nil, nil
	}
	buf := make([]byte, n)
	if got := int(C.llama_state_seq_get_data(c.c, (*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(n), C.llama_seq_id(seq))); got != n {
		return nil, fmt.Errorf("llamacpp: sequence %d's state: %d bytes of %d", seq, got, n)
	}
	return buf, nil
}

// SequenceStateLimit is the most bytes a state SetSequenceState accepts
// can take: one sequence holding every cell of its stream. 0 when the
// context cannot restore states.
func (c *Context) SequenceStateLimit() int64 {
	if c.layout == nil || c.layout.posPerEmbd > 1 {
		return 0
	}
	return c.layout.maxSize()
}

// noStates is the error of SequenceState on a context whose states
// SetSequenceState would refuse.
func (c *Context) noStates() error {
	if c.layout == nil {
		return c.layoutErr
	}
	return backend.Unsupported("llamacpp", fmt.Sprintf("sequence states of a model with %d positions per token (llama.cpp restores them reading past a buffer)", c.layout.posPerEmbd))
}

// CheckSequenceState reports whether state is one that SequenceState of
// a context like this one (its model, cache types, cells) could have
// written, checking every field llama.cpp would read: an error wrapping
// backend.ErrBadState names the first that is not.
func (c *Context) CheckSequenceState(state []byte) error {
	if c.layout == nil {
		return c.layoutErr
	}
	return c.layout.check(state)
}

// SetSequenceState replaces the cells of seq with a state that
// SequenceState returned. It checks the state first (CheckSequenceState)
// and refuses, with an error wrapping backend.ErrBadState, one that this
// context could not have written: llama.cpp itself trusts a state's cell
// count and positions, and aborts the process or allocates what they
// claim. Damaged keys or values in a state of the right shape cannot be
// told: a caller that keeps states outside the process checks their
// integrity (a checksum) too. Whatever the error, the sequence is left
// empty; one that does not wrap ErrBadState, such as too few free cells,
// says nothing against the state.
func (c *Context) SetSequenceState(seq int, state []byte) error {
	if !c.validSeq(seq) {
		return fmt.Errorf("llamacpp: sequence %d of %d", seq, c.nSeq)
	}
	C.llama_memory_seq_rm(c.mem, C.llama_seq_id(seq), -1, -1)
	if len(state) == 0 {
		return fmt.Errorf("llamacpp: an empty sequence state: %w", backend.ErrBadState)
	}
	if err := c.CheckSequenceState(state); err != nil {
		return err
	}
	if C.llama_state_seq_set_data(c.c, (*C.uint8_t)(unsafe.Pointer(&state[0])), C.size_t(len(state)), C.llama_seq_id(seq)) == 0 {
		C.llama_memory_seq_rm(c.mem, C.llama_seq_id(seq), -1, -1)
		return errors.New("llamacpp: llama.cpp refused the sequence state")
	}
	return nil
}
