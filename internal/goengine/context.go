//go:build cgo

package goengine

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/ollama/ollama/kvcache"
	"github.com/ollama/ollama/ml"
	"github.com/ollama/ollama/model"
	"github.com/ollama/ollama/model/input"
)

// Context is the memory of a Model's sequences: Ollama's KV cache (or
// recurrent state), with the positions each sequence holds. It implements
// backend.Context and is not safe for concurrent use. Its owner must call
// Close before the Model's.
type Context struct {
	m      *Model
	cache  kvcache.Cache
	nCtx   int
	nBatch int
	maxPos []int // per sequence, -1 when empty

	logits []float32 // VocabSize per output row of the last Decode
	rows   []int     // per batch index of the last Decode: its row, or -1

	// states reaches Qwen3.5's recurrent state for checkpoints
	// (checkpoint.go); nil for other models.
	states *states
}

var (
	_ backend.Context      = (*Context)(nil)
	_ backend.Checkpointer = (*Context)(nil)
)

func newContext(m *Model, p backend.ContextParams) (*Context, error) {
	switch {
	case p.Pooling != backend.PoolingNone:
		return nil, backend.Unsupported(backend.Ollama, "encoder contexts (pooling)")
	case p.KeyType != backend.CacheF16 || p.ValueType != backend.CacheF16:
		return nil, backend.Unsupported(backend.Ollama, fmt.Sprintf("a %s/%s KV cache (only f16)", p.KeyType, p.ValueType))
	case p.SplitKV:
		return nil, backend.Unsupported(backend.Ollama, "split KV streams")
	case p.Context <= 0:
		return nil, fmt.Errorf("goengine: context of %d cells", p.Context)
	}
	seqs := max(p.Sequences, 1)
	nBatch := p.Batch
	if nBatch <= 0 {
		nBatch = 512
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.closed:
		return nil, errClosed
	case m.ctxMade:
		return nil, fmt.Errorf("goengine: %s: the model's one context was made; load the model again for another", m.path)
	}
	cache := m.m.Config().Cache
	// Every sequence may take the cells it needs of the pool; the pool
	// holds Context cells in all.
	perSeq := (p.Context + seqs - 1) / seqs
	ggmlCPU.Lock()
	defer ggmlCPU.Unlock()
	if err := initCache(cache, m.m.Backend(), seqs, perSeq, nBatch); err != nil {
		return nil, err
	}
	m.ctxMade = true
	c := &Context{m: m, cache: cache, nCtx: perSeq * seqs, nBatch: nBatch, maxPos: make([]int, seqs), states: newStates(m)}
	for i := range c.maxPos {
		c.maxPos[i] = -1
	}
	return c, nil
}

// initCache makes the cache's tensors, returning a panic as an error.
func initCache(c kvcache.Cache, b ml.Backend, seqs, perSeq, batch int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("goengine: making the KV cache: %v", r)
		}
	}()
	c.Init(b, ml.DTypeF16, seqs, perSeq, batch)
	return nil
}

// Size is the cells of the memory, shared by all sequences.
func (c *Context) Size() int { return c.nCtx }

// BatchSize is the most tokens Decode takes at once.
func (c *Context) BatchSize() int { return c.nBatch }

// NewBatch makes a batch of up to n tokens (at most BatchSize).
func (c *Context) NewBatch(n int) backend.Batch {
	return &Batch{cap: min(max(n, 1), c.nBatch), nSeq: len(c.maxPos), nVocab: c.m.VocabSize()}
}

// Logits returns the logits of batch index i of the last Decode, or nil
// when it asked for none.
func (c *Context) Logits(i int) []float32 {
	if i < 0 || i >= len(c.rows) || c.rows[i] < 0 {
		return nil
	}
	n := c.m.VocabSize()
	r := c.rows[i]
	return c.logits[r*n : (r+1)*n : (r+1)*n]
}

// Decode runs the model over b: in one forward pass where the memory
// mixes sequences, else in one pass per sequence. A token of several
// sequences is decoded for the first, whose prefix the others then take by
// a copy; their own tokens in b wait for a later pass, after the copy.
// After an error the batch's sequences are cleared.
func (c *Context) Decode(bb backend.Batch) (err error) {
	b, ok := bb.(*Batch)
	if !ok {
		return fmt.Errorf("goengine: Decode of a %T", bb)
	}
	if b.n() == 0 {
		return errors.New("goengine: Decode of an empty batch")
	}
	ggmlCPU.Lock()
	defer ggmlCPU.Unlock()
	c.rows = slices.Grow(c.rows[:0], b.n())[:b.n()]
	for i := range c.rows {
		c.rows[i] = -1
	}
	c.logits = c.logits[:0]
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("goengine: decoding: %v", r)
		}
		if err != nil {
			for i := range b.n() {
				for _, s := range b.seqs[i] {
					c.clearSequence(s)
				}
			}
		}
	}()
	if !c.m.mixes {
		return c.decodeApart(b)
	}
	pending := make([]int, b.n())
	for i := range pending {
		pending[i] = i
	}
	for len(pending) > 0 {
		// Sequences that take tokens of others in this pass: their own
		// tokens wait for the copy.
		follows := map[int]int{} // follower: the end of what it takes
		for _, i := range pending {
			for _, s := range b.seqs[i][1:] {
				follows[s] = max(follows[s], b.pos[i]+1)
			}
		}
		var now, later []int
		for _, i := range pending {
			if _, waits := follows[b.seqs[i][0]]; waits {
				later = append(later, i)
			} else {
				now = append(now, i)
			}
		}
		if len(now) == 0 {
			return errors.New("goengine: the batch's sequences take each other's tokens")
		}
		if err := c.forward(b, now); err != nil {
			return err
		}
		for _, i := range now {
			for _, s := range b.seqs[i][1:] {
				if end, ok := follows[s]; ok {
					c.copyPrefix(b.seqs[i][0], s, end)
					delete(follows, s)
				}
			}
		}
		pending = later
	}
	return nil
}

// decodeApart decodes b on a memory that takes one sequence per forward
// pass.
func (c *Context) decodeApart(b *Batch) error {
	var passes [][]int // batch indices of each sequence, in order
	bySeq := map[int]int{}
	for i := range b.n() {
		if len(b.seqs[i]) > 1 {
			return backend.Unsupported(backend.Ollama, "a token of several sequences on a recurrent model")
		}
		s := b.seqs[i][0]
		k, ok := bySeq[s]
		if !ok {
			k = len(passes)
			bySeq[s] = k
			passes = append(passes, nil)
		}
		passes[k] = append(passes[k], i)
	}
	for _, idx := range passes {
		if err := c.forward(b, idx); err != nil {
			return err
		}
	}
	return nil
}

// forward runs one forward pass over the batch indices idx and keeps the
// logits they ask for.
func (c *Context) forward(b *Batch, idx []int) error {
	toks := make([]int32, len(idx))
	var outs []int32
	batch := input.Batch{Positions: make([]int32, len(idx)), Sequences: make([]int, len(idx))}
	for k, i := range idx {
		toks[k] = b.toks[i]
		batch.Positions[k] = int32(b.pos[i])
		batch.Sequences[k] = b.seqs[i][0]
		if b.logits[i] {
			outs = append(outs, int32(k))
		}
	}
	wanted := len(outs) > 0
	if !wanted {
		outs = append(outs, int32(len(idx)-1)) // a pass computes one row at least
	}
	ctx := c.m.m.Backend().NewContext()
	defer ctx.Close()
	batch.Inputs = ctx.Input().FromInts(toks, len(toks))
	batch.Outputs = ctx.Input().FromInts(outs, len(outs))
	ctx.SetBatchSize(len(toks))
	t, err := model.Forward(ctx, c.m.m, batch)
	if err != nil {
		return fmt.Errorf("goengine: %w", err)
	}
	ctx.Compute(t)
	for _, i := range idx {
		s := b.seqs[i][0]
		c.maxPos[s] = max(c.maxPos[s], b.pos[i])
	}
	if !wanted {
		return nil
	}
	out := t.Floats()
	n := c.m.VocabSize()
	if len(out) != len(outs)*n {
		return fmt.Errorf("goengine: %d logits for %d rows of %d", len(out), len(outs), n)
	}
	first := len(c.logits) / n
	if first == 0 {
		c.logits = out // Floats made it for us: no second copy
	} else {
		c.logits = append(c.logits, out...)
	}
	for r, k := range outs {
		c.rows[idx[k]] = first + r
	}
	return nil
}

// RemoveTokens removes positions [from, to) of seq. Only a sequence's
// tail can go (to < 0 or past its end), and on a recurrent model only the
// whole sequence: otherwise it returns false and leaves seq unchanged.
func (c *Context) RemoveTokens(seq, from, to int) bool {
	if !c.validSeq(seq) {
		return false
	}
	from = max(from, 0)
	end := c.maxPos[seq] + 1
	if to >= 0 && to < end || from >= end {
		return from >= end // nothing there to remove, or a middle
	}
	if from > 0 && !c.m.mixes {
		return false
	}
	ggmlCPU.Lock()
	defer ggmlCPU.Unlock()
	if err := c.cache.Remove(seq, int32(from), math.MaxInt32); err != nil {
		return false
	}
	c.maxPos[seq] = from - 1
	return true
}

// CopyTokens makes dst hold src's positions [0, to). A copy that starts
// past 0, or, on a recurrent model, one of less than the whole sequence, is
// an error wrapping backend.ErrUnsupported.
func (c *Context) CopyTokens(src, dst, from, to int) error {
	if !c.validSeq(src) || !c.validSeq(dst) || src == dst {
		return fmt.Errorf("goengine: copy from sequence %d to %d", src, dst)
	}
	end := c.maxPos[src] + 1
	if to < 0 || to > end {
		to = end
	}
	switch {
	case from != 0:
		return backend.Unsupported(backend.Ollama, "copying positions that do not start at 0")
	case to < end && !c.m.mixes:
		return backend.Unsupported(backend.Ollama, "copying part of a sequence of a recurrent model")
	}
	ggmlCPU.Lock()
	defer ggmlCPU.Unlock()
	c.copyPrefix(src, dst, to)
	return nil
}

// copyPrefix makes dst hold src's first n positions. The caller holds
// ggmlCPU.
func (c *Context) copyPrefix(src, dst, n int) {
	c.cache.CopyPrefix(src, dst, int32(n))
	c.maxPos[dst] = min(n, c.maxPos[src]+1) - 1
}

// ClearSequence empties seq.
func (c *Context) ClearSequence(seq int) {
	ggmlCPU.Lock()
	defer ggmlCPU.Unlock()
	c.clearSequence(seq)
}

// clearSequence is ClearSequence, whose caller holds ggmlCPU.
func (c *Context) clearSequence(seq int) {
	if !c.validSeq(seq) {
		return
	}
	if err := c.cache.Remove(seq, 0, math.MaxInt32); err == nil {
		c.maxPos[seq] = -1
	}
}

// Clear empties every sequence.
func (c *Context) Clear() {
	for s := range c.maxPos {
		c.ClearSequence(s)
	}
}

// MaxPos is the last position seq holds, -1 when empty.
func (c *Context) MaxPos(seq int) int {
	if !c.validSeq(seq) {
		return -1
	}
	return c.maxPos[seq]
}

func (c *Context) validSeq(s int) bool { return s >= 0 && s < len(c.maxPos) }

// SequenceStateSize is 0: the Go engine cannot save a sequence.
func (c *Context) SequenceStateSize(int) int { return 0 }

// SequenceState fails: the Go engine cannot save a sequence.
func (c *Context) SequenceState(int) ([]byte, error) {
	return nil, backend.Unsupported(backend.Ollama, "saving a sequence's state")
}

// SetSequenceState fails: the Go engine cannot restore a sequence.
func (c *Context) SetSequenceState(int, []byte) error {
	return backend.Unsupported(backend.Ollama, "restoring a sequence's state")
}

// Close frees the memory.
func (c *Context) Close() {
	if c.cache != nil {
		c.cache.Close()
		c.cache = nil
	}
}

// Batch is the tokens of one Decode. It implements backend.Batch.
type Batch struct {
	toks   []int32
	pos    []int
	seqs   [][]int
	logits []bool
	cap    int
	nSeq   int
	nVocab int
}

var _ backend.Batch = (*Batch)(nil)

// Add appends token t at position pos of seqs, each of which takes it.
func (b *Batch) Add(t backend.Token, pos int, seqs []int, logits bool) (int, error) {
	switch {
	case b.n() >= b.cap:
		return 0, fmt.Errorf("goengine: batch of %d is full", b.cap)
	case t < 0 || int(t) >= b.nVocab:
		return 0, fmt.Errorf("goengine: token %d outside the vocabulary of %d", t, b.nVocab)
	case pos < 0 || pos >= math.MaxInt32:
		return 0, fmt.Errorf("goengine: position %d", pos)
	case len(seqs) == 0:
		return 0, errors.New("goengine: a token of no sequence")
	}
	for _, s := range seqs {
		if s < 0 || s >= b.nSeq {
			return 0, fmt.Errorf("goengine: sequence %d of %d", s, b.nSeq)
		}
	}
	b.toks = append(b.toks, t)
	b.pos = append(b.pos, pos)
	b.seqs = append(b.seqs, slices.Clone(seqs))
	b.logits = append(b.logits, logits)
	return b.n() - 1, nil
}

func (b *Batch) n() int { return len(b.toks) }

// Len is the tokens added since the last Clear.
func (b *Batch) Len() int { return b.n() }

// Cap is the most tokens the batch holds.
func (b *Batch) Cap() int { return b.cap }

// Clear empties the batch.
func (b *Batch) Clear() {
	b.toks, b.pos, b.seqs, b.logits = b.toks[:0], b.pos[:0], b.seqs[:0], b.logits[:0]
}

// Close frees nothing: the batch is Go memory.
func (b *Batch) Close() {}
