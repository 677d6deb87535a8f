//go:build cgo

package goengine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/ollama/ollama/ml"
	"github.com/ollama/ollama/model/input"
	"github.com/ollama/ollama/model/models/qwen3next"
)

// states is how a Qwen3.5 (qwen3next) context reaches the recurrent state
// of its linear-attention layers, which Ollama's cache keeps per sequence
// beside the attention layers' KV cells and exposes only for the
// sequences of a forward pass: a checkpoint starts a pass of one cell at
// the sequence's next position, reads or writes the conv and delta states
// of every linear-attention layer, and removes the cell again.
type states struct {
	cache    *qwen3next.HybridCache
	layers   []int // the linear-attention layers
	conv     int   // floats of a layer's conv state
	delta    int   // floats of a layer's delta state
	deltaDim []int // the shape DeltaState reads
}

// newStates returns the states of m's memory, or nil for a model without
// linear-attention layers.
func newStates(m *Model) *states {
	gm, ok := m.m.(*qwen3next.Model)
	if !ok {
		return nil
	}
	hc, ok := gm.Config().Cache.(*qwen3next.HybridCache)
	if !ok {
		return nil
	}
	s := &states{cache: hc}
	for i, l := range gm.Layers {
		if _, ok := l.Operator.(*qwen3next.GatedDeltaNet); ok {
			s.layers = append(s.layers, i)
		}
	}
	inner, heads := int(m.kv.Uint("ssm.inner_size")), int(m.kv.Uint("ssm.time_step_rank"))
	kernel := int(m.kv.Uint("ssm.conv_kernel"))
	channels := inner + 2*int(m.kv.Uint("ssm.group_count"))*int(m.kv.Uint("ssm.state_size"))
	if len(s.layers) == 0 || heads <= 0 || inner%heads != 0 || kernel < 2 || channels <= 0 {
		return nil
	}
	hv := inner / heads
	s.conv, s.delta, s.deltaDim = (kernel-1)*channels, hv*hv*heads, []int{hv, hv * heads}
	return s
}

// ckptMagic starts a checkpoint: then its token count (uint32), then each
// linear-attention layer's conv and delta states as little-endian f32.
const ckptMagic = "gecp\x01"

// size is the bytes of a checkpoint.
func (s *states) size() int { return len(ckptMagic) + 4 + 4*len(s.layers)*(s.conv+s.delta) }

// Checkpoints reports whether the context takes checkpoints of its
// sequences' recurrent state (backend.Checkpointer): on Qwen3.5.
func (c *Context) Checkpoints() bool { return c.states != nil }

// Checkpoint returns the conv and delta states of seq's linear-attention
// layers after the positions it holds.
func (c *Context) Checkpoint(seq int) (b []byte, err error) {
	s := c.states
	switch {
	case s == nil:
		return nil, backend.Unsupported(backend.Ollama, "checkpoints of a model without recurrent state")
	case !c.validSeq(seq) || c.maxPos[seq] < 0:
		return nil, fmt.Errorf("goengine: a checkpoint of sequence %d, which holds nothing", seq)
	}
	ggmlCPU.Lock()
	defer ggmlCPU.Unlock()
	n := c.maxPos[seq] + 1
	b = binary.LittleEndian.AppendUint32(append(make([]byte, 0, s.size()), ckptMagic...), uint32(n))
	err = c.inPass(seq, n, func(ctx ml.Context) error {
		var ts []ml.Tensor
		for _, l := range s.layers {
			conv, err := s.cache.ConvState(ctx, l)
			if err != nil {
				return err
			}
			delta, err := s.cache.RecurrentState(ctx, l, s.deltaDim...)
			if err != nil {
				return err
			}
			ts = append(ts, conv.Contiguous(ctx), delta.Contiguous(ctx))
		}
		ctx.Forward(ts...).Compute(ts...)
		for i, t := range ts {
			f := t.Floats()
			if want := [2]int{s.conv, s.delta}[i%2]; len(f) != want {
				return fmt.Errorf("goengine: a state of %d floats, want %d", len(f), want)
			}
			for _, x := range f {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// RestoreCheckpoint cuts seq back to n positions and puts back the conv
// and delta states of its linear-attention layers from a Checkpoint taken
// there. A state of another size or token count, or one that holds a
// value that is not a number, is refused with an error wrapping
// backend.ErrBadState before anything changes; so is a seq that holds
// fewer than n positions. After another error seq is cleared.
func (c *Context) RestoreCheckpoint(seq, n int, state []byte) error {
	s := c.states
	switch {
	case s == nil:
		return backend.Unsupported(backend.Ollama, "checkpoints of a model without recurrent state")
	case !c.validSeq(seq):
		return fmt.Errorf("goengine: sequence %d of %d", seq, len(c.maxPos))
	case n <= 0 || n > c.maxPos[seq]+1:
		return fmt.Errorf("goengine: a checkpoint after %d tokens of a sequence that holds %d: %w", n, c.maxPos[seq]+1, backend.ErrBadState)
	case len(state) != s.size() || string(state[:len(ckptMagic)]) != ckptMagic:
		return fmt.Errorf("goengine: a checkpoint of %d bytes, this model's take %d: %w", len(state), s.size(), backend.ErrBadState)
	}
	body := state[len(ckptMagic):]
	if at := binary.LittleEndian.Uint32(body); int64(at) != int64(n) {
		return fmt.Errorf("goengine: a checkpoint after %d tokens, restored after %d: %w", at, n, backend.ErrBadState)
	}
	f := make([]float32, (len(body)-4)/4)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(body[4+4*i:]))
		if math.IsNaN(float64(f[i])) || math.IsInf(float64(f[i]), 0) {
			return fmt.Errorf("goengine: a checkpoint's value %d is %v: %w", i, f[i], backend.ErrBadState)
		}
	}
	ggmlCPU.Lock()
	defer ggmlCPU.Unlock()
	err := c.cutTail(seq, n)
	if err == nil {
		err = c.inPass(seq, n, func(ctx ml.Context) error {
			// A sequence that shares its state with another (a whole
			// copy) gets its own before it is written.
			if err := s.cache.EnsureWritable(ctx); err != nil {
				return err
			}
			for _, l := range s.layers {
				conv, delta := f[:s.conv], f[s.conv:s.conv+s.delta]
				f = f[s.conv+s.delta:]
				s.cache.UpdateConvState(ctx, l, ctx.Input().FromFloats(conv, s.conv, 1))
				s.cache.UpdateRecurrentState(ctx, l, ctx.Input().FromFloats(delta, s.delta, 1))
			}
			ctx.Compute()
			return nil
		})
	}
	if err != nil {
		c.clearSequence(seq)
		return fmt.Errorf("goengine: restoring a checkpoint: %w", err)
	}
	return nil
}

// cutTail removes seq's positions from n on, keeping its recurrent
// state: a removal of the middle to Ollama's cache, which ends where the
// sequence does. The caller holds ggmlCPU.
func (c *Context) cutTail(seq, n int) error {
	if end := c.maxPos[seq] + 1; n < end {
		if err := c.states.cache.Recurrent.Remove(seq, int32(n), int32(end)); err != nil {
			return err
		}
	}
	c.maxPos[seq] = n - 1
	return nil
}

// inPass runs f in a forward pass of one cell of seq at position n, its
// next, which makes seq's recurrent state the pass's, and removes the
// cell after. The caller holds ggmlCPU.
func (c *Context) inPass(seq, n int, f func(ml.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("goengine: %v", r)
		}
	}()
	ctx := c.m.m.Backend().NewContext()
	defer ctx.Close()
	batch := input.Batch{Positions: []int32{int32(n)}, Sequences: []int{seq}}
	if err := c.states.cache.StartForward(ctx, batch, false); err != nil {
		return err
	}
	err = f(ctx)
	if rerr := c.states.cache.Recurrent.Remove(seq, int32(n), int32(n+1)); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return err
}
