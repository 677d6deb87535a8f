package llamacpp

/*
#include "bridge.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/inferkit/inferkit/internal/backend"
)

// partialOnly is llama.cpp's LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY: a
// sequence state of the recurrent memory alone, without a hybrid model's
// attention cells.
const partialOnly = C.llama_state_seq_flags(C.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY)

// Checkpoints reports whether the context takes checkpoints of its
// sequences' recurrent state (backend.Checkpointer): on a recurrent or
// hybrid model (Mamba, Jamba) whose state layout is known.
func (c *Context) Checkpoints() bool {
	return c.layout != nil && c.layout.posPerEmbd <= 1 && !c.model.SharesKV() && c.layout.recurrentParts() > 0
}

// Checkpoint returns the recurrent state of seq as llama.cpp writes it
// with LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY: its conv and SSM states, and
// the position of the last token they have read; a hybrid model's
// attention cells stay out.
func (c *Context) Checkpoint(seq int) ([]byte, error) {
	switch {
	case !c.validSeq(seq):
		return nil, fmt.Errorf("llamacpp: sequence %d of %d", seq, c.nSeq)
	case !c.Checkpoints():
		return nil, backend.Unsupported("llamacpp", "checkpoints of a model without a recurrent state")
	}
	n := int(C.llama_state_seq_get_size_ext(c.c, C.llama_seq_id(seq), partialOnly))
	if n == 0 {
		return nil, fmt.Errorf("llamacpp: sequence %d has no recurrent state", seq)
	}
	buf := make([]byte, n)
	if got := int(C.llama_state_seq_get_data_ext(c.c, (*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(n), C.llama_seq_id(seq), partialOnly)); got != n {
		return nil, fmt.Errorf("llamacpp: sequence %d's recurrent state: %d bytes of %d", seq, got, n)
	}
	return buf, nil
}

// RestoreCheckpoint puts back the recurrent state of seq from a
// Checkpoint taken after n positions and cuts its attention cells (a
// hybrid model's) to n. The state is checked first, field by field as
// llama.cpp will read it: one of another shape, cut short, of more than
// the one cell a sequence has, or of a position other than n-1, is
// refused with an error wrapping backend.ErrBadState, and seq is left as
// it was; so is a seq that holds fewer than n positions. After another
// error seq is cleared.
func (c *Context) RestoreCheckpoint(seq, n int, state []byte) error {
	switch {
	case !c.validSeq(seq):
		return fmt.Errorf("llamacpp: sequence %d of %d", seq, c.nSeq)
	case !c.Checkpoints():
		return backend.Unsupported("llamacpp", "checkpoints of a model without a recurrent state")
	case n <= 0 || n > c.MaxPos(seq)+1 && c.layout.recurrentParts() < len(c.layout.parts):
		return fmt.Errorf("llamacpp: a checkpoint after %d tokens of a sequence that holds %d: %w", n, c.MaxPos(seq)+1, backend.ErrBadState)
	}
	if err := c.layout.checkRecurrent(state, n-1); err != nil {
		return err
	}
	if C.llama_state_seq_set_data_ext(c.c, (*C.uint8_t)(unsafe.Pointer(&state[0])), C.size_t(len(state)), C.llama_seq_id(seq), partialOnly) != C.size_t(len(state)) {
		C.llama_memory_seq_rm(c.mem, C.llama_seq_id(seq), -1, -1)
		return errors.New("llamacpp: llama.cpp refused the checkpoint")
	}
	// The recurrent state now ends at n-1, so the hybrid memory lets its
	// attention cells be cut there.
	if !bool(C.llama_memory_seq_rm(c.mem, C.llama_seq_id(seq), C.llama_pos(n), -1)) || c.MaxPos(seq) != n-1 {
		C.llama_memory_seq_rm(c.mem, C.llama_seq_id(seq), -1, -1)
		return fmt.Errorf("llamacpp: sequence %d did not cut back to its checkpoint at %d", seq, n)
	}
	return nil
}
