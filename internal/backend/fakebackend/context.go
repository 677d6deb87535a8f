package fakebackend

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/inferkit/inferkit/internal/backend"
)

// cell is a memory cell: a token at a position, and the hash of its
// sequence's tokens up to it, shared by refs sequences.
type cell struct {
	tok  backend.Token
	pos  int
	hash uint64
	refs int
}

// Context is the fake model's memory: a budget of cells and, per
// sequence, its cells by position (positions 0 to MaxPos, no gaps). It
// is not safe for concurrent use; Close does nothing.
type Context struct {
	size, batch int
	used        int       // cells held by at least one sequence
	seqs        [][]*cell // by sequence, by position
	logits      map[int][]float32
	// ckptBytes is the size of a checkpoint of a recurrent model's
	// sequence, 0 for a model without recurrent state.
	ckptBytes int
	// rollback, decoded and pending are a recurrent state's rollback
	// (Options.RollsBack): the most positions a cut drops, each
	// sequence's tokens in the last Decode, and the sequences cut since.
	rollback int
	decoded  []int
	pending  []bool
}

// RollbackLimit is how many of its last positions a recurrent sequence
// can drop after a Decode (Options.RollsBack), else 0.
func (c *Context) RollbackLimit() int { return c.rollback }

// forget ends what seq's state may roll back over.
func (c *Context) forget(seq int) {
	if c.decoded != nil {
		c.decoded[seq], c.pending[seq] = 0, false
	}
}

var (
	_ backend.Context      = (*Context)(nil)
	_ backend.Checkpointer = (*Context)(nil)
)

// Size is the context's cells.
func (c *Context) Size() int { return c.size }

// BatchSize is the most tokens Decode takes.
func (c *Context) BatchSize() int { return c.batch }

// NewBatch makes a batch of up to n tokens.
func (c *Context) NewBatch(n int) backend.Batch {
	return &Batch{max: n, seqs: len(c.seqs)}
}

// Decode adds b's tokens to their sequences, each at the position after
// the sequence's last, and computes the logits asked for. It fails,
// changing nothing, when the free cells are too few; on a position that
// leaves a gap it fails part way, as a real backend may.
func (c *Context) Decode(bb backend.Batch) error {
	b, ok := bb.(*Batch)
	if !ok {
		return errors.New("fakebackend: Decode: a batch of another backend")
	}
	if len(b.entries) == 0 {
		return errors.New("fakebackend: Decode: empty batch")
	}
	if len(b.entries) > c.batch {
		return fmt.Errorf("fakebackend: Decode: %d tokens, more than the batch size %d", len(b.entries), c.batch)
	}
	if c.used+len(b.entries) > c.size {
		return fmt.Errorf("fakebackend: Decode: %d tokens, %d of %d cells free", len(b.entries), c.size-c.used, c.size)
	}
	c.logits = map[int][]float32{}
	clear(c.decoded)
	for i, e := range b.entries {
		var prev uint64
		for j, s := range e.seqs {
			if e.pos != len(c.seqs[s]) {
				return fmt.Errorf("fakebackend: Decode: token %d at position %d of sequence %d, which holds %d", i, e.pos, s, len(c.seqs[s]))
			}
			h := uint64(0x9e3779b97f4a7c15)
			if e.pos > 0 {
				h = c.seqs[s][e.pos-1].hash
			}
			if j > 0 && h != prev {
				return fmt.Errorf("fakebackend: Decode: token %d shared by sequences %v, which hold different tokens", i, e.seqs)
			}
			prev = h
		}
		nc := &cell{tok: e.tok, pos: e.pos, hash: mix(prev ^ uint64(e.tok)<<20 ^ uint64(e.pos)), refs: len(e.seqs)}
		c.used++
		for _, s := range e.seqs {
			c.seqs[s] = append(c.seqs[s], nc)
			if c.decoded != nil {
				c.decoded[s]++
				c.pending[s] = false
			}
		}
		if e.logits {
			c.logits[i] = logitsOf(nc.hash)
		}
	}
	return nil
}

// Logits returns the logits of batch index i of the last Decode, nil if
// it did not ask for them.
func (c *Context) Logits(i int) []float32 { return c.logits[i] }

// mix is SplitMix64's finaliser.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// logitsOf makes the logits that follow a sequence of hash h: a value in
// [-4, 4) for each token, printable ASCII raised by 3 and the control
// tokens but the EOGs lowered by 8, so that text reads as text.
func logitsOf(h uint64) []float32 {
	l := make([]float32, vocabLen)
	for t := range l {
		x := mix(h + uint64(t)*0x9e3779b97f4a7c15)
		v := float32(x>>40)/float32(1<<24)*8 - 4
		switch {
		case t >= 0x20 && t < 0x7f:
			v += 3
		case backend.Token(t) == BOS || backend.Token(t) == ImStart:
			v -= 8
		}
		l[t] = v
	}
	return l
}

// release drops one sequence's hold of the cells cs.
func (c *Context) release(cs []*cell) {
	for _, x := range cs {
		if x.refs--; x.refs == 0 {
			c.used--
		}
	}
}

func (c *Context) seqOK(seq int) bool { return seq >= 0 && seq < len(c.seqs) }

// RemoveTokens removes positions [from, to) of seq. Only a cut to the end
// (to < 0, or past the last position) is possible: a hole in the middle
// returns false.
func (c *Context) RemoveTokens(seq, from, to int) bool {
	if !c.seqOK(seq) {
		return false
	}
	cs := c.seqs[seq]
	from = max(from, 0)
	if to >= 0 && to < len(cs) {
		return from >= to // removing nothing is fine
	}
	if from >= len(cs) {
		return true
	}
	if from > 0 && c.ckptBytes > 0 {
		// A recurrent state is cut back only over the last Decode.
		n := len(cs) - from
		if c.decoded == nil || c.pending[seq] || n >= c.decoded[seq] || n > c.rollback {
			return false
		}
		c.release(cs[from:])
		clear(cs[from:])
		c.seqs[seq] = cs[:from]
		c.forget(seq)
		c.pending[seq] = true
		return true
	}
	if from == 0 {
		c.forget(seq)
	}
	c.release(cs[from:])
	clear(cs[from:])
	c.seqs[seq] = cs[:from]
	return true
}

// CopyTokens makes dst hold src's positions [from, to), sharing their
// cells. dst must hold every position before from.
func (c *Context) CopyTokens(src, dst, from, to int) error {
	if !c.seqOK(src) || !c.seqOK(dst) {
		return fmt.Errorf("fakebackend: CopyTokens: sequence %d or %d out of range", src, dst)
	}
	s := c.seqs[src]
	if to < 0 || to > len(s) {
		to = len(s)
	}
	from = max(from, 0)
	if from >= to || src == dst {
		return nil
	}
	if c.ckptBytes > 0 && (from > 0 || to < len(s)) {
		return fmt.Errorf("fakebackend: CopyTokens: part of a sequence of a recurrent model: %w", backend.ErrUnsupported)
	}
	if c.pending != nil && c.pending[src] {
		return fmt.Errorf("fakebackend: CopyTokens: sequence %d, cut back since its last Decode: %w", src, backend.ErrUnsupported)
	}
	c.forget(dst)
	d := c.seqs[dst]
	if from > len(d) {
		return fmt.Errorf("fakebackend: CopyTokens: sequence %d holds %d positions, copying from %d would leave a gap", dst, len(d), from)
	}
	for p := from; p < to; p++ {
		s[p].refs++
		if p < len(d) {
			c.release(d[p : p+1])
			d[p] = s[p]
		} else {
			d = append(d, s[p])
		}
	}
	c.seqs[dst] = d
	return nil
}

// ClearSequence empties seq.
func (c *Context) ClearSequence(seq int) {
	if c.seqOK(seq) {
		c.RemoveTokens(seq, 0, -1)
	}
}

// Clear empties every sequence.
func (c *Context) Clear() {
	for s := range c.seqs {
		c.ClearSequence(s)
	}
}

// MaxPos is the last position seq holds, -1 when empty.
func (c *Context) MaxPos(seq int) int {
	if !c.seqOK(seq) {
		return -1
	}
	return len(c.seqs[seq]) - 1
}

// Used returns the cells held by at least one sequence.
func (c *Context) Used() int { return c.used }

// A state is "fakekv\n", the token count (uint32) and the tokens (int32
// each), little-endian.
const stateMagic = "fakekv\n"

// SequenceStateSize is the bytes of seq's state.
func (c *Context) SequenceStateSize(seq int) int {
	if !c.seqOK(seq) {
		return 0
	}
	return len(stateMagic) + 4 + 4*len(c.seqs[seq])
}

// SequenceStateLimit is the bytes of the state of a sequence that holds
// every cell.
func (c *Context) SequenceStateLimit() int64 { return int64(len(stateMagic) + 4 + 4*c.size) }

// SequenceState returns seq's tokens as bytes.
func (c *Context) SequenceState(seq int) ([]byte, error) {
	if !c.seqOK(seq) {
		return nil, fmt.Errorf("fakebackend: SequenceState: sequence %d out of range", seq)
	}
	b := make([]byte, 0, c.SequenceStateSize(seq))
	b = append(b, stateMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.seqs[seq])))
	for _, x := range c.seqs[seq] {
		b = binary.LittleEndian.AppendUint32(b, uint32(x.tok))
	}
	return b, nil
}

// SetSequenceState replaces seq's memory with state's tokens, refusing a
// state this context could not have written with an error wrapping
// backend.ErrBadState.
func (c *Context) SetSequenceState(seq int, state []byte) error {
	if !c.seqOK(seq) {
		return fmt.Errorf("fakebackend: SetSequenceState: sequence %d out of range", seq)
	}
	h := len(stateMagic) + 4
	if len(state) < h || string(state[:len(stateMagic)]) != stateMagic {
		return fmt.Errorf("fakebackend: state header: %w", backend.ErrBadState)
	}
	n := binary.LittleEndian.Uint32(state[len(stateMagic):])
	if n > math.MaxInt32 || int(n) > c.size || len(state) != h+4*int(n) {
		return fmt.Errorf("fakebackend: state of %d tokens in %d bytes: %w", n, len(state), backend.ErrBadState)
	}
	toks := make([]backend.Token, n)
	for i := range toks {
		toks[i] = backend.Token(binary.LittleEndian.Uint32(state[h+4*i:]))
		if toks[i] < 0 || toks[i] >= vocabLen {
			return fmt.Errorf("fakebackend: state token %d is %d: %w", i, toks[i], backend.ErrBadState)
		}
	}
	c.ClearSequence(seq)
	if c.used+len(toks) > c.size {
		return fmt.Errorf("fakebackend: SetSequenceState: %d tokens, %d of %d cells free", len(toks), c.size-c.used, c.size)
	}
	h64 := uint64(0x9e3779b97f4a7c15)
	for p, t := range toks {
		x := &cell{tok: t, pos: p, hash: mix(h64 ^ uint64(t)<<20 ^ uint64(p)), refs: 1}
		h64 = x.hash
		c.seqs[seq] = append(c.seqs[seq], x)
		c.used++
	}
	return nil
}

// A checkpoint is "fakerc\n", the sequence (uint32) and token count
// (uint32) it was taken at, and the hash of the sequence's tokens up to
// there (uint64), the recurrent state; zeros pad it to its size.
const (
	ckptMagic  = "fakerc\n"
	ckptHeader = len(ckptMagic) + 4 + 4 + 8
)

// Checkpoints reports whether the model is recurrent, which makes the
// context a backend.Checkpointer.
func (c *Context) Checkpoints() bool { return c.ckptBytes > 0 }

// Checkpoint returns seq's recurrent state.
func (c *Context) Checkpoint(seq int) ([]byte, error) {
	switch {
	case c.ckptBytes == 0:
		return nil, backend.Unsupported(Name, "checkpoints of a model without recurrent state")
	case !c.seqOK(seq):
		return nil, fmt.Errorf("fakebackend: Checkpoint: sequence %d out of range", seq)
	case c.pending != nil && c.pending[seq]:
		return nil, backend.Unsupported(Name, "checkpoints of a recurrent state cut back since its last Decode")
	}
	cs := c.seqs[seq]
	var h uint64
	if len(cs) > 0 {
		h = cs[len(cs)-1].hash
	}
	b := make([]byte, 0, c.ckptBytes)
	b = append(b, ckptMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(seq))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(cs)))
	b = binary.LittleEndian.AppendUint64(b, h)
	return b[:c.ckptBytes], nil
}

// RestoreCheckpoint cuts seq back to n positions, after checking that
// state is a checkpoint of seq's tokens up to n, refusing any other with
// an error wrapping backend.ErrBadState.
func (c *Context) RestoreCheckpoint(seq, n int, state []byte) error {
	switch {
	case c.ckptBytes == 0:
		return backend.Unsupported(Name, "checkpoints of a model without recurrent state")
	case !c.seqOK(seq):
		return fmt.Errorf("fakebackend: RestoreCheckpoint: sequence %d out of range", seq)
	case len(state) != c.ckptBytes || string(state[:len(ckptMagic)]) != ckptMagic:
		return fmt.Errorf("fakebackend: checkpoint header: %w", backend.ErrBadState)
	}
	b := state[len(ckptMagic):]
	s, at, h := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint64(b[8:])
	cs := c.seqs[seq]
	switch {
	case int64(s) != int64(seq) || int64(at) != int64(n):
		return fmt.Errorf("fakebackend: a checkpoint of sequence %d at %d, restored to %d at %d: %w", s, at, seq, n, backend.ErrBadState)
	case n <= 0 || n > len(cs):
		return fmt.Errorf("fakebackend: a checkpoint at %d of a sequence of %d: %w", n, len(cs), backend.ErrBadState)
	case cs[n-1].hash != h:
		return fmt.Errorf("fakebackend: a checkpoint of other tokens: %w", backend.ErrBadState)
	}
	c.release(cs[n:])
	clear(cs[n:])
	c.seqs[seq] = cs[:n]
	c.forget(seq)
	return nil
}

// Close does nothing.
func (c *Context) Close() {}

// Batch is the tokens of one Decode. It is not safe for concurrent use;
// Close does nothing.
type Batch struct {
	max, seqs int
	entries   []entry
}

type entry struct {
	tok    backend.Token
	pos    int
	seqs   []int
	logits bool
}

var _ backend.Batch = (*Batch)(nil)

// Add appends t at pos of seqs.
func (b *Batch) Add(t backend.Token, pos int, seqs []int, logits bool) (int, error) {
	switch {
	case len(b.entries) >= b.max:
		return 0, fmt.Errorf("fakebackend: batch full (%d tokens)", b.max)
	case len(seqs) == 0:
		return 0, errors.New("fakebackend: token for no sequence")
	case t < 0 || t >= vocabLen:
		return 0, fmt.Errorf("fakebackend: token %d outside the vocabulary", t)
	case pos < 0:
		return 0, fmt.Errorf("fakebackend: position %d", pos)
	}
	for _, s := range seqs {
		if s < 0 || s >= b.seqs {
			return 0, fmt.Errorf("fakebackend: sequence %d out of range", s)
		}
	}
	b.entries = append(b.entries, entry{t, pos, append([]int(nil), seqs...), logits})
	return len(b.entries) - 1, nil
}

func (b *Batch) Len() int { return len(b.entries) }
func (b *Batch) Cap() int { return b.max }

// Clear empties the batch.
func (b *Batch) Clear() { b.entries = b.entries[:0] }

// Close does nothing.
func (b *Batch) Close() {}
