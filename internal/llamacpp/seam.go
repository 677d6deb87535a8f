package llamacpp

import "github.com/inferkit/inferkit/internal/backend"

// The package's types are the engine's llama.cpp backend.
var (
	_ backend.Model   = (*Model)(nil)
	_ backend.Context = (*Context)(nil)
	_ backend.Batch   = (*Batch)(nil)
	_ backend.Sampler = (*Sampler)(nil)
	_ backend.Grammar = (*Grammar)(nil)

	_ backend.ProjectorLoader  = (*Model)(nil)
	_ backend.Projector        = (*Projector)(nil)
	_ backend.EmbeddingContext = (*Context)(nil)
	_ backend.EmbeddingBatch   = (*Batch)(nil)
	_ backend.EncoderModel     = (*Model)(nil)
	_ backend.Encoder          = (*Context)(nil)
	_ backend.LogSumExper      = (*Context)(nil)
	_ backend.Checkpointer     = (*Context)(nil)
)

// Backend returns backend.LlamaCpp.
func (m *Model) Backend() string { return backend.LlamaCpp }

// NewContext creates a context over m (the package's NewContext).
func (m *Model) NewContext(p ContextParams) (backend.Context, error) {
	c, err := NewContext(m, p)
	if err != nil {
		return nil, err // not a nil *Context in a non-nil interface
	}
	return c, nil
}

// NewSampler builds a sampler chain for m (the package's NewSampler).
func (m *Model) NewSampler(p SamplerParams) (backend.Sampler, error) {
	s, err := NewSampler(m, p)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// NewGrammar parses gbnf, whose start rule is root, for m (the package's
// NewGrammar, which checks it first).
func (m *Model) NewGrammar(gbnf string) (backend.Grammar, error) {
	g, err := NewGrammar(m, gbnf)
	if err != nil {
		return nil, err
	}
	return g, nil
}

// LoadProjector loads the projector at path for m (the package's
// LoadProjector).
func (m *Model) LoadProjector(path string, threads int) (backend.Projector, error) {
	p, err := LoadProjector(path, m, threads)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// NewEmbeddingBatch makes a batch of up to n rows of input embeddings for
// c (the package's NewEmbeddingBatch).
func (c *Context) NewEmbeddingBatch(n int) backend.EmbeddingBatch { return NewEmbeddingBatch(c, n) }

// NewEncoder creates an encoder context over m, pooled as p.Pooling (the
// package's NewContext): its Encode refuses batches without pooling.
func (m *Model) NewEncoder(p ContextParams) (backend.Encoder, error) {
	c, err := NewContext(m, p)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Specials returns the tokens that m's vocabulary puts around a text, as
// llama.cpp's tokenizer adds them: BOS (BERT's [CLS]) where it adds it,
// then EOS and SEP where it adds them.
func (m *Model) Specials() (open, closing []Token) {
	return backend.LlamaSpecials(m.BOS(), m.EOS(), m.SEP(), m.AddsBOS(), m.AddsEOS(), m.AddsSEP())
}

// LogSumExp is the package's LogSumExp, in C, for backend.LogSumExp.
func (c *Context) LogSumExp(logits []float32) float64 { return LogSumExp(logits) }
