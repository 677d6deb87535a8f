package inference

import (
	"context"
	"errors"
	"fmt"

	"github.com/inferkit/inferkit/internal/backend"
)

// specials returns the tokens that the model's vocabulary puts around a
// text, as llama.cpp's tokenizer adds them: BOS (BERT's [CLS]) where it
// adds it, then EOS and SEP where it adds them. The model is an encoder's.
func (m *model) specials() (open, closing []backend.Token) {
	return m.encoder.Specials()
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
	ctx, end := e.traceCall(ctx, opRank, req.Model)
	defer func() { end(res.Usage, err) }()
	l, err := e.acquire(ctx, req.Model)
	if err != nil {
		return RankResult{}, err
	}
	defer l.release()
	m := l.m
	if m.encoder == nil || m.encoder.Pooling() != backend.PoolingRank {
		return RankResult{}, fmt.Errorf("%w: model %q is not a reranker or classifier", ErrInvalidRequest, req.Model)
	}
	if len(req.Documents) == 0 || len(req.Documents) > maxBranches {
		return RankResult{}, fmt.Errorf("%w: %d documents, want 1 to %d", ErrInvalidRequest, len(req.Documents), maxBranches)
	}
	pairs, err := m.rankPairs(req)
	if err != nil {
		return RankResult{}, err
	}
	scores, err := m.encoder.Scores(ctx, pairs)
	if err != nil {
		return RankResult{}, err
	}
	res = RankResult{Scores: scores}
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
	limit := min(m.info.ContextLength, m.encoder.Tokens())
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
