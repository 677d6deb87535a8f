//go:build cgo

package inference

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
)

// tokens spells s as the byte model's tokens.
func tokens(s string) []int {
	out := make([]int, len(s))
	for i := range len(s) {
		out[i] = int(s[i])
	}
	return out
}

// A candidate of several tokens scores the sum of its tokens'
// log-probabilities, each after the branch and the tokens before it: the
// numbers that single-token scoring gives after the longer texts. Trees
// of every shape (shared prefixes, a candidate that is a prefix of
// another, one token beside many) agree with that reference, alone and
// beside other branches, in one batch and in batches of 16 tokens, on an
// attention KV cache and on recurrent states.
func TestScoreMultiTokenCandidates(t *testing.T) {
	t.Run("attention", func(t *testing.T) {
		checkMultiToken(t, func(cfg Config) *Engine { e, _ := byteEngine(t, cfg); return e })
	})
	for _, arch := range recurrentArchs {
		t.Run(arch, func(t *testing.T) {
			checkMultiToken(t, func(cfg Config) *Engine { e, _ := recurrentEngine(t, arch, cfg); return e })
		})
	}
}

func checkMultiToken(t *testing.T, engine func(Config) *Engine) {
	const prefix = "A state to judge, long enough to matter. "
	cases := []struct {
		branch string
		cands  []string
	}{
		{"Pick one: ", []string{"001", "002", "010", "011", "100", "255"}},
		{"Yes or no? ", []string{"yes", "no"}},
		{"Which? ", []string{"a", "ab", "abc", "b"}},
		{"Code: ", []string{"x", "yz"}},
	}
	// reference sums single-token scores after each prefix of the
	// candidate.
	ref := engine(Config{Parallel: 1})
	want := make([][]float64, len(cases))
	for i, c := range cases {
		for _, cand := range c.cands {
			var lp float64
			for j := range len(cand) {
				res := score(t, ref, prefix, Branch{Text: c.branch + cand[:j], Candidates: singles(int(cand[j]))})
				lp += res.Branches[0].LogProbs[0]
			}
			want[i] = append(want[i], lp)
		}
	}
	check := func(t *testing.T, i int, got BranchScore) {
		t.Helper()
		for j, lp := range want[i] {
			if d := math.Abs(got.LogProbs[j] - lp); d > 1e-3 {
				t.Errorf("%q %q: log-probability %v, reference %v", cases[i].branch, cases[i].cands[j], got.LogProbs[j], lp)
			}
			if p := math.Exp(got.LogProbs[j]); math.Abs(got.Probabilities[j]-p) > 1e-12 {
				t.Errorf("%q %q: probability %v, exp(log-probability) %v", cases[i].branch, cases[i].cands[j], got.Probabilities[j], p)
			}
		}
	}
	branchOf := func(i int) Branch {
		b := Branch{Text: cases[i].branch}
		for _, c := range cases[i].cands {
			b.Candidates = append(b.Candidates, tokens(c))
		}
		return b
	}
	for _, batch := range []int{512, 16} {
		t.Run(fmt.Sprintf("batch %d", batch), func(t *testing.T) {
			e := engine(Config{Parallel: 1, Batch: batch, Branches: 8})
			for i := range cases {
				check(t, i, score(t, e, prefix, branchOf(i)).Branches[0])
			}
			var all []Branch
			for i := range cases {
				all = append(all, branchOf(i))
			}
			res := score(t, e, prefix, all...)
			for i := range cases {
				check(t, i, res.Branches[i])
			}
		})
	}
}

func TestScoreCandidateErrors(t *testing.T) {
	e, _ := byteEngine(t, Config{Parallel: 1, ContextTokens: 128, BranchContext: 32, Branches: 16})
	many := func(n, depth int) [][]int {
		var out [][]int
		for i := range n {
			c := []int{'a' + i}
			for range depth {
				c = append(c, 'z')
			}
			out = append(out, append(c, 'y'), append(c, 'x'))
		}
		return out
	}
	for _, c := range []struct {
		name  string
		cands [][]int
		want  error
	}{
		{"empty candidate", [][]int{{'a'}, {}}, ErrInvalidRequest},
		{"too many tokens", [][]int{make([]int, MaxCandidateTokens+1)}, ErrInvalidRequest},
		{"too many candidates", make([][]int, MaxCandidates+1), ErrInvalidRequest},
		{"token outside", [][]int{{'a', 1 << 20}}, ErrInvalidRequest},
		// 16 deepest inner nodes and the branch: 17 sequences of 16.
		{"over the branch sequences", many(16, 0), ErrContextLength},
		{"fits the branch sequences", many(15, 0), nil},
		// 15 paths of 15 tokens: 225 cells and the branch's, where
		// 32 + 128 - 2 are left.
		{"over the branch room", many(15, 14), ErrContextLength},
		{"deep candidates", [][]int{tokens("abcdefghijklmnop")}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.Score(context.Background(), ScoreRequest{Model: "tiny", Prefix: "x", Branches: []Branch{{Text: "?", Candidates: c.cands}}})
			if c.want == nil && err != nil || !errors.Is(err, c.want) {
				t.Errorf("error %v, want %v", err, c.want)
			}
		})
	}
	// 115 + 1 + 15 positions, where the context holds 128.
	long := make([]byte, 115)
	for i := range long {
		long[i] = 'x'
	}
	_, err := e.Score(context.Background(), ScoreRequest{Model: "tiny", Prefix: string(long), Branches: []Branch{{Text: "?", Candidates: [][]int{tokens("abcdefghijklmnop")}}}})
	if !errors.Is(err, ErrContextLength) {
		t.Errorf("candidates past the context: error %v, want %v", err, ErrContextLength)
	}
}
