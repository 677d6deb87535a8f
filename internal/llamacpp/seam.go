package llamacpp

import "github.com/inferkit/inferkit/internal/backend"

// The package's types are the engine's llama.cpp backend.
var (
	_ backend.Model   = (*Model)(nil)
	_ backend.Context = (*Context)(nil)
	_ backend.Batch   = (*Batch)(nil)
	_ backend.Sampler = (*Sampler)(nil)
	_ backend.Grammar = (*Grammar)(nil)
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
