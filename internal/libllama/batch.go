package libllama

/*
#include <stdlib.h>
#include "api.h"
*/
import "C"

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/inferkit/inferkit/internal/backend"
)

// Batch is the tokens of one Decode, each at a position in one or more
// sequences. Its arrays are allocated here, in C memory, as llama_batch
// lays them out; the library never allocates or frees them. It is not
// safe for concurrent use; its owner must call Close.
type Batch struct {
	c      C.struct_llama_batch
	mem    unsafe.Pointer // one allocation for every array below
	n      int
	cap    int
	nSeq   int
	nVocab int
	tokens []C.llama_token
	pos    []C.llama_pos
	nSeqID []C.int32_t
	seqIDs []*C.llama_seq_id
	seqs   []C.llama_seq_id // nSeq ids per entry, which seqIDs point into
	logits []C.int8_t
}

func newBatch(ctx *Context, size int) *Batch {
	size = max(size, 1)
	size = min(size, math.MaxInt32/max(ctx.nSeq, 1)/8)
	// Pointers first, for their alignment.
	ptrs := uintptr(size) * unsafe.Sizeof((*C.llama_seq_id)(nil))
	i32 := uintptr(size) * 4
	total := ptrs + 3*i32 + uintptr(size*ctx.nSeq)*4 + uintptr(size)
	mem := C.calloc(1, C.size_t(total))
	if mem == nil {
		panic("libllama: out of memory for a batch")
	}
	at := func(off uintptr) unsafe.Pointer { return unsafe.Add(mem, off) }
	b := &Batch{mem: mem, cap: size, nSeq: ctx.nSeq, nVocab: ctx.model.nVocab}
	b.seqIDs = unsafe.Slice((**C.llama_seq_id)(at(0)), size)
	b.tokens = unsafe.Slice((*C.llama_token)(at(ptrs)), size)
	b.pos = unsafe.Slice((*C.llama_pos)(at(ptrs+i32)), size)
	b.nSeqID = unsafe.Slice((*C.int32_t)(at(ptrs+2*i32)), size)
	b.seqs = unsafe.Slice((*C.llama_seq_id)(at(ptrs+3*i32)), size*ctx.nSeq)
	b.logits = unsafe.Slice((*C.int8_t)(at(ptrs+3*i32+uintptr(size*ctx.nSeq)*4)), size)
	for i := range size {
		b.seqIDs[i] = &b.seqs[i*ctx.nSeq]
	}
	b.c.token = &b.tokens[0]
	b.c.pos = &b.pos[0]
	b.c.n_seq_id = &b.nSeqID[0]
	b.c.seq_id = &b.seqIDs[0]
	b.c.logits = &b.logits[0]
	return b
}

// Add appends token t at position pos of the sequences seqs; logits asks
// for its output. It returns the token's index in the batch.
func (b *Batch) Add(t Token, pos int, seqs []int, logits bool) (int, error) {
	switch {
	case b.cap == 0:
		return 0, fmt.Errorf("libllama: token added to a closed batch")
	case b.n >= b.cap:
		return 0, fmt.Errorf("libllama: batch full at %d tokens", b.cap)
	case t < 0 || int(t) >= b.nVocab:
		return 0, fmt.Errorf("libllama: token %d outside the vocabulary of %d", t, b.nVocab)
	case pos < 0 || pos >= math.MaxInt32:
		return 0, fmt.Errorf("libllama: position %d", pos)
	case len(seqs) == 0 || len(seqs) > b.nSeq:
		return 0, fmt.Errorf("libllama: %d sequence ids for one token", len(seqs))
	}
	i := b.n
	for j, s := range seqs {
		if s < 0 || s >= b.nSeq {
			return 0, fmt.Errorf("libllama: sequence %d of %d", s, b.nSeq)
		}
		if slices.Contains(seqs[:j], s) {
			return 0, fmt.Errorf("libllama: sequence %d given twice for one token", s)
		}
		b.seqs[i*b.nSeq+j] = C.llama_seq_id(s)
	}
	b.tokens[i] = C.llama_token(t)
	b.pos[i] = C.llama_pos(pos)
	b.nSeqID[i] = C.int32_t(len(seqs))
	b.logits[i] = 0
	if logits {
		b.logits[i] = 1
	}
	b.n++
	return i, nil
}

// Len is the number of tokens in the batch.
func (b *Batch) Len() int { return b.n }

// Cap is the most tokens the batch holds.
func (b *Batch) Cap() int { return b.cap }

// Clear empties the batch.
func (b *Batch) Clear() { b.n = 0 }

// Close frees the batch.
func (b *Batch) Close() {
	if b.mem != nil {
		C.free(b.mem)
		b.mem = nil
		b.cap, b.n = 0, 0
		b.tokens, b.pos, b.nSeqID, b.seqIDs, b.seqs, b.logits = nil, nil, nil, nil, nil, nil
	}
}

var _ backend.Batch = (*Batch)(nil)
