//go:build cgo

package inference

import (
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/runner"
)

// recurrentArchs have a recurrent state per sequence: mamba alone, jamba
// beside an attention KV cache.
var recurrentArchs = []string{"mamba", "jamba"}

func recurrentEngine(t *testing.T, arch string, cfg Config) (*Engine, *runner.Runner) {
	t.Helper()
	cfg.Models = []catalog.Model{{ID: "tiny", Path: inferencetest.Model(t, inferencetest.Options{Arch: arch})}}
	cfg.Threads = 1
	cfg.ContextTokens = 1024
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	r := e.names["tiny"].runner
	if r.SharesKV() {
		t.Fatalf("%s shares its memory between sequences", arch)
	}
	return e, r
}

// A recurrent state cannot be cut back: a prompt that shares only part of
// what a sequence holds starts afresh, and one that continues all of it
// reuses it; both give what a fresh engine gives.
func TestRecurrentPrefixReuse(t *testing.T) {
	for _, arch := range recurrentArchs {
		t.Run(arch, func(t *testing.T) {
			e, _ := recurrentEngine(t, arch, Config{Parallel: 1})
			cold, _ := recurrentEngine(t, arch, Config{Parallel: 1})
			// A Score request leaves exactly its prefix in the sequence.
			score(t, e, system, Branch{Text: "?", Candidates: singles('y')})
			whole := system + "Go on."
			got := generate(t, e, whole)
			if got.Usage.CachedTokens != len(system) {
				t.Errorf("continuing the state: %d cached, want %d", got.Usage.CachedTokens, len(system))
			}
			if want := generate(t, cold, whole); got.Text != want.Text {
				t.Errorf("continuing the state: %q, a fresh engine gives %q", got.Text, want.Text)
			}
			cut := system[:100] + "Something else entirely?"
			got = generate(t, e, cut)
			if got.Usage.CachedTokens != 0 {
				t.Errorf("cut prompt: %d cached, want 0", got.Usage.CachedTokens)
			}
			if want := generate(t, cold, cut); got.Text != want.Text {
				t.Errorf("cut prompt: %q, a fresh engine gives %q", got.Text, want.Text)
			}
		})
	}
}

// Decisions branch a recurrent state by whole-sequence copies.
func TestRecurrentScore(t *testing.T) {
	for _, arch := range recurrentArchs {
		t.Run(arch, func(t *testing.T) {
			one, _ := recurrentEngine(t, arch, Config{Parallel: 1})
			many, _ := recurrentEngine(t, arch, Config{Parallel: 2, Branches: 2})
			checkBranching(t, one, many)
		})
	}
}
