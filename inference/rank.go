package inference

import (
	"context"
	"errors"
	"fmt"

	"github.com/inferkit/inferkit/internal/backend"
)

// Encoder contexts: how many inputs (pairs, texts) one batch may hold.
const encoderSequences = 64

// encoder is the context of an encoder model: a reranker or classifier
// (rank pooling), or an embedding model (mean, cls or last pooling). It
// has no runner: Rank and Embed encode on it, one call at a time (sem,
// which a waiting call leaves when its context ends). Only llama.cpp runs
// encoders. open and closing are the tokens the model's vocabulary puts
// around a text (backend.EncoderModel.Specials).
type encoder struct {
	sem           chan struct{}
	ctx           backend.Encoder
	batch         backend.Batch
	pooling       backend.Pooling
	open, closing []backend.Token
}

func (c *encoder) close() {
	c.batch.Close()
	c.ctx.Close()
}

// lock takes the encoder for one call, or fails when ctx ends first.
func (c *encoder) lock(ctx context.Context) error {
	select {
	case c.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *encoder) unlock() { <-c.sem }

// newEncoder makes the context of an encoder model, pooled as its GGUF
// asks, whose inputs hold up to perSeq tokens. A decoder embedding model
// gets a KV cache of one batch, emptied before each (Context.Encode).
func newEncoder(llm backend.Model, pooling backend.Pooling, perSeq int, cfg Config) (*encoder, error) {
	em, ok := llm.(backend.EncoderModel)
	if !ok {
		return nil, fmt.Errorf("%w; they need llama.cpp", backend.Unsupported(llm.Backend(), "encoder models ("+pooling.String()+" pooling)"))
	}
	n := max(cfg.Batch, perSeq)
	ctx, err := em.NewEncoder(backend.ContextParams{
		Context:   n,
		Batch:     n,
		Sequences: encoderSequences,
		Threads:   cfg.Threads,
		Pooling:   pooling,
	})
	if errors.Is(err, backend.ErrUnsupported) {
		return nil, fmt.Errorf("%w; they need llama.cpp", err)
	}
	if err != nil {
		return nil, err
	}
	open, closing := em.Specials()
	return &encoder{sem: make(chan struct{}, 1), ctx: ctx, batch: ctx.NewBatch(ctx.BatchSize()), pooling: pooling, open: open, closing: closing}, nil
}

// encode encodes the inputs, each on a sequence of its own, packing as
// many into one batch as its size and sequences allow, and calls read
// with each input's index and its sequence in the batch just encoded.
// The caller holds the lock, and has checked that every input fits in a
// batch.
func (c *encoder) encode(ctx context.Context, inputs [][]backend.Token, read func(i, seq int) error) error {
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
			return fmt.Errorf("inference: an input of %d tokens, the encoder's batch holds %d", len(inputs[i]), b.Cap())
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

// specials returns the tokens that the model's vocabulary puts around a
// text, as llama.cpp's tokenizer adds them: BOS (BERT's [CLS]) where it
// adds it, then EOS and SEP where it adds them. The model is an encoder's.
func (m *model) specials() (open, closing []backend.Token) {
	return m.encoder.open, m.encoder.closing
}

// Rank scores each of req's documents against its query with an encoder
// model. A pair longer than the model's context fails with
// ErrContextLength, a generative model with ErrInvalidRequest, before any
// work. Rank does not wait in the generation queue: the encoder's context
// serves one Rank call at a time.
func (e *Engine) Rank(ctx context.Context, req RankRequest) (RankResult, error) {
	if err := ctx.Err(); err != nil {
		return RankResult{}, err
	}
	l, err := e.acquire(ctx, req.Model)
	if err != nil {
		return RankResult{}, err
	}
	defer l.release()
	m := l.m
	if m.encoder == nil || m.encoder.pooling != backend.PoolingRank {
		return RankResult{}, fmt.Errorf("%w: model %q is not a reranker or classifier", ErrInvalidRequest, req.Model)
	}
	if len(req.Documents) == 0 || len(req.Documents) > maxBranches {
		return RankResult{}, fmt.Errorf("%w: %d documents, want 1 to %d", ErrInvalidRequest, len(req.Documents), maxBranches)
	}
	pairs, err := m.rankPairs(req)
	if err != nil {
		return RankResult{}, err
	}
	scores, err := m.encoder.rank(ctx, pairs)
	if err != nil {
		return RankResult{}, err
	}
	res := RankResult{Scores: scores}
	for _, p := range pairs {
		res.Usage.PromptTokens += len(p)
	}
	return res, nil
}

// rankPairs tokenizes every (query, document) pair as llama.cpp's
// reranking does: BOS (BERT's [CLS]) where the vocabulary adds it, the
// query, EOS and SEP where it adds them, the document, EOS and SEP again.
func (m *model) rankPairs(req RankRequest) ([][]backend.Token, error) {
	llm := m.llm
	open, closing := m.specials()
	limit := min(m.info.ContextLength, m.encoder.batch.Cap())
	text := func(s string) ([]backend.Token, error) {
		toks, err := llm.TokenizeSegments([]backend.Segment{{Text: stripMarks(s), Data: true}}, false, limit)
		if errors.Is(err, backend.ErrTooManyTokens) {
			return nil, fmt.Errorf("%w: a text of more than %d tokens", ErrContextLength, limit)
		}
		return toks, err
	}
	q, err := text(req.Query)
	if err != nil {
		return nil, err
	}
	pairs := make([][]backend.Token, len(req.Documents))
	for i, doc := range req.Documents {
		d, err := text(doc)
		if err != nil {
			return nil, err
		}
		p := make([]backend.Token, 0, len(open)+len(q)+len(d)+2*len(closing))
		p = append(append(append(append(append(p, open...), q...), closing...), d...), closing...)
		if len(p) > limit {
			return nil, fmt.Errorf("%w: query and document %d make %d tokens, the model holds %d", ErrContextLength, i, len(p), limit)
		}
		pairs[i] = p
	}
	return pairs, nil
}

// rank encodes the pairs (see encode) and returns each pair's first
// classifier output.
func (c *encoder) rank(ctx context.Context, pairs [][]backend.Token) ([]float64, error) {
	if err := c.lock(ctx); err != nil {
		return nil, err
	}
	defer c.unlock()
	scores := make([]float64, len(pairs))
	err := c.encode(ctx, pairs, func(i, seq int) error {
		out := c.ctx.SequenceScores(seq)
		if len(out) == 0 {
			return fmt.Errorf("inference: the encoder gave no score for sequence %d", seq)
		}
		scores[i] = float64(out[0])
		return nil
	})
	if err != nil {
		return nil, err
	}
	return scores, nil
}
