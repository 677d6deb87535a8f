package libllama

/*
#include <stdlib.h>
#include "api.h"
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/grammar"
)

// Sampler picks the next token from a context's logits. It is not safe
// for concurrent use; its owner must call Close.
type Sampler struct {
	api    *C.struct_ikl_api
	c      *C.struct_llama_sampler
	buf    *C.llama_token_data // nVocab candidates, reused every step
	nVocab int
	ban    *C.llama_token // tokens never sampled, or nil
	nBan   int
}

func finite(fs ...float32) bool {
	for _, f := range fs {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return false
		}
	}
	return true
}

// NewSampler builds the chain: penalties, then greedy, or top-k, top-p,
// min-p, temperature and a seeded draw. Banned tokens are masked before
// the chain (and any grammar) sees the candidates.
func (m *Model) newSampler(p backend.SamplerParams) (*Sampler, error) {
	if p.TopK < 0 || p.RepeatLastN < 0 || p.TopK > math.MaxInt32 || p.RepeatLastN > math.MaxInt32 {
		return nil, fmt.Errorf("libllama: top_k %d, repeat_last_n %d", p.TopK, p.RepeatLastN)
	}
	if !finite(p.Temperature, p.TopP, p.MinP, p.RepeatPenalty, p.FrequencyPenalty, p.PresencePenalty) || p.RepeatPenalty < 0 {
		return nil, fmt.Errorf("libllama: sampler parameters %+v", p)
	}
	for _, t := range p.Ban {
		if !m.valid(t) {
			return nil, fmt.Errorf("libllama: banned token %d outside the vocabulary", t)
		}
	}
	api := m.api
	chain := C.ikl_llama_sampler_chain_init(api, C.struct_llama_sampler_chain_params{no_perf: true})
	add := func(s *C.struct_llama_sampler) { C.ikl_llama_sampler_chain_add(api, chain, s) }
	if p.RepeatPenalty != 1 && p.RepeatPenalty != 0 || p.FrequencyPenalty != 0 || p.PresencePenalty != 0 {
		rp := p.RepeatPenalty
		if rp == 0 {
			rp = 1
		}
		add(C.ikl_llama_sampler_init_penalties(api, C.int32_t(m.nVocab), C.int32_t(p.RepeatLastN), C.float(rp), C.float(p.FrequencyPenalty), C.float(p.PresencePenalty)))
	}
	if p.Temperature <= 0 {
		add(C.ikl_llama_sampler_init_greedy(api))
	} else {
		if p.TopK > 0 {
			add(C.ikl_llama_sampler_init_top_k(api, C.int32_t(p.TopK)))
		}
		if p.TopP > 0 && p.TopP < 1 {
			add(C.ikl_llama_sampler_init_top_p(api, C.float(p.TopP), 1))
		}
		if p.MinP > 0 {
			add(C.ikl_llama_sampler_init_min_p(api, C.float(p.MinP), 1))
		}
		add(C.ikl_llama_sampler_init_temp(api, C.float(p.Temperature)))
		add(C.ikl_llama_sampler_init_dist(api, C.uint32_t(p.Seed)))
	}
	s := &Sampler{api: api, c: chain, nVocab: m.nVocab, nBan: len(p.Ban)}
	s.buf = (*C.llama_token_data)(C.malloc(C.size_t(m.nVocab) * C.size_t(unsafe.Sizeof(C.llama_token_data{}))))
	if len(p.Ban) > 0 {
		s.ban = (*C.llama_token)(C.malloc(C.size_t(len(p.Ban)) * C.size_t(unsafe.Sizeof(C.llama_token(0)))))
		for i, t := range p.Ban {
			unsafe.Slice(s.ban, len(p.Ban))[i] = C.llama_token(t)
		}
	}
	return s, nil
}

// Sample picks a token from the logits of batch index i of ctx's last
// Decode, under g when it is not nil, and accepts it. It returns -1 when
// g admits no token, or i asked for no logits. ctx and g must be this
// package's: another backend's is a programming error, and panics.
func (s *Sampler) Sample(ctx backend.Context, i int, g backend.Grammar) Token {
	c, ok := ctx.(*Context)
	if !ok || c == nil || c.c == nil {
		panic(fmt.Sprintf("libllama: Sample on a %T, not an open libllama context", ctx))
	}
	if c.model.nVocab != s.nVocab {
		panic("libllama: Sample on a context of another model")
	}
	var gc *C.struct_llama_sampler
	if g != nil {
		gr, ok := g.(*Grammar)
		if !ok {
			panic(fmt.Sprintf("libllama: Sample under a %T, not a libllama grammar", g))
		}
		if gr != nil {
			gc = gr.c
		}
	}
	if i < 0 || i >= len(c.outputs) || !c.outputs[i] {
		return -1
	}
	return Token(C.ikl_sample(s.api, s.c, gc, c.c, C.int32_t(i), s.buf, C.int32_t(s.nVocab), s.ban, C.int32_t(s.nBan)))
}

// Close frees the sampler.
func (s *Sampler) Close() {
	if s.c != nil {
		C.ikl_llama_sampler_free(s.api, s.c)
		C.free(unsafe.Pointer(s.buf))
		C.free(unsafe.Pointer(s.ban))
		s.c, s.buf, s.ban = nil, nil, nil
	}
}

// Grammar constrains sampling to the sentences of a GBNF grammar; one
// Grammar serves one generation. It is not safe for concurrent use; its
// owner must call Close.
type Grammar struct {
	api *C.struct_ikl_api
	c   *C.struct_llama_sampler
}

// newGrammar parses gbnf, whose start rule is root, after grammar.Check
// has found it one the library's parser and matcher handle in bounded
// time and memory (the compiled-in backend's checks: the two parsers
// are the same code).
func (m *Model) newGrammar(gbnf string) (*Grammar, error) {
	if err := grammar.Check(gbnf); err != nil {
		return nil, err
	}
	cg := C.CString(gbnf)
	defer C.free(unsafe.Pointer(cg))
	root := C.CString("root")
	defer C.free(unsafe.Pointer(root))
	g := C.ikl_llama_sampler_init_grammar(m.api, m.vocab, cg, root)
	if g == nil {
		return nil, fmt.Errorf("%w: llama.cpp cannot parse it", grammar.ErrInvalid)
	}
	return &Grammar{api: m.api, c: g}, nil
}

// Close frees the grammar.
func (g *Grammar) Close() {
	if g != nil && g.c != nil {
		C.ikl_llama_sampler_free(g.api, g.c)
		g.c = nil
	}
}
