package llamacpp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/inferkit/inferkit/internal/backend"
)

// stateLayout is what a context's sequence states hold, read from its
// memory at NewContext (state_layout.cpp): the facts that check tests a
// state against before llama.cpp reads it. llama.cpp trusts a state's
// cell count and positions: a count past the cache allocates what it
// claims (gigabytes), a position of -1 aborts the process in an
// assertion. Its checks of layer counts, types and row sizes come after
// it has placed the cells, and a state cut short is found only when a
// read runs past its end; check finds all of these first.
type stateLayout struct {
	parts []statePart
	// positions bounds a cell's position: the context's cells. This
	// engine never shifts positions, so a sequence's positions are below
	// the cells that held it, and a state of more cells than this
	// context has is refused anyway.
	positions uint32
	// posPerEmbd is the model's positions per token: more than one
	// (M-RoPE) is refused, as llama.cpp restores such a state reading
	// past the end of its own buffer.
	posPerEmbd uint32
}

// statePart is one memory (an attention cache or a recurrent state), in
// the order the state lists them: an interleaved-window model's cache
// writes its full layers, then its window layers; a hybrid model its
// attention cache, then its recurrent state.
type statePart struct {
	recurrent bool
	streams   uint32 // KV streams: 1 with a unified cache
	cells     uint32 // cells per stream
	vTrans    bool   // values stored transposed (without flash attention)
	nLayer    uint32 // the layer count the state writes
	layers    []stateLayer
}

// stateLayer is one layer of a part: its keys' (a recurrent state's r)
// and values' (s) element types and row sizes.
type stateLayer struct {
	hasK, hasV   bool
	kType, vType int32
	kRow, vRow   uint64
	vEl, vEmbd   uint32 // transposed values: element size, rows
}

// llamaMaxSeq is llama.cpp's LLAMA_MAX_SEQ, the sequence ids a cell may
// name.
const llamaMaxSeq = 256

// check reports whether state is exactly what llama_state_seq_get_data
// writes for one sequence of a context of layout l, field by field, with
// no byte more: an error wrapping backend.ErrBadState names the first
// field that is not. A state that passes holds positions that are all at
// least 0 and below the context's cells, distinct, one sequence per cell,
// no more cells than a stream has, and the model's layers with their
// types and row sizes; llama.cpp then reads it without aborting or
// allocating more than the cells it can hold.
func (l *stateLayout) check(state []byte) error {
	if l.posPerEmbd > 1 {
		return fmt.Errorf("llamacpp: llama.cpp cannot restore a state of a model with %d positions per token: %w", l.posPerEmbd, backend.ErrBadState)
	}
	r := backend.NewStateReader("llamacpp", state)
	seen := make([]uint64, (l.positions+63)/64) // positions of one part
	for _, p := range l.parts {
		if p.recurrent {
			l.checkRecurrentPart(r, p)
		} else {
			l.checkAttention(r, p, seen)
		}
		if r.Err() != nil {
			return r.Err()
		}
	}
	return r.Finish()
}

// recurrentParts counts the layout's recurrent parts.
func (l *stateLayout) recurrentParts() int {
	n := 0
	for _, p := range l.parts {
		if p.recurrent {
			n++
		}
	}
	return n
}

// checkRecurrent reports whether state is exactly what
// llama_state_seq_get_data_ext writes with
// LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY for one sequence whose recurrent
// state has read the token at position last: the recurrent parts alone,
// each of one cell at last. An error wrapping backend.ErrBadState names
// the first field that is not.
func (l *stateLayout) checkRecurrent(state []byte, last int) error {
	if l.posPerEmbd > 1 {
		return fmt.Errorf("llamacpp: llama.cpp cannot restore a state of a model with %d positions per token: %w", l.posPerEmbd, backend.ErrBadState)
	}
	r := backend.NewStateReader("llamacpp", state)
	for _, p := range l.parts {
		if !p.recurrent {
			continue
		}
		at := r.Offset()
		l.checkRecurrentPart(r, p)
		if r.Err() != nil {
			return r.Err()
		}
		// The part checked: its cell count, and the cell's position.
		if cells := binary.LittleEndian.Uint32(state[at:]); cells != 1 {
			return fmt.Errorf("llamacpp: sequence state at byte %d: a checkpoint of %d recurrent cells: %w", at, cells, backend.ErrBadState)
		}
		if pos := int32(binary.LittleEndian.Uint32(state[at+4:])); int(pos) != last {
			return fmt.Errorf("llamacpp: sequence state at byte %d: a checkpoint at position %d, restored at %d: %w", at+4, pos, last, backend.ErrBadState)
		}
	}
	return r.Finish()
}

func (l *stateLayout) checkAttention(r *backend.StateReader, p statePart, seen []uint64) {
	r.Expect("stream count", p.streams)
	filled := false
	for range p.streams {
		cells := r.U32("cell count")
		if r.Err() != nil || cells == 0 {
			continue
		}
		// One sequence lives in one stream: a write fills one.
		if filled {
			r.Fail("cells in two streams")
			return
		}
		filled = true
		if cells > p.cells {
			r.Fail("%d cells, a stream has %d", cells, p.cells)
			return
		}
		clear(seen)
		for range cells {
			r.Position(l.positions, seen)
			if n := r.U32("cell's sequence count"); r.Err() == nil && n != 1 {
				r.Fail("a cell of %d sequences, a write gives each one", n)
			}
			if id := r.U32("cell's sequence"); r.Err() == nil && id >= llamaMaxSeq {
				r.Fail("sequence id %d", int32(id))
			}
			if r.Err() != nil {
				return
			}
		}
		r.ExpectBool("value transposition", p.vTrans)
		r.Expect("layer count", p.nLayer)
		for i, y := range p.layers {
			r.Expect(fmt.Sprintf("layer %d key type", i), uint32(y.kType))
			if row := r.U64("key row size"); r.Err() == nil && row != y.kRow {
				r.Fail("layer %d key row size %d, this model's is %d", i, row, y.kRow)
			}
			r.Skip("keys", uint64(cells), y.kRow)
		}
		for i, y := range p.layers {
			r.Expect(fmt.Sprintf("layer %d value type", i), uint32(y.vType))
			if p.vTrans {
				r.Expect(fmt.Sprintf("layer %d value element size", i), y.vEl)
				r.Expect(fmt.Sprintf("layer %d value rows", i), y.vEmbd)
				r.Skip("values", uint64(cells)*uint64(y.vEmbd), uint64(y.vEl))
				continue
			}
			if row := r.U64("value row size"); r.Err() == nil && row != y.vRow {
				r.Fail("layer %d value row size %d, this model's is %d", i, row, y.vRow)
			}
			r.Skip("values", uint64(cells), y.vRow)
		}
	}
}

func (l *stateLayout) checkRecurrentPart(r *backend.StateReader, p statePart) {
	cells := r.U32("recurrent cell count")
	if r.Err() != nil {
		return
	}
	// A sequence's recurrent state is one cell; more than one trips an
	// assertion of llama.cpp's.
	if cells > 1 || cells > p.cells {
		r.Fail("%d recurrent cells, a sequence has one", cells)
		return
	}
	if cells == 1 {
		r.Position(l.positions, nil)
		if n := r.U32("cell's sequence count"); r.Err() == nil && n != 0 {
			r.Fail("a recurrent cell of %d sequences, a write gives none", n)
		}
	}
	r.Expect("state transposition", 0)
	r.Expect("layer count", p.nLayer)
	for i, y := range p.layers {
		if !y.hasK {
			continue
		}
		r.Expect(fmt.Sprintf("layer %d r type", i), uint32(y.kType))
		if row := r.U64("r row size"); r.Err() == nil && row != y.kRow {
			r.Fail("layer %d r row size %d, this model's is %d", i, row, y.kRow)
		}
		r.Skip("r states", uint64(cells), y.kRow)
	}
	for i, y := range p.layers {
		if !y.hasV {
			continue
		}
		r.Expect(fmt.Sprintf("layer %d s type", i), uint32(y.vType))
		if row := r.U64("s row size"); r.Err() == nil && row != y.vRow {
			r.Fail("layer %d s row size %d, this model's is %d", i, row, y.vRow)
		}
		r.Skip("s states", uint64(cells), y.vRow)
	}
}

// maxSize is the most bytes a state of one sequence of this layout can
// take: every cell of a stream, in every part. A stored state longer
// than this is refused before it is read.
func (l *stateLayout) maxSize() int64 {
	var n uint64
	for _, p := range l.parts {
		cells := uint64(p.cells)
		if p.recurrent {
			cells = 1
			n += 4 + 8 + 8 // count, the cell, transposition and layers
		} else {
			n += 4 + 4*uint64(p.streams) + 12*cells + 8
		}
		for _, y := range p.layers {
			if y.hasK {
				n += 12 + cells*y.kRow
			}
			switch {
			case !y.hasV:
			case p.vTrans:
				n += 12 + cells*uint64(y.vEmbd)*uint64(y.vEl)
			default:
				n += 12 + cells*y.vRow
			}
		}
	}
	if n > 1<<62 {
		return 1 << 62
	}
	return int64(n)
}

// errNoLayout is check's error for a context whose memory's layout
// state_layout.cpp could not read.
var errNoLayout = errors.New("llamacpp: this context's memory has no known state layout")
