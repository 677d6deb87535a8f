package libllama

/*
#include "api.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/inferkit/inferkit/internal/backend"
)

// Context holds a model's memory (its KV cache, or a recurrent state)
// and decodes batches; made with a Pooling, it is an encoder's. It is not
// safe for concurrent use. Its owner must call Close.
type Context struct {
	api     *C.struct_ikl_api
	c       *C.struct_llama_context
	mem     C.llama_memory_t
	model   *Model
	nCtx    int
	nBatch  int
	nSeq    int
	unified bool
	pooling backend.Pooling
	// states is the layout of the context's sequence states, nil when
	// they are off; noStates says why then.
	states   stateChecker
	noStates error
	// recurrent is the layout of the context's checkpoints of recurrent
	// state, nil when it takes none; noRecurrent says why then.
	recurrent   *recurrentLayout
	noRecurrent error
	// rollback is how many of its last positions a recurrent
	// sequence can drop after a Decode (RollbackLimit). The library
	// keeps a snapshot of the state after each of a sequence's last
	// tokens in a Decode, and none from before it, yet accepts a cut
	// of up to rollback positions whatever the last Decode gave the
	// sequence, restoring a stale snapshot then: decoded counts each
	// sequence's tokens in the last Decode, which a cut must stay
	// below, once (it is zeroed by the cut and by whatever else
	// replaces the sequence's state). pending marks the sequences cut
	// back since their last Decode: the library keeps the cut as an
	// index into the snapshots, which its next Decode of the sequence
	// takes, but which neither a copy of the sequence takes nor a
	// checkpoint of it writes (both then hold other state than the
	// sequence's), so CopyTokens and Checkpoint refuse such a sequence
	// (cutBack).
	rollback int
	decoded  []int
	pending  []bool
	// last holds, after Encode with PoolingLast, the batch index of each
	// sequence's last token, or -1.
	last []int
	// outputs marks the batch indices of the last Decode that asked for
	// logits: Logits of another index is nil, not a call into C that
	// aborts the process.
	outputs []bool
}

// maxSequences is llama.cpp's LLAMA_MAX_SEQ.
const maxSequences = 256

// maxRollback bounds ContextParams.Rollback: each token of it is a copy
// of every sequence's recurrent state.
const maxRollback = 64

// cacheType is t as ggml_type.
func cacheType(t backend.CacheType) C.int32_t {
	switch t {
	case backend.CacheQ8_0:
		return C.IKL_TYPE_Q8_0
	case backend.CacheQ4_0:
		return C.IKL_TYPE_Q4_0
	}
	return C.IKL_TYPE_F16
}

// flashAttention reports whether a context of p runs attention through
// flash attention: where a quantized value cache needs it, and on f16
// caches only when p asks. The release's default (auto) turns it on for
// f16 caches too, and its CPU kernel then makes a sequence's
// log-probabilities differ by up to about 2e-3 with what else is in the
// batch (the compiled-in build's stays within 1e-3), where scoring
// branches together should give what each gives alone.
func flashAttention(p backend.ContextParams) bool {
	return p.ValueType.Quantized() || p.FlashAttention
}

// newContext creates a context over m, with flash attention where
// flashAttention says. With a Pooling, it
// is an encoder's context, which Encode runs.
func (m *Model) newContext(p backend.ContextParams) (*Context, error) {
	if p.Batch <= 0 {
		p.Batch = 512
	}
	if p.Sequences <= 0 {
		p.Sequences = 1
	}
	switch {
	case p.Sequences > maxSequences:
		return nil, fmt.Errorf("libllama: %d sequences, at most %d", p.Sequences, maxSequences)
	case p.Context <= 0 || p.Context > math.MaxInt32:
		return nil, fmt.Errorf("libllama: context of %d cells", p.Context)
	case p.Batch > math.MaxInt32 || p.Threads < 0 || p.Threads > 4096:
		return nil, fmt.Errorf("libllama: batch of %d, %d threads", p.Batch, p.Threads)
	case p.Rollback < 0 || p.Rollback > maxRollback:
		return nil, fmt.Errorf("libllama: a rollback of %d tokens, at most %d", p.Rollback, maxRollback)
	}
	var params C.struct_llama_context_params
	C.ikl_context_defaults(m.api, &params)
	params.n_ctx = C.uint32_t(p.Context)
	params.n_batch = C.uint32_t(p.Batch)
	params.n_ubatch = C.uint32_t(p.Batch)
	params.n_seq_max = C.uint32_t(p.Sequences)
	params.n_outputs_max_per_seq = 0 // as many outputs as the batch asks for
	if p.Threads > 0 {
		params.n_threads = C.int32_t(p.Threads)
		params.n_threads_batch = C.int32_t(p.Threads)
	}
	params.kv_unified = C.bool(!p.SplitKV)
	if !m.SharesKV() {
		// Snapshots of each sequence's recurrent state, which the
		// library keeps only on the architectures that it rolls back
		// (llama_n_rs_seq reads back what it kept).
		params.n_rs_seq = C.uint32_t(p.Rollback)
	}
	// Window layers keep every cell, so that a prompt cut back to any
	// prefix, or copied, still has all it attends to.
	params.swa_full = true
	params.embeddings = false
	switch p.Pooling {
	case backend.PoolingNone:
	case backend.PoolingMean, backend.PoolingCLS, backend.PoolingRank:
		params.embeddings = true
		params.pooling_type = C.int32_t(p.Pooling)
	case backend.PoolingLast:
		// The last token's final state, which an unpooled context
		// outputs for the tokens asked for.
		params.embeddings = true
		params.pooling_type = C.int32_t(backend.PoolingNone)
	default:
		return nil, fmt.Errorf("libllama: unknown pooling %d", int(p.Pooling))
	}
	hk, hv := m.HeadDims()
	for _, c := range []struct {
		what string
		t    backend.CacheType
		dim  int
	}{{"keys", p.KeyType, hk}, {"values", p.ValueType, hv}} {
		if c.t.Quantized() && c.dim%32 != 0 {
			return nil, fmt.Errorf("libllama: a %s KV cache for %s needs heads of a multiple of 32 dimensions; this model's are %d", c.t, c.what, c.dim)
		}
	}
	params.type_k, params.type_v = cacheType(p.KeyType), cacheType(p.ValueType)
	params.flash_attn_type = C.IKL_FLASH_ATTN_DISABLED
	if flashAttention(p) {
		params.flash_attn_type = C.IKL_FLASH_ATTN_ENABLED
	}
	params.no_perf = true
	c := C.ikl_llama_init_from_model(m.api, m.c, params)
	if c == nil {
		return nil, fmt.Errorf("libllama: cannot create a context of %d cells", p.Context)
	}
	ctx := &Context{
		api:     m.api,
		c:       c,
		mem:     C.ikl_llama_get_memory(m.api, c),
		model:   m,
		nCtx:    int(C.ikl_llama_n_ctx(m.api, c)),
		nBatch:  int(C.ikl_llama_n_batch(m.api, c)),
		nSeq:    p.Sequences,
		unified: !p.SplitKV,
		pooling: p.Pooling,
		last:    make([]int, p.Sequences),
	}
	if ctx.mem == nil {
		ctx.noStates = backend.Unsupported(backend.LibLlama, "sequence states of a context without memory")
	} else {
		// Not a nil *seqLayout in a non-nil stateChecker.
		if l, err := stateLayout(m, p, ctx.nCtx, p.Sequences); err != nil {
			ctx.noStates = err
		} else {
			ctx.states = l
		}
	}
	ctx.recurrent, ctx.noRecurrent = recurrentLayoutOf(ctx, m, p)
	if ctx.recurrent != nil && !ctx.recurrent.hybrid {
		// A recurrent model's whole memory is its recurrent state, so
		// its sequence states are checkpoints at any position.
		ctx.states, ctx.noStates = wholeRecurrent{ctx.recurrent, uint32(ctx.nCtx)}, nil
	}
	if ctx.recurrent != nil {
		// A cut the library refuses, or one that would read a stale
		// snapshot (RemoveTokens), is taken back to a checkpoint
		// instead, so rollbacks come with checkpoints.
		ctx.rollback = int(C.ikl_llama_n_rs_seq(m.api, c))
		ctx.decoded = make([]int, p.Sequences)
		ctx.pending = make([]bool, p.Sequences)
	}
	return ctx, nil
}

// Close frees the context.
func (c *Context) Close() {
	if c.c != nil {
		C.ikl_llama_free(c.api, c.c)
		c.c = nil
	}
}

// Size is the number of memory cells.
func (c *Context) Size() int { return c.nCtx }

// BatchSize is the largest batch Decode accepts.
func (c *Context) BatchSize() int { return c.nBatch }

// Errors of Decode.
var (
	// ErrNoKVSlot means the memory has no room for the batch.
	ErrNoKVSlot = errors.New("libllama: no KV cache slot for the batch")
	// ErrDecode is any other failure of llama_decode.
	ErrDecode = errors.New("libllama: decode failed")
)

// NewBatch makes a batch of up to n tokens for c.
func (c *Context) NewBatch(n int) backend.Batch { return newBatch(c, n) }

func (c *Context) batch(bb backend.Batch, what string) (*Batch, error) {
	b, ok := bb.(*Batch)
	if !ok || b == nil || b.cap == 0 {
		return nil, fmt.Errorf("libllama: %s of a %T, not an open libllama batch", what, bb)
	}
	if b.nSeq != c.nSeq || b.nVocab != c.model.nVocab {
		return nil, fmt.Errorf("libllama: %s of a batch made for another context", what)
	}
	if b.n > c.nBatch {
		return nil, fmt.Errorf("libllama: batch of %d tokens, the context takes at most %d", b.n, c.nBatch)
	}
	return b, nil
}

// Decode runs the model over b, filling the memory and the logits of the
// tokens marked for output.
func (c *Context) Decode(bb backend.Batch) error {
	b, err := c.batch(bb, "Decode")
	if err != nil {
		return err
	}
	c.outputs = c.outputs[:0]
	if b.n == 0 {
		return nil
	}
	b.c.n_tokens = C.int32_t(b.n)
	clear(c.decoded)
	rc := C.ikl_llama_decode(c.api, c.c, b.c)
	switch {
	case rc == 0:
		for i := range b.n {
			c.outputs = append(c.outputs, b.logits[i] != 0)
		}
		if c.rollback > 0 {
			for i := range b.n {
				for _, seq := range b.seqs[i*b.nSeq : i*b.nSeq+int(b.nSeqID[i])] {
					c.decoded[seq]++
					c.pending[seq] = false // the Decode took the cut
				}
			}
		}
		return nil
	case rc == 1:
		return ErrNoKVSlot
	default:
		return fmt.Errorf("%w (code %d)", ErrDecode, int(rc))
	}
}

// Logits returns the logits of batch index i of the last Decode, which
// must have asked for them; nil otherwise. The slice aliases the
// library's buffer, valid until the next Decode.
func (c *Context) Logits(i int) []float32 {
	if i < 0 || i >= len(c.outputs) || !c.outputs[i] {
		return nil
	}
	p := C.ikl_llama_get_logits_ith(c.api, c.c, C.int32_t(i))
	if p == nil {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(p)), c.model.nVocab)
}

func (c *Context) validSeq(s int) bool { return s >= 0 && s < c.nSeq }

// validPos reports whether p is a position or -1 (the end).
func validPos(p int) bool { return p >= -1 && p <= math.MaxInt32 }

// RemoveTokens drops the cells of seq at positions [from, to); to < 0
// means to the end. False when the memory cannot cut there.
func (c *Context) RemoveTokens(seq, from, to int) bool {
	if !c.validSeq(seq) || from < 0 || !validPos(to) || c.mem == nil {
		return false
	}
	if to < 0 {
		to = -1
	}
	rm := func() bool {
		return bool(C.ikl_llama_memory_seq_rm(c.api, c.mem, C.llama_seq_id(seq), C.llama_pos(from), C.llama_pos(to)))
	}
	if c.model.SharesKV() || from >= c.MaxPos(seq)+1 {
		return rm() // an attention cache, or nothing of the state cut
	}
	if from == 0 {
		c.stale(seq) // the whole state goes
		return rm()
	}
	// A recurrent state rolls back only over the last Decode's tokens of
	// seq (see rollback), once, and only to the end; without rollbacks
	// (decoded nil), not at all.
	end := c.MaxPos(seq) + 1
	if c.decoded == nil || to >= 0 && to < end || end-from >= c.decoded[seq] {
		return false
	}
	ok := rm()
	c.stale(seq)
	c.pending[seq] = ok
	return ok
}

// CopyTokens makes dst share src's cells at positions [from, to). Only
// whole sequences (0, -1) are copied on a split cache or a recurrent or
// hybrid model, where the library copies whole or aborts.
func (c *Context) CopyTokens(src, dst, from, to int) error {
	if !c.validSeq(src) || !c.validSeq(dst) {
		return fmt.Errorf("libllama: copy between sequences %d and %d of %d", src, dst, c.nSeq)
	}
	if from < 0 || !validPos(to) {
		return fmt.Errorf("libllama: copy of positions [%d, %d)", from, to)
	}
	if to < 0 {
		to = -1
	}
	if (!c.unified || !c.model.SharesKV()) && (from > 0 || to >= 0) {
		return errors.New("libllama: partial sequence copy on a split KV cache or a recurrent state")
	}
	if c.mem == nil {
		return backend.Unsupported(backend.LibLlama, "sequence copies in a context without memory")
	}
	if c.pending != nil && c.pending[src] {
		return c.cutBack(src, "copies")
	}
	C.ikl_llama_memory_seq_cp(c.api, c.mem, C.llama_seq_id(src), C.llama_seq_id(dst), C.llama_pos(from), C.llama_pos(to))
	c.stale(dst)
	return nil
}

// cutBack is the error of what (copies, checkpoints) of seq, which was
// cut back since its last Decode: it wraps backend.ErrUnsupported, and
// the sequence's next Decode ends it.
func (c *Context) cutBack(seq int, what string) error {
	return fmt.Errorf("%w: sequence %d was cut back since its last decode, and the library keeps the cut for that decode alone",
		backend.Unsupported(backend.LibLlama, what+" of a recurrent state"), seq)
}

// stale zeroes what a cut of seq's recurrent state may roll back over,
// once something other than a Decode has replaced that state.
func (c *Context) stale(seq int) {
	if c.decoded != nil {
		c.decoded[seq] = 0
		c.pending[seq] = false // the library's cut goes with the state
	}
}

// ClearSequence drops every cell of seq.
func (c *Context) ClearSequence(seq int) {
	if c.validSeq(seq) && c.mem != nil {
		c.stale(seq)
		C.ikl_llama_memory_seq_rm(c.api, c.mem, C.llama_seq_id(seq), -1, -1)
	}
}

// Clear empties the whole memory.
func (c *Context) Clear() {
	if c.mem != nil {
		C.ikl_llama_memory_clear(c.api, c.mem, true)
		clear(c.decoded)
		clear(c.pending)
	}
}

// RollbackLimit is how many of its last positions a sequence of a
// recurrent or hybrid model can drop after a Decode: what
// ContextParams.Rollback asked for on an architecture whose recurrent
// state the library rolls back (Qwen3.5, Nemotron-H, LFM2 among them),
// else 0.
func (c *Context) RollbackLimit() int { return c.rollback }

// MaxPos is the largest position seq holds, -1 when empty.
func (c *Context) MaxPos(seq int) int {
	if !c.validSeq(seq) || c.mem == nil {
		return -1
	}
	return int(C.ikl_llama_memory_seq_pos_max(c.api, c.mem, C.llama_seq_id(seq)))
}

// SequenceStateSize is the bytes of seq's state, 0 when states are off.
func (c *Context) SequenceStateSize(seq int) int {
	if !c.validSeq(seq) || c.states == nil {
		return 0
	}
	return int(C.ikl_llama_state_seq_get_size(c.api, c.c, C.llama_seq_id(seq)))
}

// SequenceState returns the state of seq: its KV cells' positions, keys
// and values, as the library serialises them for this context's model
// and cache types. SetSequenceState puts it back, into this context or
// another made over the same model file with the same cache types and
// cells. The state is checked as SetSequenceState checks it, so that
// one it would refuse is never handed out.
func (c *Context) SequenceState(seq int) ([]byte, error) {
	if !c.validSeq(seq) {
		return nil, fmt.Errorf("libllama: sequence %d of %d", seq, c.nSeq)
	}
	if c.states == nil {
		return nil, c.noStates
	}
	if c.pending != nil && c.pending[seq] {
		return nil, c.cutBack(seq, "sequence states")
	}
	n := int(C.ikl_llama_state_seq_get_size(c.api, c.c, C.llama_seq_id(seq)))
	if n <= 0 || int64(n) > c.states.maxSize() {
		return nil, c.statesOff(fmt.Errorf("a state of %d bytes, at most %d", n, c.states.maxSize()))
	}
	buf := make([]byte, n)
	if got := int(C.ikl_llama_state_seq_get_data(c.api, c.c, (*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(n), C.llama_seq_id(seq))); got != n {
		return nil, fmt.Errorf("libllama: sequence %d's state: %d bytes of %d", seq, got, n)
	}
	if err := c.states.check(buf); err != nil {
		return nil, c.statesOff(err)
	}
	return buf, nil
}

// statesOff turns states off on c, after the library wrote one that the
// layout derived for its model does not describe (why): SetSequenceState
// would refuse what it saves. It returns the error, wrapping
// backend.ErrUnsupported, that the state methods give from then on.
func (c *Context) statesOff(why error) error {
	c.states = nil
	c.noStates = fmt.Errorf("%w: the library writes another layout than the one derived for this model (%v)",
		backend.Unsupported(backend.LibLlama, "sequence states (the prompt cache on disk)"), why)
	return c.noStates
}

// SetSequenceState replaces seq's memory with state, after checking it
// field by field against this context's layout (stateChecker): a
// state it refuses, with an error wrapping backend.ErrBadState, never
// reaches the library. seq is left empty when the state is refused or
// does not fit.
func (c *Context) SetSequenceState(seq int, state []byte) error {
	if !c.validSeq(seq) {
		return fmt.Errorf("libllama: sequence %d of %d", seq, c.nSeq)
	}
	c.ClearSequence(seq)
	if c.states == nil {
		return c.noStates
	}
	if err := c.states.check(state); err != nil {
		return err
	}
	if got := int(C.ikl_llama_state_seq_set_data(c.api, c.c, (*C.uint8_t)(unsafe.Pointer(&state[0])), C.size_t(len(state)), C.llama_seq_id(seq))); got != len(state) {
		c.ClearSequence(seq)
		return fmt.Errorf("libllama: sequence %d: the library restored %d bytes of a %d-byte state (no free cells for it?)", seq, got, len(state))
	}
	return nil
}

// SequenceStateLimit is the most bytes a state SetSequenceState accepts
// can take: one sequence holding every cell of its stream. 0 when states
// are off.
func (c *Context) SequenceStateLimit() int64 {
	if c.states == nil {
		return 0
	}
	return c.states.maxSize()
}

// LogSumExp is backend.LogSumExp in C.
func (c *Context) LogSumExp(logits []float32) float64 {
	if len(logits) == 0 {
		return math.Inf(-1)
	}
	return float64(C.ikl_log_sum_exp((*C.float)(unsafe.Pointer(&logits[0])), C.int(len(logits))))
}

// Encode runs an encoder context over b, every token of which belongs to
// one sequence, at positions from 0, and pools each sequence's outputs.
// It sets the batch's output flags itself.
func (c *Context) Encode(bb backend.Batch) error {
	b, err := c.batch(bb, "Encode")
	if err != nil {
		return err
	}
	if c.pooling == backend.PoolingNone {
		return errors.New("libllama: Encode on a context made without pooling")
	}
	if b.n == 0 {
		return nil
	}
	for s := range c.last {
		c.last[s] = -1
	}
	for i := range b.n {
		if b.nSeqID[i] != 1 {
			return fmt.Errorf("libllama: token %d of an encoder batch belongs to %d sequences", i, int(b.nSeqID[i]))
		}
		b.logits[i] = 1
		if c.pooling == backend.PoolingLast {
			b.logits[i] = 0
			s := int(b.seqs[i*b.nSeq])
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
		C.ikl_llama_memory_clear(c.api, c.mem, true)
		rc = C.ikl_llama_decode(c.api, c.c, b.c)
	} else {
		rc = C.ikl_llama_encode(c.api, c.c, b.c)
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
// PoolingRank context, nil when seq was not in the last batch. A copy.
func (c *Context) SequenceScores(seq int) []float32 {
	if c.pooling != backend.PoolingRank || !c.validSeq(seq) {
		return nil
	}
	p := C.ikl_llama_get_embeddings_seq(c.api, c.c, C.llama_seq_id(seq))
	if p == nil {
		return nil
	}
	return append([]float32(nil), unsafe.Slice((*float32)(unsafe.Pointer(p)), c.model.ClassifierOutputs())...)
}

// SequenceEmbedding returns the pooled embedding of seq after Encode with
// mean, CLS or last pooling, nil when seq was not in the last batch. A
// copy.
func (c *Context) SequenceEmbedding(seq int) []float32 {
	if !c.validSeq(seq) {
		return nil
	}
	var p *C.float
	switch c.pooling {
	case backend.PoolingMean, backend.PoolingCLS:
		p = C.ikl_llama_get_embeddings_seq(c.api, c.c, C.llama_seq_id(seq))
	case backend.PoolingLast:
		if c.last[seq] < 0 {
			return nil
		}
		p = C.ikl_llama_get_embeddings_ith(c.api, c.c, C.int32_t(c.last[seq]))
	}
	if p == nil {
		return nil
	}
	return append([]float32(nil), unsafe.Slice((*float32)(unsafe.Pointer(p)), c.model.EmbeddingSize())...)
}
