package llamacpp

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Batch is a set of tokens to decode, each at a position in one or more
// sequences: token ids (NewBatch) or rows of input embeddings, such as an
// image's (NewEmbeddingBatch). It is not safe for concurrent use; its owner
// must call Close.
type Batch struct {
	c      C.struct_llama_batch
	n      int
	cap    int
	nSeq   int
	nVocab int
	tokens []C.llama_token
	embd   []float32 // rows of width, for an embedding batch
	width  int
	// grid holds the row and column positions of an M-RoPE embedding
	// batch's entries (nil otherwise), laid out into pos by Decode.
	grid   [][2]C.llama_pos
	pos    []C.llama_pos
	nSeqID []C.int32_t
	seqIDs []*C.llama_seq_id
	logits []C.int8_t
}

// NewBatch makes a batch for up to size tokens of a context with the given
// number of sequences.
func NewBatch(ctx *Context, size int) *Batch {
	c := C.llama_batch_init(C.int32_t(size), 0, C.int32_t(ctx.nSeq))
	return &Batch{
		c:      c,
		cap:    size,
		nSeq:   ctx.nSeq,
		nVocab: ctx.model.nVocab,
		tokens: unsafe.Slice(c.token, size),
		pos:    unsafe.Slice(c.pos, size),
		nSeqID: unsafe.Slice(c.n_seq_id, size),
		seqIDs: unsafe.Slice(c.seq_id, size),
		logits: unsafe.Slice(c.logits, size),
	}
}

// NewEmbeddingBatch makes a batch for up to size rows of the model's input
// embeddings (Projector.Tokenize's images), added with AddEmbedding or, on
// a model with M-RoPE positions, AddGridEmbedding.
func NewEmbeddingBatch(ctx *Context, size int) *Batch {
	width := int(C.llama_model_n_embd_inp(ctx.model.c))
	c := C.llama_batch_init(C.int32_t(size), C.int32_t(width), C.int32_t(ctx.nSeq))
	b := &Batch{
		c:      c,
		cap:    size,
		nSeq:   ctx.nSeq,
		embd:   unsafe.Slice((*float32)(unsafe.Pointer(c.embd)), size*width),
		width:  width,
		nSeqID: unsafe.Slice(c.n_seq_id, size),
		seqIDs: unsafe.Slice(c.seq_id, size),
		logits: unsafe.Slice(c.logits, size),
	}
	if ctx.model.MRoPE() {
		// Four positions an entry (time, row, column, unused), one
		// section after another. llama_batch_free frees this buffer.
		C.free(unsafe.Pointer(b.c.pos))
		b.c.pos = (*C.llama_pos)(C.calloc(C.size_t(4*size), C.size_t(unsafe.Sizeof(C.llama_pos(0)))))
		b.grid = make([][2]C.llama_pos, size)
	}
	b.pos = unsafe.Slice(b.c.pos, size)
	return b
}

// AddEmbedding appends one row of input embeddings at position pos of the
// sequences seqs; logits asks for its output. It returns the row's index in
// the batch. On an M-RoPE model the row takes pos in every section.
func (b *Batch) AddEmbedding(row []float32, pos int, seqs []int, logits bool) (int, error) {
	return b.addEmbedding(row, pos, pos, pos, seqs, logits)
}

// AddGridEmbedding appends the row of an image on an M-RoPE model whose
// cell is (y, x) in the image's grid: all of an image's rows share the
// time position pos, the image's first, and take pos+y and pos+x as their
// row and column positions.
func (b *Batch) AddGridEmbedding(row []float32, pos, y, x int, seqs []int) (int, error) {
	if b.grid == nil {
		return 0, fmt.Errorf("llamacpp: grid positions for a model without M-RoPE")
	}
	return b.addEmbedding(row, pos, pos+y, pos+x, seqs, false)
}

func (b *Batch) addEmbedding(row []float32, pos, y, x int, seqs []int, logits bool) (int, error) {
	switch {
	case b.embd == nil:
		return 0, fmt.Errorf("llamacpp: embeddings added to a token batch")
	case len(row) != b.width:
		return 0, fmt.Errorf("llamacpp: embedding of %d values, the model takes %d", len(row), b.width)
	}
	i, err := b.place(pos, seqs, logits)
	if err != nil {
		return 0, err
	}
	copy(b.embd[i*b.width:], row)
	if b.grid != nil {
		b.grid[i] = [2]C.llama_pos{C.llama_pos(y), C.llama_pos(x)}
	}
	return i, nil
}

// layout writes the M-RoPE sections after the time positions: llama.cpp
// reads section j of entry i at j*n + i, for the batch's n entries.
func (b *Batch) layout() {
	if b.grid == nil {
		return
	}
	all := unsafe.Slice(b.c.pos, 4*b.cap)
	for i := range b.n {
		all[b.n+i], all[2*b.n+i], all[3*b.n+i] = b.grid[i][0], b.grid[i][1], 0
	}
}

// Add appends token t at position pos of the sequences seqs; logits asks
// for its output. It returns the token's index in the batch, for Logits and
// Sampler.Sample.
func (b *Batch) Add(t Token, pos int, seqs []int, logits bool) (int, error) {
	switch {
	case b.tokens == nil:
		return 0, fmt.Errorf("llamacpp: token added to an embedding batch")
	case t < 0 || int(t) >= b.nVocab:
		return 0, fmt.Errorf("llamacpp: token %d outside the vocabulary of %d", t, b.nVocab)
	}
	i, err := b.place(pos, seqs, logits)
	if err == nil {
		b.tokens[i] = C.llama_token(t)
	}
	return i, err
}

// place appends an entry's position, sequences and output flag.
func (b *Batch) place(pos int, seqs []int, logits bool) (int, error) {
	switch {
	case b.n >= b.cap:
		return 0, fmt.Errorf("llamacpp: batch full at %d tokens", b.cap)
	case pos < 0:
		return 0, fmt.Errorf("llamacpp: position %d", pos)
	case len(seqs) == 0 || len(seqs) > b.nSeq:
		return 0, fmt.Errorf("llamacpp: %d sequence ids for one token", len(seqs))
	}
	i := b.n
	ids := unsafe.Slice(b.seqIDs[i], b.nSeq)
	for j, s := range seqs {
		if s < 0 || s >= b.nSeq {
			return 0, fmt.Errorf("llamacpp: sequence %d of %d", s, b.nSeq)
		}
		ids[j] = C.llama_seq_id(s)
	}
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
	if b.cap > 0 {
		C.llama_batch_free(b.c)
		b.cap, b.n = 0, 0
	}
}
