package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/inferkit/inferkit/internal/backend"
)

// encoderSequences is how many inputs (pairs, texts) one encoder batch
// may hold.
const encoderSequences = 64

// Encoder is the context of an encoder model: a reranker or classifier
// (rank pooling), or an embedding model (mean, cls or last pooling). It
// has no queue: calls take turns, and one waiting leaves when its
// context ends. It is safe for concurrent use; whoever calls NewEncoder
// calls Close.
type Encoder struct {
	sem           chan struct{}
	ctx           backend.Encoder
	batch         backend.Batch
	pooling       backend.Pooling
	open, closing []backend.Token
}

// NewEncoder makes the context of an encoder model, pooled as its GGUF
// asks (pooling), whose batches hold tokens tokens. A decoder embedding
// model gets a KV cache of one batch, emptied before each
// (backend.Encoder.Encode). A backend that runs no encoders fails with an
// error wrapping backend.ErrUnsupported.
func NewEncoder(llm backend.Model, pooling backend.Pooling, tokens, threads int) (*Encoder, error) {
	em, ok := llm.(backend.EncoderModel)
	if !ok {
		return nil, fmt.Errorf("%w; they need llama.cpp", backend.Unsupported(llm.Backend(), "encoder models ("+pooling.String()+" pooling)"))
	}
	ctx, err := em.NewEncoder(backend.ContextParams{
		Context:   tokens,
		Batch:     tokens,
		Sequences: encoderSequences,
		Threads:   threads,
		Pooling:   pooling,
	})
	if errors.Is(err, backend.ErrUnsupported) {
		return nil, fmt.Errorf("%w; they need llama.cpp", err)
	}
	if err != nil {
		return nil, err
	}
	open, closing := em.Specials()
	return &Encoder{sem: make(chan struct{}, 1), ctx: ctx, batch: ctx.NewBatch(ctx.BatchSize()), pooling: pooling, open: open, closing: closing}, nil
}

// Close waits for the call at work, if any, and frees the context.
func (c *Encoder) Close() {
	c.sem <- struct{}{}
	c.batch.Close()
	c.ctx.Close()
}

// Pooling is how the encoder pools its outputs.
func (c *Encoder) Pooling() backend.Pooling { return c.pooling }

// Specials returns the tokens that the model's vocabulary puts around a
// text (backend.EncoderModel.Specials).
func (c *Encoder) Specials() (open, closing []backend.Token) { return c.open, c.closing }

// Tokens is the most tokens one input may hold: a batch's.
func (c *Encoder) Tokens() int { return c.batch.Cap() }

// lock takes the encoder for one call, or fails when ctx ends first.
func (c *Encoder) lock(ctx context.Context) error {
	select {
	case c.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Encoder) unlock() { <-c.sem }

// encode encodes the inputs, each on a sequence of its own, packing as
// many into one batch as its size and sequences allow, and calls read
// with each input's index and its sequence in the batch just encoded.
func (c *Encoder) encode(ctx context.Context, inputs [][]backend.Token, read func(i, seq int) error) error {
	if err := c.lock(ctx); err != nil {
		return err
	}
	defer c.unlock()
	b := c.batch
	seq := make([]int, 1)
	for i := 0; i < len(inputs); {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.Clear()
		j := i
		for j < len(inputs) && j-i < encoderSequences && b.Len()+len(inputs[j]) <= b.Cap() {
			seq[0] = j - i
			for pos, t := range inputs[j] {
				if _, err := b.Add(t, pos, seq, true); err != nil {
					return err
				}
			}
			j++
		}
		if j == i {
			return fmt.Errorf("runner: an input of %d tokens, the encoder's batch holds %d", len(inputs[i]), b.Cap())
		}
		if err := c.ctx.Encode(b); err != nil {
			return err
		}
		for k := i; k < j; k++ {
			if err := read(k, k-i); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

// Scores encodes the inputs of a reranker and returns each one's first
// classifier output.
func (c *Encoder) Scores(ctx context.Context, inputs [][]backend.Token) ([]float64, error) {
	scores := make([]float64, len(inputs))
	err := c.encode(ctx, inputs, func(i, seq int) error {
		out := c.ctx.SequenceScores(seq)
		if len(out) == 0 {
			return fmt.Errorf("runner: the encoder gave no score for sequence %d", seq)
		}
		scores[i] = float64(out[0])
		return nil
	})
	if err != nil {
		return nil, err
	}
	return scores, nil
}

// Embeddings encodes the inputs of an embedding model and returns each
// one's pooled vector, as the model gives it.
func (c *Encoder) Embeddings(ctx context.Context, inputs [][]backend.Token) ([][]float32, error) {
	out := make([][]float32, len(inputs))
	err := c.encode(ctx, inputs, func(i, seq int) error {
		v := c.ctx.SequenceEmbedding(seq)
		if len(v) == 0 {
			return fmt.Errorf("runner: the encoder gave no embedding for sequence %d", seq)
		}
		out[i] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
