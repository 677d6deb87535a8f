//go:build cgo

package inference

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/inferkit/inferkit/internal/llamacpp"
)

// Encoder contexts: how many pairs one batch may hold.
const encoderSequences = 64

// encoder is the llama.cpp context of an encoder model, which has no KV
// cache and no runner: Rank encodes on it under mu.
type encoder struct {
	mu    sync.Mutex
	ctx   *llamacpp.Context
	batch *llamacpp.Batch
}

func (c *encoder) close() {
	c.batch.Close()
	c.ctx.Close()
}

// isRanker reports whether the GGUF asks for rank pooling
// (<arch>.pooling_type 4): a reranker or classifier.
func isRanker(llm *llamacpp.Model) bool {
	arch, _ := llm.Meta("general.architecture")
	v, ok := llm.Meta(arch + ".pooling_type")
	return ok && v == "4"
}

// newEncoder makes the context of an encoder model whose pairs hold up to
// perSeq tokens.
func newEncoder(llm *llamacpp.Model, perSeq int, cfg Config) (*encoder, error) {
	n := max(cfg.Batch, perSeq)
	ctx, err := llamacpp.NewContext(llm, llamacpp.ContextParams{
		Context:   n,
		Batch:     n,
		Sequences: encoderSequences,
		Threads:   cfg.Threads,
		Rank:      true,
	})
	if err != nil {
		return nil, err
	}
	return &encoder{ctx: ctx, batch: llamacpp.NewBatch(ctx, ctx.BatchSize())}, nil
}

// Rank scores each of req's documents against its query with an encoder
// model. A pair longer than the model's context fails with
// ErrContextLength, a generative model with ErrInvalidRequest, before any
// work. Rank does not wait in the generation queue: the encoder's context
// serves one Rank call at a time.
func (e *Engine) Rank(ctx context.Context, req RankRequest) (res RankResult, err error) {
	if err := ctx.Err(); err != nil {
		return RankResult{}, err
	}
	err = e.use(req.Model, func(m *model) error {
		if m.encoder == nil {
			return fmt.Errorf("%w: model %q is not an encoder (reranker or classifier)", ErrInvalidRequest, req.Model)
		}
		if len(req.Documents) == 0 || len(req.Documents) > maxBranches {
			return fmt.Errorf("%w: %d documents, want 1 to %d", ErrInvalidRequest, len(req.Documents), maxBranches)
		}
		pairs, err := m.rankPairs(req)
		if err != nil {
			return err
		}
		scores, err := m.encoder.rank(ctx, pairs)
		if err != nil {
			return err
		}
		res.Scores = scores
		for _, p := range pairs {
			res.Usage.PromptTokens += len(p)
		}
		return nil
	})
	return res, err
}

// rankPairs tokenizes every (query, document) pair as llama.cpp's
// reranking does: BOS (BERT's [CLS]) where the vocabulary adds it, the
// query, EOS and SEP where it adds them, the document, EOS and SEP again.
func (m *model) rankPairs(req RankRequest) ([][]llamacpp.Token, error) {
	llm := m.llm
	var open, closing []llamacpp.Token
	if bos := llm.BOS(); llm.AddsBOS() && bos >= 0 {
		open = append(open, bos)
	}
	if eos := llm.EOS(); llm.AddsEOS() && eos >= 0 {
		closing = append(closing, eos)
	}
	if sep := llm.SEP(); llm.AddsSEP() && sep >= 0 {
		closing = append(closing, sep)
	}
	limit := min(m.info.ContextLength, m.encoder.batch.Cap())
	text := func(s string) ([]llamacpp.Token, error) {
		toks, err := llm.TokenizeSegments([]llamacpp.Segment{{Text: stripMarks(s), Data: true}}, false, limit)
		if errors.Is(err, llamacpp.ErrTooManyTokens) {
			return nil, fmt.Errorf("%w: a text of more than %d tokens", ErrContextLength, limit)
		}
		return toks, err
	}
	q, err := text(req.Query)
	if err != nil {
		return nil, err
	}
	pairs := make([][]llamacpp.Token, len(req.Documents))
	for i, doc := range req.Documents {
		d, err := text(doc)
		if err != nil {
			return nil, err
		}
		p := make([]llamacpp.Token, 0, len(open)+len(q)+len(d)+2*len(closing))
		p = append(append(append(append(append(p, open...), q...), closing...), d...), closing...)
		if len(p) > limit {
			return nil, fmt.Errorf("%w: query and document %d make %d tokens, the model holds %d", ErrContextLength, i, len(p), limit)
		}
		pairs[i] = p
	}
	return pairs, nil
}

// rank encodes the pairs, each on a sequence of its own, packing as many
// into one batch as its size and sequences allow, and returns each pair's
// first classifier output.
func (c *encoder) rank(ctx context.Context, pairs [][]llamacpp.Token) ([]float64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	scores := make([]float64, len(pairs))
	b := c.batch
	seq := make([]int, 1)
	for i := 0; i < len(pairs); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b.Clear()
		j := i
		for j < len(pairs) && j-i < encoderSequences && b.Len()+len(pairs[j]) <= b.Cap() {
			seq[0] = j - i
			for pos, t := range pairs[j] {
				if _, err := b.Add(t, pos, seq, true); err != nil {
					return nil, err
				}
			}
			j++
		}
		if err := c.ctx.Encode(b); err != nil {
			return nil, err
		}
		for k := i; k < j; k++ {
			out := c.ctx.SequenceScores(k - i)
			if len(out) == 0 {
				return nil, fmt.Errorf("inference: the encoder gave no score for sequence %d", k-i)
			}
			scores[k] = float64(out[0])
		}
		i = j
	}
	return scores, nil
}
