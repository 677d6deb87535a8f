package llamacpp

/*
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
// embeddings (Projector.Tokenize's images), added with AddEmbedding.
func NewEmbeddingBatch(ctx *Context, size int) *Batch {
	width := int(C.llama_model_n_embd_inp(ctx.model.c))
	c := C.llama_batch_init(C.int32_t(size), C.int32_t(width), C.int32_t(ctx.nSeq))
	return &Batch{
		c:      c,
		cap:    size,
		nSeq:   ctx.nSeq,
		embd:   unsafe.Slice((*float32)(unsafe.Pointer(c.embd)), size*width),
		width:  width,
		pos:    unsafe.Slice(c.pos, size),
		nSeqID: unsafe.Slice(c.n_seq_id, size),
		seqIDs: unsafe.Slice(c.seq_id, size),
		logits: unsafe.Slice(c.logits, size),
	}
}

// AddEmbedding appends one row of input embeddings at position pos of the
// sequences seqs; logits asks for its output. It returns the row's index in
// the batch.
func (b *Batch) AddEmbedding(row []float32, pos int, seqs []int, logits bool) (int, error) {
	switch {
	case b.embd == nil:
		return 0, fmt.Errorf("llamacpp: embeddings added to a token batch")
	case len(row) != b.width:
		return 0, fmt.Errorf("llamacpp: embedding of %d values, the model takes %d", len(row), b.width)
	}
	i, err := b.place(pos, seqs, logits)
	if err == nil {
		copy(b.embd[i*b.width:], row)
	}
	return i, err
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
