//go:build cgo

package goengine

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/ollama/ollama/llama"
)

// Sampler picks tokens from a Context's logits as llama.cpp's chain of
// the same parameters does: bans, penalties, then greedy, or top-k, top-p,
// min-p, temperature and a seeded draw. It implements backend.Sampler and
// is not safe for concurrent use; its owner must call Close.
type Sampler struct {
	p       backend.SamplerParams
	nVocab  int
	rng     *rand.Rand
	ban     []backend.Token
	history []backend.Token // the last RepeatLastN tokens sampled
	cands   []candidate     // reused every step
}

type candidate struct {
	id    backend.Token
	logit float32
	p     float32
}

var _ backend.Sampler = (*Sampler)(nil)

func newSampler(m *Model, p backend.SamplerParams) (*Sampler, error) {
	if p.TopK < 0 || p.RepeatLastN < 0 {
		return nil, fmt.Errorf("goengine: top_k %d, repeat_last_n %d", p.TopK, p.RepeatLastN)
	}
	for _, t := range p.Ban {
		if !m.valid(t) {
			return nil, fmt.Errorf("goengine: banned token %d outside the vocabulary", t)
		}
	}
	return &Sampler{
		p:      p,
		nVocab: m.VocabSize(),
		rng:    rand.New(rand.NewPCG(uint64(p.Seed), 0x9e3779b97f4a7c15)),
		ban:    slices.Clone(p.Ban),
	}, nil
}

// Sample picks a token from the logits of batch index i of ctx's last
// Decode, under g when it is not nil, and accepts it: -1 when g admits
// none, or when the index has no logits.
func (s *Sampler) Sample(ctx backend.Context, i int, g backend.Grammar) backend.Token {
	logits := ctx.Logits(i)
	if len(logits) != s.nVocab {
		return -1
	}
	gr, _ := g.(*Grammar)
	if gr != nil && gr.g == nil {
		gr = nil
	}
	s.cands = s.cands[:0]
	for id, l := range logits {
		s.cands = append(s.cands, candidate{id: backend.Token(id), logit: l})
	}
	for _, t := range s.ban {
		s.cands[t].logit = float32(math.Inf(-1))
	}
	s.penalize()
	// A draw without the grammar is kept if the grammar admits it;
	// otherwise the grammar masks every candidate and a new draw is
	// made. Either way the token follows the masked distribution, and
	// the grammar is asked of one token in most steps.
	cands := s.cands
	if gr != nil && s.p.Temperature > 0 {
		cands = slices.Clone(cands) // pick reorders it
	}
	t := s.pick(cands, s.rng.Float64())
	if gr != nil && (t < 0 || !gr.admits(t, s.cands[t].logit)) {
		gr.apply(s.cands)
		t = s.pick(s.cands, s.rng.Float64())
	}
	if t < 0 {
		return -1
	}
	if gr != nil {
		gr.accept(t)
	}
	s.accept(t)
	return t
}

// penalize applies the repeat, frequency and presence penalties of the
// tokens in the history, as llama.cpp's penalties sampler does.
func (s *Sampler) penalize() {
	p := s.p
	if len(s.history) == 0 || (p.RepeatPenalty == 1 || p.RepeatPenalty == 0) && p.FrequencyPenalty == 0 && p.PresencePenalty == 0 {
		return
	}
	counts := map[backend.Token]int{}
	for _, t := range s.history {
		counts[t]++
	}
	for t, n := range counts {
		c := &s.cands[t]
		if p.RepeatPenalty != 0 && p.RepeatPenalty != 1 {
			if c.logit <= 0 {
				c.logit *= p.RepeatPenalty
			} else {
				c.logit /= p.RepeatPenalty
			}
		}
		c.logit -= float32(n)*p.FrequencyPenalty + p.PresencePenalty
	}
}

// pick chooses from cands with draw in [0, 1): the best at temperature 0,
// else after the truncations. It returns -1 when every logit is -Inf.
// Above temperature 0 it reorders cands.
func (s *Sampler) pick(cands []candidate, draw float64) backend.Token {
	best := -1
	for i, c := range cands {
		if !math.IsInf(float64(c.logit), -1) && !math.IsNaN(float64(c.logit)) && (best < 0 || c.logit > cands[best].logit) {
			best = i
		}
	}
	if best < 0 {
		return -1
	}
	p := s.p
	if p.Temperature <= 0 {
		return cands[best].id
	}
	cands = slices.DeleteFunc(cands, func(c candidate) bool {
		return math.IsInf(float64(c.logit), -1) || math.IsNaN(float64(c.logit))
	})
	slices.SortFunc(cands, func(a, b candidate) int { return cmp.Compare(b.logit, a.logit) })
	if p.TopK > 0 && p.TopK < len(cands) {
		cands = cands[:p.TopK]
	}
	softmax(cands, 1)
	if p.TopP > 0 && p.TopP < 1 {
		var sum float32
		for i, c := range cands {
			sum += c.p
			if sum >= p.TopP {
				cands = cands[:i+1]
				break
			}
		}
	}
	if p.MinP > 0 && len(cands) > 1 {
		floor := cands[0].p * p.MinP
		n := 1
		for n < len(cands) && cands[n].p >= floor {
			n++
		}
		cands = cands[:n]
	}
	softmax(cands, p.Temperature)
	var sum float64
	for _, c := range cands {
		sum += float64(c.p)
		if draw < sum {
			return c.id
		}
	}
	return cands[len(cands)-1].id
}

// softmax sets each candidate's probability from its logit over temp.
func softmax(cands []candidate, temp float32) {
	top := cands[0].logit
	var sum float64
	for i := range cands {
		e := math.Exp(float64((cands[i].logit - top) / temp))
		cands[i].p = float32(e)
		sum += e
	}
	for i := range cands {
		cands[i].p = float32(float64(cands[i].p) / sum)
	}
}

func (s *Sampler) accept(t backend.Token) {
	if s.p.RepeatLastN <= 0 {
		return
	}
	if len(s.history) == s.p.RepeatLastN {
		s.history = s.history[1:]
	}
	s.history = append(s.history, t)
}

// Close frees nothing: the sampler is Go memory.
func (s *Sampler) Close() {}

// Grammar is llama.cpp's grammar engine over a Model's vocabulary. It
// implements backend.Grammar; its owner must call Close.
type Grammar struct {
	g *llama.Grammar
}

var _ backend.Grammar = (*Grammar)(nil)

// vocabulary is the ids and pieces llama.NewGrammar takes, made once per
// model.
type vocabulary struct {
	once   sync.Once
	ids    []uint32
	pieces []string
}

func newGrammar(m *Model, gbnf string) (*Grammar, error) {
	m.grammarVocab.once.Do(func() {
		n := m.VocabSize()
		m.grammarVocab.ids = make([]uint32, n)
		for i := range n {
			m.grammarVocab.ids[i] = uint32(i)
		}
		// Control tokens have no piece: a grammar admits them only as the
		// end of generation, once it is complete.
		m.grammarVocab.pieces = m.pieces
	})
	g := llama.NewGrammar(gbnf, m.grammarVocab.ids, m.grammarVocab.pieces, m.eog)
	if g == nil {
		return nil, fmt.Errorf("goengine: the grammar does not parse")
	}
	return &Grammar{g: g}, nil
}

// admits reports whether the grammar takes t next.
func (g *Grammar) admits(t backend.Token, logit float32) bool {
	one := []llama.TokenData{{ID: t, Logit: logit}}
	g.g.Apply(one)
	return !math.IsInf(float64(one[0].Logit), -1)
}

// apply masks, in cands, the tokens the grammar does not take next.
func (g *Grammar) apply(cands []candidate) {
	tds := make([]llama.TokenData, 0, len(cands))
	for _, c := range cands {
		if !math.IsInf(float64(c.logit), -1) {
			tds = append(tds, llama.TokenData{ID: c.id, Logit: c.logit})
		}
	}
	g.g.Apply(tds)
	for _, td := range tds {
		cands[td.ID].logit = td.Logit
	}
}

func (g *Grammar) accept(t backend.Token) { g.g.Accept(t) }

// Close frees the grammar.
func (g *Grammar) Close() {
	if g != nil && g.g != nil {
		g.g.Free()
		g.g = nil
	}
}
