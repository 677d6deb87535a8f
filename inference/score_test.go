//go:build cgo

package inference

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/inferkit/inferkit/catalog"
)

// allTokens lists every token id of the model named "tiny".
func allTokens(e *Engine) []int {
	ids := make([]int, e.names["tiny"].llm.VocabSize())
	for i := range ids {
		ids[i] = i
	}
	return ids
}

// singles makes each token id a candidate of its own.
func singles(ids ...int) [][]int {
	out := make([][]int, len(ids))
	for i, id := range ids {
		out[i] = []int{id}
	}
	return out
}

func score(t *testing.T, e *Engine, prefix string, branches ...Branch) ScoreResult {
	t.Helper()
	res, err := e.Score(context.Background(), ScoreRequest{Model: "tiny", Prefix: prefix, Branches: branches})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Branches) != len(branches) {
		t.Fatalf("%d branch scores for %d branches", len(res.Branches), len(branches))
	}
	return res
}

var scoreQuestions = []string{"Is it sunny? ", "Which colour is the sky? Answer with one letter: ", "Rate it from 1 to 5: ", "Yes or no? ", "Pick A, B or C: "}

func sameScores(t *testing.T, what string, got, want BranchScore) {
	t.Helper()
	for i := range want.LogProbs {
		if d := math.Abs(got.LogProbs[i] - want.LogProbs[i]); d > 1e-3 {
			t.Fatalf("%s: candidate %d: log-probability %v, want %v", what, i, got.LogProbs[i], want.LogProbs[i])
		}
	}
}

// Over the whole vocabulary, a branch's probabilities lie in [0, 1] and
// sum to 1, and the most likely token is the one greedy generation picks
// after the same text.
func TestScoreProbabilities(t *testing.T) {
	e, r := byteEngine(t, Config{Parallel: 1})
	all := allTokens(e)
	for _, q := range scoreQuestions {
		res := score(t, e, system, Branch{Text: q, Candidates: singles(all...)})
		var sum float64
		best := 0
		for i, p := range res.Branches[0].Probabilities {
			if p < 0 || p > 1 || math.IsNaN(p) {
				t.Fatalf("probability %v of token %d", p, i)
			}
			if math.Abs(math.Exp(res.Branches[0].LogProbs[i])-p) > 1e-12 {
				t.Fatalf("token %d: probability %v is not exp(%v)", i, p, res.Branches[0].LogProbs[i])
			}
			sum += p
			if p > res.Branches[0].Probabilities[best] {
				best = i
			}
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("%q: probabilities sum to %v", q, sum)
		}
		// The one slot's cache holds the prompt and what was generated.
		generate(t, e, system+q)
		if want := r.Cache(0)[len(system+q)]; int(want) != best {
			t.Errorf("%q: most likely token %d, greedy generation starts with %d", q, best, want)
		}
	}
}

// A branch gives the same numbers alone, among others, in groups (few
// branch sequences, little branch room) and across small batches.
func TestScoreBranchesIndependent(t *testing.T) {
	e, _ := byteEngine(t, Config{Parallel: 2})
	cands := []int{'A', 'B', 'C', 'y', 'n', '1', '5'}
	var branches []Branch
	var alone []BranchScore
	for _, q := range scoreQuestions {
		b := Branch{Text: q, Candidates: singles(cands...)}
		branches = append(branches, b)
		alone = append(alone, score(t, e, system, b).Branches[0])
	}
	for _, cfg := range []Config{{Parallel: 2}, {Parallel: 1, Branches: 2}, {Parallel: 2, BranchContext: 60}, {Parallel: 2, Batch: 16, BranchContext: 64}} {
		e, _ := byteEngine(t, cfg)
		res := score(t, e, system, branches...)
		for i := range branches {
			sameScores(t, scoreQuestions[i], res.Branches[i], alone[i])
		}
	}
}

// A repeated prefix comes from the prompt cache: only the branches are
// decoded again.
func TestScorePrefixCached(t *testing.T) {
	e, r := byteEngine(t, Config{Parallel: 2})
	b := Branch{Text: "Yes or no? ", Candidates: singles('y', 'n')}
	first := score(t, e, system, b)
	if first.Usage.CachedTokens != 0 || first.Usage.PromptTokens != len(system)+len(b.Text) {
		t.Errorf("first: usage %+v, want %d prompt tokens, none cached", first.Usage, len(system)+len(b.Text))
	}
	before := r.Stats().Decoded
	second := score(t, e, system, b, b)
	if second.Usage.CachedTokens != len(system) || second.Usage.PromptTokens != len(system)+2*len(b.Text) {
		t.Errorf("second: usage %+v, want %d cached", second.Usage, len(system))
	}
	if got := r.Stats().Decoded - before; got != int64(2*len(b.Text)) {
		t.Errorf("second: decoded %d tokens, want the branches' %d", got, 2*len(b.Text))
	}
	sameScores(t, "cached", second.Branches[0], first.Branches[0])
	sameScores(t, "cached twin", second.Branches[1], first.Branches[0])
	// A generation request finds the state decoded too.
	if got := generate(t, e, system+"Tell me more.").Usage.CachedTokens; got != len(system) {
		t.Errorf("generation after scoring: %d cached, want %d", got, len(system))
	}
}

// Scoring between generation steps changes nothing of what concurrent
// generation requests produce.
func TestScoreBesideGeneration(t *testing.T) {
	prompts := []string{system + "Alpha?", "Something else entirely. Beta?"}
	solo, _ := byteEngine(t, Config{Parallel: 1})
	want := make([]string, len(prompts))
	for i, p := range prompts {
		want[i] = generate(t, solo, p).Text
	}
	e, _ := byteEngine(t, Config{Parallel: 3, Batch: 32})
	var wg sync.WaitGroup
	got := make([]string, len(prompts))
	for i, p := range prompts {
		wg.Go(func() { got[i] = generate(t, e, p).Text })
	}
	for range 3 {
		wg.Go(func() {
			score(t, e, strings.Repeat("A state to judge. ", 5), Branch{Text: "Yes? ", Candidates: singles('y')}, Branch{Text: "No? ", Candidates: singles('n')})
		})
	}
	wg.Wait()
	for i := range prompts {
		if got[i] != want[i] {
			t.Errorf("prompt %d: %q beside scoring, %q alone", i, got[i], want[i])
		}
	}
}

func TestScoreErrors(t *testing.T) {
	e, _ := byteEngine(t, Config{Parallel: 1, ContextTokens: 128, BranchContext: 32})
	ok := Branch{Text: "Yes? ", Candidates: singles('y')}
	for _, c := range []struct {
		name string
		req  ScoreRequest
		want error
	}{
		{"unknown model", ScoreRequest{Model: "nope", Prefix: "x", Branches: []Branch{ok}}, ErrModelNotFound},
		{"no branches", ScoreRequest{Model: "tiny", Prefix: "x"}, ErrInvalidRequest},
		{"too many branches", ScoreRequest{Model: "tiny", Prefix: "x", Branches: make([]Branch, 257)}, ErrInvalidRequest},
		{"empty prefix", ScoreRequest{Model: "tiny", Branches: []Branch{ok}}, ErrInvalidRequest},
		{"empty branch", ScoreRequest{Model: "tiny", Prefix: "x", Branches: []Branch{{Candidates: singles(1)}}}, ErrInvalidRequest},
		{"no candidates", ScoreRequest{Model: "tiny", Prefix: "x", Branches: []Branch{{Text: "y"}}}, ErrInvalidRequest},
		{"candidate outside", ScoreRequest{Model: "tiny", Prefix: "x", Branches: []Branch{{Text: "y", Candidates: singles(1 << 20)}}}, ErrInvalidRequest},
		{"negative candidate", ScoreRequest{Model: "tiny", Prefix: "x", Branches: []Branch{{Text: "y", Candidates: singles(-1)}}}, ErrInvalidRequest},
		{"over the context", ScoreRequest{Model: "tiny", Prefix: strings.Repeat("x", 120), Branches: []Branch{{Text: strings.Repeat("y", 10), Candidates: singles(1)}}}, ErrContextLength},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := e.Score(context.Background(), c.req); !errors.Is(err, c.want) {
				t.Errorf("error %v, want %v", err, c.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Score(ctx, ScoreRequest{Model: "tiny", Prefix: "x", Branches: []Branch{ok}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	// The engine still works.
	score(t, e, "x", ok)
	e.Close()
	if _, err := e.Score(context.Background(), ScoreRequest{Model: "tiny", Prefix: "x", Branches: []Branch{ok}}); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v", err)
	}
}

func TestScoreConfig(t *testing.T) {
	if _, err := (Config{Models: byteModels(t), Parallel: 250, Branches: 7}).withDefaults(); err == nil {
		t.Error("Parallel 250 and Branches 7: no error")
	}
	c, err := (Config{Models: byteModels(t), Parallel: 250, Batch: 1000, BranchContext: 64}).withDefaults()
	if err != nil || c.Branches != 6 || c.BranchContext != 64 {
		t.Errorf("defaults: Branches %d, BranchContext %d, %v; want 6, 64", c.Branches, c.BranchContext, err)
	}
}

func byteModels(t *testing.T) []catalog.Model {
	return []catalog.Model{{ID: "tiny", Path: "unused.gguf"}}
}

// checkBranching scores each of scoreQuestions after system on one, a
// single-sequence engine, over the whole vocabulary: the probabilities sum
// to 1, and a branch's most likely token must be the one greedy
// generation picks after the same text. Then it scores them all in one
// request on many, twice (cold, then with the state from the cache): each
// branch must give the numbers it gave alone.
func checkBranching(t *testing.T, one, many *Engine) {
	t.Helper()
	r := one.names["tiny"].runner
	all := allTokens(one)
	var branches []Branch
	var alone []BranchScore
	for _, q := range scoreQuestions {
		b := Branch{Text: q, Candidates: singles(all...)}
		branches = append(branches, b)
		res := score(t, one, system, b).Branches[0]
		alone = append(alone, res)
		best, sum := 0, 0.0
		for i, p := range res.Probabilities {
			sum += p
			if p > res.Probabilities[best] {
				best = i
			}
		}
		if math.Abs(sum-1) > 1e-3 {
			t.Errorf("%q: probabilities sum to %v", q, sum)
		}
		// The first token generated is in the sequence once the
		// second is.
		g := generate(t, one, system+q)
		if len(r.Cache(0)) <= g.Usage.PromptTokens {
			t.Fatalf("%q: generation ended at its first token, %q", q, g.Text)
		}
		if want := r.Cache(0)[g.Usage.PromptTokens]; int(want) != best {
			t.Errorf("%q: most likely token %d, greedy generation starts with %d", q, best, want)
		}
	}
	prefix, err := one.names["tiny"].tokenize(system, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		res := score(t, many, system, branches...)
		if cached := res.Usage.CachedTokens; i == 1 && cached != len(prefix) {
			t.Errorf("repeat: %d cached, want %d", cached, len(prefix))
		}
		for i := range branches {
			sameScores(t, scoreQuestions[i], res.Branches[i], alone[i])
		}
	}
}
