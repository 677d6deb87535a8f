//go:build cgo

package inference

import (
	"context"
	"sync"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// windowEngine serves "tiny", a byte-level Gemma 3 whose first five layers
// attend over a sliding window of 32 tokens, so that the prompts here
// slide.
func windowEngine(t *testing.T, cfg Config) (*Engine, *runner) {
	t.Helper()
	cfg.Models = []catalog.Model{{ID: "tiny", Path: inferencetest.Model(t, inferencetest.Options{Arch: "gemma3", SlidingWindow: 32})}}
	cfg.Threads = 1
	cfg.Context = 512
	// A small batch and few branches: were the window layers' cache sized
	// for the window (llama.cpp's swa_full off), it would hold 256 cells,
	// fewer than the prompts here, and forget the oldest.
	cfg.Batch, cfg.Branches, cfg.BranchContext = 16, 2, 64
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	r := e.names["tiny"].runner
	if !r.share {
		t.Fatal("a sliding-window model does not share its cache")
	}
	return e, r
}

// A sliding-window model's cache keeps every cell: a prompt that keeps a
// prefix cut far behind an earlier prompt's end, beyond the window, reuses
// it and gives what a fresh engine gives; so do prompts that share a
// prefix with one decoding beside them.
func TestWindowPrefixReuse(t *testing.T) {
	e, _ := windowEngine(t, Config{Parallel: 2})
	cold, _ := windowEngine(t, Config{Parallel: 1})
	generate(t, e, system+"Tell me about the weather.")
	cut := system[:100] + "Something else entirely?"
	got := generate(t, e, cut)
	if got.Usage.CachedTokens != 100 {
		t.Errorf("cut at 100 tokens: %d cached, want 100", got.Usage.CachedTokens)
	}
	if want := generate(t, cold, cut); got.Text != want.Text {
		t.Errorf("cut prompt: %q, a fresh engine gives %q", got.Text, want.Text)
	}
	prompts := []string{system + "Alpha?", system + "Beta?"}
	var wg sync.WaitGroup
	results := make([]Result, len(prompts))
	for i, p := range prompts {
		wg.Go(func() { results[i] = generate(t, e, p) })
	}
	wg.Wait()
	for i, p := range prompts {
		if want := generate(t, cold, p); results[i].Text != want.Text {
			t.Errorf("%q beside another: %q, a fresh engine gives %q", p[len(system):], results[i].Text, want.Text)
		}
	}
}

// Decisions branch from the state on sliding-window models too: a branch's
// most likely token is the one greedy generation picks after the same
// text, and each branch's numbers are the same alone or among others, cold
// or with the state from the cache.
func TestWindowScore(t *testing.T) {
	e, r := windowEngine(t, Config{Parallel: 1})
	all := allTokens(e)
	var branches []Branch
	var alone []BranchScore
	for _, q := range scoreQuestions {
		b := Branch{Text: q, Candidates: all}
		branches = append(branches, b)
		res := score(t, e, system, b).Branches[0]
		alone = append(alone, res)
		best := 0
		for i, p := range res.Probabilities {
			if p > res.Probabilities[best] {
				best = i
			}
		}
		generate(t, e, system+q)
		if want := r.slots[0].cache[len(system+q)]; int(want) != best {
			t.Errorf("%q: most likely token %d, greedy generation starts with %d", q, best, want)
		}
	}
	for _, e := range []*Engine{e, must(windowEngine(t, Config{Parallel: 2}))} {
		res, err := e.Score(context.Background(), ScoreRequest{Model: "tiny", Prefix: system, Branches: branches})
		if err != nil {
			t.Fatal(err)
		}
		for i := range branches {
			sameScores(t, scoreQuestions[i], res.Branches[i], alone[i])
		}
	}
}

func must(e *Engine, _ *runner) *Engine { return e }
