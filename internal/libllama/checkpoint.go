package libllama

/*
#include "api.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/inferkit/inferkit/internal/backend"
)

// recurrentLayout is what a checkpoint of a context's recurrent memory
// holds, as the library's llama_state_seq_get_data_ext writes it with
// LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY (llama_memory_recurrent::
// state_write): the magic and source sequence, one cell (a sequence's
// recurrent state is one cell) with its position, then each recurrent
// layer's conv row (r) and, after all of them, each one's SSM row (s),
// every row behind its type and size. The library trusts the state's
// cell count, which it reserves a batch for, so check reads every field
// before the library does.
//
// llama.h does not expose the recurrent memory's layers or row sizes.
// recurrentLayoutOf reads them from the state the library writes for an
// empty sequence, which has every header and no rows; the checkpoints
// the library writes later are checked against that too, so a layout
// read wrongly turns checkpoints off rather than admitting a state the
// library misreads.
type recurrentLayout struct {
	nLayer uint32
	rows   []recurrentRow // the r rows, then the s rows
	hybrid bool           // attention cells beside the recurrent state
}

// recurrentRow is one row of a recurrent state: its ggml type and bytes.
type recurrentRow struct {
	typ  uint32
	size uint64
}

// maxRecurrentRow bounds a row's bytes when the layout is read: no
// model's conv or SSM state of one layer comes near a gigabyte.
const maxRecurrentRow = 1 << 30

// recurrentLayoutOf derives the checkpoint layout of c, which must be
// empty, or says why c takes no checkpoints, in an error wrapping
// backend.ErrUnsupported.
func recurrentLayoutOf(c *Context, m *Model, p backend.ContextParams) (*recurrentLayout, error) {
	no := func(why string) error {
		return backend.Unsupported(backend.LibLlama, "checkpoints of the recurrent state "+why)
	}
	switch {
	case m.SharesKV():
		return nil, no("of a model without one")
	case p.Pooling != backend.PoolingNone:
		return nil, no("of an encoder's context")
	case c.mem == nil:
		return nil, no("of a context without memory")
	}
	arch, _ := m.Meta("general.architecture")
	// Per-layer embeddings add a third row to some layers, which an
	// empty state does not tell apart from the others.
	if _, ok := m.Meta(arch + ".ple.conv_kernel"); ok {
		return nil, no("of a model with " + arch + ".ple.conv_kernel, whose layout is not derived here")
	}
	n := int(C.ikl_llama_state_seq_get_size_ext(c.api, c.c, 0, C.IKL_STATE_SEQ_PARTIAL_ONLY))
	if n <= 0 || n > 1<<20 {
		return nil, no(fmt.Sprintf("of a model whose empty state takes %d bytes", n))
	}
	buf := make([]byte, n)
	if got := int(C.ikl_llama_state_seq_get_data_ext(c.api, c.c, (*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(n), 0, C.IKL_STATE_SEQ_PARTIAL_ONLY)); got != n {
		return nil, no(fmt.Sprintf("of a model whose empty state came out as %d bytes of %d", got, n))
	}
	r := backend.NewStateReader(backend.LibLlama, buf)
	r.Expect("magic", stateMagic)
	r.Expect("source sequence", 0)
	r.Expect("cell count", 0)
	r.Expect("state transposition", 0)
	l := &recurrentLayout{nLayer: r.U32("layer count"), hybrid: bool(C.ikl_llama_model_is_hybrid(m.api, m.c))}
	const record = 4 + 8 // a row's type and size
	if rest := len(buf) - r.Offset(); r.Err() == nil && (rest == 0 || rest%(2*record) != 0) {
		r.Fail("%d bytes of row headers, not pairs of r and s rows", rest)
	}
	for r.Err() == nil && r.Offset() < len(buf) {
		row := recurrentRow{typ: r.U32("row type"), size: r.U64("row size")}
		if r.Err() == nil && (row.typ > 255 || row.size == 0 || row.size > maxRecurrentRow) {
			r.Fail("a row of type %d and %d bytes", row.typ, row.size)
		}
		l.rows = append(l.rows, row)
	}
	if err := r.Finish(); err != nil {
		return nil, no(fmt.Sprintf("of a model whose empty state is not as v0.4.0 writes it (%v)", err))
	}
	if uint32(len(l.rows)/2) > l.nLayer {
		return nil, no(fmt.Sprintf("of a model with %d recurrent rows over %d layers", len(l.rows), l.nLayer))
	}
	return l, nil
}

// check reports whether state is exactly a checkpoint of layout l taken
// after n positions, field by field, with no byte more; an error wrapping
// backend.ErrBadState names the first field that is not.
func (l *recurrentLayout) check(state []byte, n int) error { return l.checkAt(state, n, 0) }

// checkAt is check, with n < 0 taking a checkpoint at any position below
// positions.
func (l *recurrentLayout) checkAt(state []byte, n int, positions uint32) error {
	r := backend.NewStateReader(backend.LibLlama, state)
	r.Expect("magic", stateMagic)
	if id := r.U32("source sequence"); r.Err() == nil && id >= maxSequences {
		r.Fail("source sequence %d", int32(id))
	}
	r.Expect("cell count", 1)
	switch pos := r.U32("position"); {
	case r.Err() != nil:
	case n < 0 && pos >= positions:
		r.Fail("a state at position %d, the context holds %d", int32(pos), positions)
	case n >= 0 && int64(pos) != int64(n)-1:
		r.Fail("a checkpoint at position %d, want %d", int32(pos), n-1)
	}
	r.Expect("cell's sequence count", 0)
	r.Expect("state transposition", 0)
	r.Expect("layer count", l.nLayer)
	for i, row := range l.rows {
		r.Expect(fmt.Sprintf("row %d type", i), row.typ)
		r.Expect64(fmt.Sprintf("row %d size", i), row.size)
		r.Skip(fmt.Sprintf("row %d", i), 1, row.size)
	}
	return r.Finish()
}

// wholeRecurrent is the stateChecker of a recurrent model without
// attention cells (Mamba): a sequence's whole state is its recurrent
// memory's, written as a checkpoint is, at any of the context's
// positions.
type wholeRecurrent struct {
	l         *recurrentLayout
	positions uint32
}

func (w wholeRecurrent) check(state []byte) error { return w.l.checkAt(state, -1, w.positions) }
func (w wholeRecurrent) maxSize() int64           { return int64(w.l.size()) }

// size is the bytes of a checkpoint of layout l.
func (l *recurrentLayout) size() int {
	n := 7 * 4
	for _, row := range l.rows {
		n += 12 + int(row.size)
	}
	return n
}

// Checkpoints reports whether the context takes checkpoints of its
// sequences' recurrent state (backend.Checkpointer): on a recurrent or
// hybrid model (Mamba, Jamba, Qwen3.5) whose checkpoint layout was read
// at NewContext.
func (c *Context) Checkpoints() bool { return c.recurrent != nil }

// Checkpoint returns the recurrent state of seq as the library writes it
// with LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY: its conv and SSM rows and the
// position of the last token they have read; a hybrid model's attention
// cells stay out. A state that the layout read at NewContext does not
// describe turns checkpoints off, with an error that says so.
func (c *Context) Checkpoint(seq int) ([]byte, error) {
	switch {
	case !c.validSeq(seq):
		return nil, fmt.Errorf("libllama: sequence %d of %d", seq, c.nSeq)
	case c.recurrent == nil:
		return nil, c.noRecurrent
	case c.pending[seq]:
		return nil, c.cutBack(seq, "checkpoints")
	}
	n := c.MaxPos(seq) + 1
	if n <= 0 {
		return nil, fmt.Errorf("libllama: sequence %d holds no recurrent state", seq)
	}
	size := c.recurrent.size()
	if got := int(C.ikl_llama_state_seq_get_size_ext(c.api, c.c, C.llama_seq_id(seq), C.IKL_STATE_SEQ_PARTIAL_ONLY)); got != size {
		return nil, c.checkpointsOff(fmt.Errorf("a checkpoint of %d bytes, the layout's are %d", got, size))
	}
	buf := make([]byte, size)
	if got := int(C.ikl_llama_state_seq_get_data_ext(c.api, c.c, (*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(size), C.llama_seq_id(seq), C.IKL_STATE_SEQ_PARTIAL_ONLY)); got != size {
		return nil, fmt.Errorf("libllama: sequence %d's recurrent state: %d bytes of %d", seq, got, size)
	}
	if err := c.recurrent.check(buf, n); err != nil {
		return nil, c.checkpointsOff(err)
	}
	return buf, nil
}

// checkpointsOff turns checkpoints off on c after the library wrote one
// that the layout read for its model does not describe (why), and
// returns the error, wrapping backend.ErrUnsupported, that Checkpoint
// gives from then on. The runner asks Checkpoints before each use.
func (c *Context) checkpointsOff(why error) error {
	if _, ok := c.states.(wholeRecurrent); ok {
		c.statesOff(why) // the same layout
	}
	c.recurrent = nil
	c.noRecurrent = fmt.Errorf("%w: the library writes another layout than the one read for this model (%v)",
		backend.Unsupported(backend.LibLlama, "checkpoints of the recurrent state"), why)
	return c.noRecurrent
}

// RestoreCheckpoint puts back the recurrent state of seq from a
// Checkpoint taken after n positions and cuts its attention cells (a
// hybrid model's) to n. The state is checked first, field by field as
// the library will read it (recurrentLayout.check): one of another
// shape, cut short, longer, or of a position other than n-1, is refused
// with an error wrapping backend.ErrBadState and seq is left as it was;
// so is a hybrid model's seq that holds fewer than n positions. After
// another error seq is cleared.
func (c *Context) RestoreCheckpoint(seq, n int, state []byte) error {
	switch {
	case !c.validSeq(seq):
		return fmt.Errorf("libllama: sequence %d of %d", seq, c.nSeq)
	case c.recurrent == nil:
		return c.noRecurrent
	case n <= 0 || n > c.MaxPos(seq)+1 && c.recurrent.hybrid:
		return fmt.Errorf("libllama: a checkpoint after %d tokens of a sequence that holds %d: %w", n, c.MaxPos(seq)+1, backend.ErrBadState)
	}
	if err := c.recurrent.check(state, n); err != nil {
		return err
	}
	c.stale(seq)
	if C.ikl_llama_state_seq_set_data_ext(c.api, c.c, (*C.uint8_t)(unsafe.Pointer(&state[0])), C.size_t(len(state)), C.llama_seq_id(seq), C.IKL_STATE_SEQ_PARTIAL_ONLY) != C.size_t(len(state)) {
		c.ClearSequence(seq)
		return errors.New("libllama: the library refused the checkpoint")
	}
	// The recurrent state now ends at n-1, so the hybrid memory lets its
	// attention cells be cut there.
	if !c.RemoveTokens(seq, n, -1) || c.MaxPos(seq) != n-1 {
		c.ClearSequence(seq)
		return fmt.Errorf("libllama: sequence %d did not cut back to its checkpoint at %d", seq, n)
	}
	return nil
}
