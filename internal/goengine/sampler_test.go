//go:build cgo

package goengine_test

import (
	"math"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
)

// fixedLogits is a context whose every batch index has the same logits:
// all that Sample reads of a context.
type fixedLogits struct {
	backend.Context
	logits []float32
}

func (f fixedLogits) Logits(int) []float32 { return f.logits }

// TestSampler: greedy takes the best token; a ban, the penalties and the
// grammar steer it away; a seeded draw is the same for the same seed and
// follows the temperature.
func TestSampler(t *testing.T) {
	m := load(t, inferencetest.Options{Arch: "qwen3"})
	n := m.VocabSize()
	logits := make([]float32, n)
	a, b := backend.Token('a'), backend.Token('b')
	logits[a], logits[b] = 10, 9
	ctx := fixedLogits{logits: logits}
	sample := func(p backend.SamplerParams, g backend.Grammar, steps int) []backend.Token {
		t.Helper()
		s, err := m.NewSampler(p)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var out []backend.Token
		for range steps {
			out = append(out, s.Sample(ctx, 0, g))
		}
		return out
	}
	if got := sample(backend.SamplerParams{}, nil, 1)[0]; got != a {
		t.Errorf("greedy: %d, want %d", got, a)
	}
	if got := sample(backend.SamplerParams{Ban: []backend.Token{a}}, nil, 1)[0]; got != b {
		t.Errorf("a banned: %d, want %d", got, b)
	}
	// A presence penalty of 2 takes a below b once a has been sampled;
	// then b is penalised too, and a comes back.
	if got := sample(backend.SamplerParams{RepeatLastN: 64, PresencePenalty: 2}, nil, 3); got[0] != a || got[1] != b || got[2] != a {
		t.Errorf("presence penalty: %v, want a, b, a", got)
	}
	if got := sample(backend.SamplerParams{RepeatLastN: 64, RepeatPenalty: 1.5}, nil, 2); got[1] != b {
		t.Errorf("repeat penalty: %v, want b second", got)
	}
	g, err := m.NewGrammar(`root ::= "b" "a"`)
	if err != nil {
		t.Fatal(err)
	}
	if got := sample(backend.SamplerParams{}, g, 2); got[0] != b || got[1] != a {
		t.Errorf("under the grammar: %v, want b, a", got)
	}
	// Complete, the grammar admits only the end of generation.
	if got := sample(backend.SamplerParams{Ban: m.EOGTokens()}, g, 1)[0]; got != -1 {
		t.Errorf("a complete grammar with the end banned: %d, want -1", got)
	}
	g.Close()

	// At temperature 1, a (logit 10) is drawn e times as often as b (9).
	p := backend.SamplerParams{Temperature: 1, Seed: 7}
	draws := sample(p, nil, 4000)
	count := map[backend.Token]int{}
	for _, tok := range draws {
		count[tok]++
	}
	if ratio := float64(count[a]) / float64(count[b]); math.Abs(ratio-math.E) > 0.3 || count[a]+count[b] < 3900 {
		t.Errorf("temperature 1: a %d, b %d times (ratio %.2f, want e)", count[a], count[b], ratio)
	}
	again := sample(p, nil, 4000)
	for i := range draws {
		if draws[i] != again[i] {
			t.Fatalf("the same seed drew %d, then %d at step %d", draws[i], again[i], i)
		}
	}
	if got := sample(backend.SamplerParams{Temperature: 1, TopK: 1, Seed: 3}, nil, 50); count1(got, a) != 50 {
		t.Errorf("top-k 1 drew other tokens than a: %v", got)
	}
}

func count1(toks []backend.Token, t backend.Token) int {
	n := 0
	for _, x := range toks {
		if x == t {
			n++
		}
	}
	return n
}
