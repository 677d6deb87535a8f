package llamacpp

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/inferkit/inferkit/internal/backend"
)

// SamplerParams configures a sampler chain (backend.SamplerParams).
type SamplerParams = backend.SamplerParams

// Sampler picks the next token from a context's logits. It is not safe for
// concurrent use; its owner must call Close.
type Sampler struct {
	c      *C.struct_llama_sampler
	buf    *C.llama_token_data // n_vocab candidates, reused every step
	nVocab int
	ban    *C.llama_token // tokens never sampled, or nil
	nBan   int
}

// NewSampler builds the chain for model m: penalties, then greedy, or
// top-k, top-p, min-p, temperature and a seeded draw. Banned tokens are
// masked before the chain (and any grammar) sees the candidates.
func NewSampler(m *Model, p SamplerParams) (*Sampler, error) {
	if p.TopK < 0 || p.RepeatLastN < 0 {
		return nil, fmt.Errorf("llamacpp: top_k %d, repeat_last_n %d", p.TopK, p.RepeatLastN)
	}
	for _, t := range p.Ban {
		if !m.valid(t) {
			return nil, fmt.Errorf("llamacpp: banned token %d outside the vocabulary", t)
		}
	}
	chain := C.llama_sampler_chain_init(C.llama_sampler_chain_default_params())
	add := func(s *C.struct_llama_sampler) { C.llama_sampler_chain_add(chain, s) }
	if p.RepeatPenalty != 1 && p.RepeatPenalty != 0 || p.FrequencyPenalty != 0 || p.PresencePenalty != 0 {
		rp := p.RepeatPenalty
		if rp == 0 {
			rp = 1
		}
		add(C.llama_sampler_init_penalties(C.int32_t(p.RepeatLastN), C.float(rp), C.float(p.FrequencyPenalty), C.float(p.PresencePenalty)))
	}
	if p.Temperature <= 0 {
		add(C.llama_sampler_init_greedy())
		return newSampler(m, chain, p.Ban), nil
	}
	if p.TopK > 0 {
		add(C.llama_sampler_init_top_k(C.int32_t(p.TopK)))
	}
	if p.TopP > 0 && p.TopP < 1 {
		add(C.llama_sampler_init_top_p(C.float(p.TopP), 1))
	}
	if p.MinP > 0 {
		add(C.llama_sampler_init_min_p(C.float(p.MinP), 1))
	}
	add(C.llama_sampler_init_temp(C.float(p.Temperature)))
	add(C.llama_sampler_init_dist(C.uint32_t(p.Seed)))
	return newSampler(m, chain, p.Ban), nil
}

func newSampler(m *Model, chain *C.struct_llama_sampler, ban []Token) *Sampler {
	s := &Sampler{c: chain, nVocab: m.nVocab, nBan: len(ban)}
	s.buf = (*C.llama_token_data)(C.malloc(C.size_t(m.nVocab) * C.size_t(unsafe.Sizeof(C.llama_token_data{}))))
	if len(ban) > 0 {
		s.ban = (*C.llama_token)(C.malloc(C.size_t(len(ban)) * C.size_t(unsafe.Sizeof(C.llama_token(0)))))
		for i, t := range ban {
			unsafe.Slice(s.ban, len(ban))[i] = C.llama_token(t)
		}
	}
	return s
}

// Sample picks a token from the logits of batch index i of the last Decode
// on ctx, within grammar g when g is not nil (a nil *Grammar too), and
// records it for the penalties and the grammar. It returns -1 when g
// admits no token (a grammar that needs text no token writes, or whose
// only way on is a banned token). ctx and g must be this package's: one
// of another backend is a programming error, and panics.
func (s *Sampler) Sample(ctx backend.Context, i int, g backend.Grammar) Token {
	c, ok := ctx.(*Context)
	if !ok || c == nil {
		panic(fmt.Sprintf("llamacpp: Sample on a %T, not a llama.cpp context", ctx))
	}
	var gc *C.struct_llama_sampler
	if g != nil {
		gr, ok := g.(*Grammar)
		if !ok {
			panic(fmt.Sprintf("llamacpp: Sample under a %T, not a llama.cpp grammar", g))
		}
		if gr != nil {
			gc = gr.c
		}
	}
	return Token(C.inferkit_sample(s.c, gc, c.c, C.int32_t(i), s.buf, C.int32_t(s.nVocab), s.ban, C.int32_t(s.nBan)))
}

// Accept records t (a prompt token, say) for the penalties.
func (s *Sampler) Accept(t Token) { C.llama_sampler_accept(s.c, C.llama_token(t)) }

// Close frees the sampler.
func (s *Sampler) Close() {
	if s.c != nil {
		C.llama_sampler_free(s.c)
		C.free(unsafe.Pointer(s.buf))
		C.free(unsafe.Pointer(s.ban))
		s.c, s.buf, s.ban = nil, nil, nil
	}
}
