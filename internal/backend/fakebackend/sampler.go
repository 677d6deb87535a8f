package fakebackend

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/inferkit/inferkit/internal/backend"
)

// sampler picks tokens from a Context's logits.
type sampler struct {
	p   backend.SamplerParams
	ban map[backend.Token]bool
	rng *rand.Rand
}

func newSampler(p backend.SamplerParams) *sampler {
	s := &sampler{p: p, ban: map[backend.Token]bool{}, rng: rand.New(rand.NewPCG(uint64(p.Seed), 0x5eed))}
	for _, t := range p.Ban {
		s.ban[t] = true
	}
	return s
}

type cand struct {
	tok backend.Token
	l   float64
}

// Sample picks a token from the logits of batch index i of ctx's last
// Decode. The fake backend has no grammars: g is always nil. It returns
// -1 when there are no logits or every token is banned.
func (s *sampler) Sample(ctx backend.Context, i int, _ backend.Grammar) backend.Token {
	logits := ctx.Logits(i)
	cs := make([]cand, 0, len(logits))
	for t, l := range logits {
		if !s.ban[backend.Token(t)] && !math.IsInf(float64(l), -1) {
			cs = append(cs, cand{backend.Token(t), float64(l)})
		}
	}
	if len(cs) == 0 {
		return -1
	}
	// Highest first; ties to the lower token, so greedy is stable.
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(b.l, a.l) })
	if s.p.Temperature <= 0 {
		return cs[0].tok
	}
	if k := s.p.TopK; k > 0 && k < len(cs) {
		cs = cs[:k]
	}
	ps := make([]float64, len(cs))
	var sum float64
	for j, c := range cs {
		ps[j] = math.Exp((c.l - cs[0].l) / float64(s.p.Temperature))
		sum += ps[j]
	}
	n := len(cs)
	if s.p.MinP > 0 {
		for n > 1 && ps[n-1] < float64(s.p.MinP)*ps[0] {
			n--
		}
	}
	if tp := float64(s.p.TopP); tp > 0 && tp < 1 {
		acc := 0.0
		for j := range n {
			if acc += ps[j] / sum; acc >= tp {
				n = j + 1
				break
			}
		}
	}
	sum = 0
	for _, p := range ps[:n] {
		sum += p
	}
	x := s.rng.Float64() * sum
	for j, p := range ps[:n] {
		if x -= p; x < 0 {
			return cs[j].tok
		}
	}
	return cs[n-1].tok
}

// Close does nothing.
func (s *sampler) Close() {}
