package inference

import (
	"context"
	"errors"
	"fmt"

	"github.com/inferkit/inferkit/internal/backend"
)

// embedPlan is what RunEmbed needs of a PreparedEmbed beyond its request:
// the engine that prepared it and every input's tokens, specials
// included.
type embedPlan struct {
	engine *Engine
	inputs [][]backend.Token
}

// Embed returns one L2-normalised vector per input of req, computed by an
// embedding model: PrepareEmbed, then RunEmbed. It does not wait in the
// generation queue: the model's encoder serves one Embed or Rank call at
// a time, in batches of up to 64 inputs, and a call waiting for it
// leaves when ctx ends.
func (e *Engine) Embed(ctx context.Context, req EmbedRequest) (res EmbedResult, err error) {
	ctx, end := e.traceCall(ctx, opEmbed, req.Model)
	defer func() { end(res.Usage, err) }()
	l, err := e.acquire(context.Background(), req.Model)
	if err != nil {
		return EmbedResult{}, err
	}
	defer l.release()
	p, err := e.prepareEmbed(l.m, req)
	if err != nil {
		return EmbedResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return EmbedResult{}, err
	}
	return l.m.runEmbed(ctx, p)
}

// PrepareEmbed checks req and tokenizes its inputs, encoding nothing.
// Every field is checked here: a request that names a model that is not
// an embedding model, holds no input, more than MaxEmbedInputs, an empty
// one, a token id outside the vocabulary, more than MaxEmbedTokens in
// all, or asks for Dimensions outside 1 to the model's size fails with an
// error wrapping ErrInvalidRequest (a *FieldError naming the field, such
// as "Input[3]"); an input longer than the model's context fails with a
// *FieldError wrapping ErrContextLength. The cost is bounded whatever the
// request: tokenizing a text stops once it passes the context.
func (e *Engine) PrepareEmbed(req EmbedRequest) (*PreparedEmbed, error) {
	l, err := e.acquire(context.Background(), req.Model)
	if err != nil {
		return nil, err
	}
	defer l.release()
	return e.prepareEmbed(l.m, req)
}

// prepareEmbed is PrepareEmbed on m, which a lease holds.
func (e *Engine) prepareEmbed(m *model, req EmbedRequest) (*PreparedEmbed, error) {
	if m.remote != nil {
		return nil, remoteOnly(req.Model, "only chats")
	}
	inputs, n, err := m.embedInputs(req)
	if err != nil {
		return nil, err
	}
	return &PreparedEmbed{Request: req, InputTokens: n, plan: &embedPlan{engine: e, inputs: inputs}}, nil
}

// RunEmbed encodes a request that PrepareEmbed prepared, without
// tokenizing it again.
func (e *Engine) RunEmbed(ctx context.Context, p *PreparedEmbed) (res EmbedResult, err error) {
	if p == nil || p.plan == nil || p.plan.engine != e {
		return EmbedResult{}, fmt.Errorf("%w: the embedding request was not prepared by this engine", ErrInvalidRequest)
	}
	ctx, end := e.traceCall(ctx, opEmbed, p.Request.Model)
	defer func() { end(res.Usage, err) }()
	if err := ctx.Err(); err != nil {
		return EmbedResult{}, err
	}
	l, err := e.acquire(ctx, p.Request.Model)
	if err != nil {
		return EmbedResult{}, err
	}
	defer l.release()
	return l.m.runEmbed(ctx, p)
}

// runEmbed is RunEmbed on m, which a lease holds.
func (m *model) runEmbed(ctx context.Context, p *PreparedEmbed) (EmbedResult, error) {
	if !m.info.Embedding {
		return EmbedResult{}, fmt.Errorf("%w: model %q is not an embedding model", ErrInvalidRequest, p.Request.Model)
	}
	vecs, err := m.embed(ctx, p.plan.inputs, p.Request.Dimensions)
	if err != nil {
		return EmbedResult{}, err
	}
	return EmbedResult{Embeddings: vecs, Usage: Usage{PromptTokens: p.InputTokens}}, nil
}

// embedInputs checks req against the model and returns every input's
// tokens, wrapped in the vocabulary's specials, and their total.
func (m *model) embedInputs(req EmbedRequest) ([][]backend.Token, int, error) {
	if !m.info.Embedding {
		what := "a generative model"
		if m.encoder != nil {
			what = "a reranker or classifier (Engine.Rank)"
		}
		return nil, 0, fmt.Errorf("%w: model %q is %s, not an embedding model", ErrInvalidRequest, req.Model, what)
	}
	n := len(req.Input)
	if req.Tokens != nil {
		if req.Input != nil {
			return nil, 0, fieldError(Field("Input"), "set either texts or token arrays, not both")
		}
		n = len(req.Tokens)
	}
	switch {
	case n == 0:
		return nil, 0, fieldError(Field("Input"), "no input; want 1 to %d", MaxEmbedInputs)
	case n > MaxEmbedInputs:
		return nil, 0, fieldError(Field("Input"), "%d inputs, at most %d", n, MaxEmbedInputs)
	case req.Dimensions < 0 || req.Dimensions > m.info.Dimensions:
		return nil, 0, fieldError(Field("Dimensions"), "%d; this model's vectors have %d, so want 1 to %d", req.Dimensions, m.info.Dimensions, m.info.Dimensions)
	}
	llm := m.llm
	open, closing := m.specials()
	limit := min(m.info.ContextLength, m.encoder.Tokens())
	room := limit - len(open) - len(closing)
	tooLong := func(i int) error {
		return &FieldError{Path: Field("Input").At(i), Err: ErrContextLength,
			Reason: fmt.Sprintf("more than %d tokens; this model embeds at most %d an input, special tokens included", room, limit)}
	}
	inputs := make([][]backend.Token, n)
	total := 0
	for i := range n {
		field := Field("Input").At(i)
		var body []backend.Token
		if req.Tokens != nil {
			ids := req.Tokens[i]
			switch {
			case len(ids) == 0:
				return nil, 0, fieldError(field, "an empty token array")
			case len(ids) > room:
				return nil, 0, tooLong(i)
			}
			body = make([]backend.Token, len(ids))
			for j, id := range ids {
				if id < 0 || id >= llm.VocabSize() {
					return nil, 0, fieldError(field.At(j), "token %d is not in the model's vocabulary of %d tokens", id, llm.VocabSize())
				}
				body[j] = backend.Token(id)
			}
		} else {
			if req.Input[i] == "" {
				return nil, 0, fieldError(field, "an empty string")
			}
			var err error
			body, err = llm.TokenizeSegments([]backend.Segment{{Text: stripMarks(req.Input[i]), Data: true}}, false, max(room, 1))
			switch {
			case errors.Is(err, backend.ErrTooManyTokens) || (err == nil && len(body) > room):
				return nil, 0, tooLong(i)
			case err != nil:
				return nil, 0, err
			}
		}
		seq := make([]backend.Token, 0, len(open)+len(body)+len(closing))
		seq = append(append(append(seq, open...), body...), closing...)
		if len(seq) == 0 {
			return nil, 0, fieldError(field, "no tokens: the text is empty to this model's tokenizer")
		}
		total += len(seq)
		if total > MaxEmbedTokens {
			return nil, 0, fieldError(Field("Input"), "more than %d tokens in all, at most %d a request", MaxEmbedTokens, MaxEmbedTokens)
		}
		inputs[i] = seq
	}
	return inputs, total, nil
}

// embed encodes the inputs on m's encoder and returns each one's pooled
// vector, truncated to dims values when dims > 0, and L2-normalised.
func (m *model) embed(ctx context.Context, inputs [][]backend.Token, dims int) ([][]float32, error) {
	vecs, err := m.encoder.Embeddings(ctx, inputs)
	if err != nil {
		return nil, err
	}
	for i, v := range vecs {
		if dims > 0 && dims < len(v) {
			v = v[:dims:dims]
		}
		if !normalize(v) {
			return nil, fmt.Errorf("inference: the model gave a non-finite embedding for input %d", i)
		}
		vecs[i] = v
	}
	return vecs, nil
}
