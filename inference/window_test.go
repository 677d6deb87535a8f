//go:build cgo

package inference

import (
	"sync"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/runner"
)

// windowEngine serves "tiny", a byte-level Gemma 3 whose first five layers
// attend over a sliding window of 32 tokens, so that the prompts here
// slide.
func windowEngine(t *testing.T, cfg Config) (*Engine, *runner.Runner) {
	t.Helper()
	cfg.Models = []catalog.Model{{ID: "tiny", Path: inferencetest.Model(t, inferencetest.Options{Arch: "gemma3", SlidingWindow: 32})}}
	cfg.Threads = 1
	cfg.ContextTokens = 512
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
	if !r.SharesKV() {
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

// Decisions branch from the state on sliding-window models too.
func TestWindowScore(t *testing.T) {
	one, _ := windowEngine(t, Config{Parallel: 1})
	many, _ := windowEngine(t, Config{Parallel: 2})
	checkBranching(t, one, many)
}
