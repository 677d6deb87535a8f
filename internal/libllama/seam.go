package libllama

import "github.com/inferkit/inferkit/internal/backend"

// The package's types are the engine's libllama backend.
var (
	_ backend.Model        = (*Model)(nil)
	_ backend.Context      = (*Context)(nil)
	_ backend.Batch        = (*Batch)(nil)
	_ backend.Sampler      = (*Sampler)(nil)
	_ backend.Grammar      = (*Grammar)(nil)
	_ backend.EncoderModel = (*Model)(nil)
	_ backend.Encoder      = (*Context)(nil)
	_ backend.LogSumExper  = (*Context)(nil)
	_ backend.Checkpointer = (*Context)(nil)
)

// NewContext creates a context over m.
func (m *Model) NewContext(p backend.ContextParams) (backend.Context, error) {
	c, err := m.newContext(p)
	if err != nil {
		return nil, err // not a nil *Context in a non-nil interface
	}
	return c, nil
}

// NewEncoder creates an encoder context over m, pooled as p.Pooling.
func (m *Model) NewEncoder(p backend.ContextParams) (backend.Encoder, error) {
	c, err := m.newContext(p)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// NewSampler builds a sampler chain for m.
func (m *Model) NewSampler(p backend.SamplerParams) (backend.Sampler, error) {
	s, err := m.newSampler(p)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// NewGrammar parses gbnf, whose start rule is root, for m.
func (m *Model) NewGrammar(gbnf string) (backend.Grammar, error) {
	g, err := m.newGrammar(gbnf)
	if err != nil {
		return nil, err
	}
	return g, nil
}

// Specials returns the tokens that m's vocabulary puts around a text:
// BOS where it adds it, then EOS and SEP where it adds them.
func (m *Model) Specials() (open, closing []Token) {
	return backend.LlamaSpecials(m.BOS(), m.EOS(), m.SEP(), m.AddsBOS(), m.AddsEOS(), m.AddsSEP())
}
