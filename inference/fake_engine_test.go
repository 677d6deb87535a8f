package inference

// These tests run the runner against the pure-Go fake backend
// (internal/backend/fakebackend), so they run without cgo too, in
// milliseconds: scheduling, prefix reuse in memory and on disk, scoring
// branches and cancellation. They mirror the meaning of the cgo tests of
// engine_test.go, prefix_test.go, score_test.go and runner_test.go, which
// run the same machinery on real models.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/backend/fakebackend"
	"github.com/inferkit/inferkit/internal/runner"
)

// fkEngine starts an engine whose one model, "fake", runs on the fake
// backend: one token per byte of a prompt, no BOS. The model file is a
// placeholder (the prompt cache on disk keys entries by its bytes).
func fkEngine(t *testing.T, cfg Config) (*Engine, *runner.Runner) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fake.gguf")
	if err := os.WriteFile(path, []byte("a fake model"), 0o644); err != nil {
		t.Fatal(err)
	}
	return fkEngineAt(t, path, cfg)
}

func fkEngineAt(t *testing.T, path string, cfg Config) (*Engine, *runner.Runner) {
	t.Helper()
	cfg.Models = []catalog.Model{{ID: "fake", Path: path}}
	cfg.MemoryLimit = -1
	cfg.Logger = slog.New(slog.DiscardHandler)
	if cfg.ContextTokens == 0 {
		cfg.ContextTokens = 1024
	}
	cfg.load = func(string, func(float32) bool) (backend.Model, error) {
		return fakebackend.New(fakebackend.Options{}), nil
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, e.names["fake"].runner
}

func fkGreedy(prompt string, maxTokens int) Request {
	zero := 0.0
	return Request{Model: "fake", Prompt: prompt, MaxTokens: maxTokens, Temperature: &zero}
}

func fkGenerate(t *testing.T, e *Engine, req Request) Result {
	t.Helper()
	res, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fkWait polls cond for up to 10 seconds.
func fkWait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

var fkPrompts = []string{"Once upon a time", "The little dog", "Lily and Ben went to the", "One day, a big"}

// Batching never mixes sequences: a request's greedy output is the same
// alone and beside three others, in large batches and in small ones
// that prefill prompts in chunks.
func TestFakeGreedySameAloneAndConcurrent(t *testing.T) {
	solo, _ := fkEngine(t, Config{Parallel: 1})
	want := make([]Result, len(fkPrompts))
	for i, p := range fkPrompts {
		want[i] = fkGenerate(t, solo, fkGreedy(p, 48))
		if want[i].Usage.CompletionTokens == 0 {
			t.Fatalf("prompt %q: no output", p)
		}
	}
	if again := fkGenerate(t, solo, fkGreedy(fkPrompts[0], 48)); again.Text != want[0].Text {
		t.Fatalf("greedy output changed between runs: %q, then %q", want[0].Text, again.Text)
	}
	for _, batch := range []int{512, 16} {
		e, _ := fkEngine(t, Config{Parallel: 4, Batch: batch})
		for round := range 3 {
			got := make([]string, len(fkPrompts))
			var wg sync.WaitGroup
			for i, p := range fkPrompts {
				wg.Go(func() {
					res, err := e.Generate(context.Background(), fkGreedy(p, 48))
					if err != nil {
						t.Error(err)
					}
					got[i] = res.Text
				})
			}
			wg.Wait()
			for i := range fkPrompts {
				if got[i] != want[i].Text {
					t.Errorf("batch %d, round %d, prompt %q:\nconcurrent %q\nalone      %q", batch, round, fkPrompts[i], got[i], want[i].Text)
				}
			}
		}
	}
}

// Seeded sampling gives the same output for the same seed, alone or
// beside other requests.
func TestFakeSeededSameAloneAndConcurrent(t *testing.T) {
	one := 1.0
	seeded := func(p string) Request {
		r := fkGreedy(p, 32)
		r.Temperature, r.Seed = &one, new(int64)
		*r.Seed = 7
		return r
	}
	solo, _ := fkEngine(t, Config{Parallel: 1})
	want := make([]string, len(fkPrompts))
	for i, p := range fkPrompts {
		want[i] = fkGenerate(t, solo, seeded(p)).Text
	}
	e, _ := fkEngine(t, Config{Parallel: 4})
	got := make([]string, len(fkPrompts))
	var wg sync.WaitGroup
	for i, p := range fkPrompts {
		wg.Go(func() {
			res, err := e.Generate(context.Background(), seeded(p))
			if err != nil {
				t.Error(err)
			}
			got[i] = res.Text
		})
	}
	wg.Wait()
	for i := range fkPrompts {
		if got[i] != want[i] {
			t.Errorf("prompt %q: concurrent %q, alone %q", fkPrompts[i], got[i], want[i])
		}
	}
}

// With the one sequence busy and the queue full, a request fails at once
// with ErrOverloaded; the queued one ends with its context.
func TestFakeOverloaded(t *testing.T) {
	e, _ := fkEngine(t, Config{Parallel: 1, Queue: 1, ContextTokens: 16384})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	busy := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for range e.Stream(ctx, Request{Model: "fake", Prompt: "x", IgnoreEOS: true}) {
			select {
			case busy <- struct{}{}:
			default:
			}
		}
	})
	<-busy
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := e.Generate(ctx, Request{Model: "fake", Prompt: "y", MaxTokens: 5})
			errs <- err
		}()
	}
	if err := <-errs; !errors.Is(err, ErrOverloaded) {
		t.Errorf("first to return: %v, want ErrOverloaded", err)
	}
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("queued request after cancel: %v, want context.Canceled", err)
	}
}

// Parallel requests decode at once; a caller's break frees each sequence
// within one decode step, and new requests take them at once.
func TestFakeParallelAndBreakFreesSlot(t *testing.T) {
	e, r := fkEngine(t, Config{Parallel: 4, Queue: 4, ContextTokens: 4096})
	long := Request{Model: "fake", Prompt: "Once upon a time", IgnoreEOS: true} // to the end of the context
	started := make(chan struct{})
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for _, err := range e.Stream(context.Background(), long) {
				if err != nil {
					t.Error(err)
				}
				started <- struct{}{} // even after an error, so that the test ends
				<-release
				break
			}
		})
	}
	for range 4 {
		<-started
	}
	if got := r.Stats().Active; got != 4 {
		t.Errorf("%d active sequences, want 4", got)
	}
	close(release)
	wg.Wait()
	before := r.Stats().Steps
	fkWait(t, "the broken-off sequences to be freed", func() bool { return r.Stats().Active == 0 })
	if steps := r.Stats().Steps - before; steps > 1 {
		t.Errorf("sequences freed after %d decode steps, want at most 1", steps)
	}
	var done sync.WaitGroup
	for _, p := range fkPrompts {
		done.Go(func() {
			if res, err := e.Generate(context.Background(), fkGreedy(p, 5)); err != nil || res.Usage.CompletionTokens == 0 {
				t.Errorf("after the break: %+v, %v", res.Usage, err)
			}
		})
	}
	done.Wait()
}

// A cancelled context ends a stream with context.Canceled, and frees its
// sequence for the next request.
func TestFakeCancelledContext(t *testing.T) {
	e, r := fkEngine(t, Config{Parallel: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	var last error
	for ev, err := range e.Stream(ctx, Request{Model: "fake", Prompt: "Once upon a time", IgnoreEOS: true}) {
		if err != nil {
			last = err
			break
		}
		if ev.Text != "" {
			n++
		}
		if n == 3 {
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Errorf("stream ended with %v, want context.Canceled", last)
	}
	fkWait(t, "the cancelled sequence to be freed", func() bool { return r.Stats().Active == 0 })
	if _, err := e.Generate(context.Background(), fkGreedy("Once", 3)); err != nil {
		t.Errorf("engine unusable after a cancel: %v", err)
	}
}

var fkSystem = strings.Repeat("You are a careful assistant who answers briefly. ", 8)

// A prompt that continues a cached one decodes only what is new, reports
// the rest as cached, and gives what a cold engine gives.
func TestFakePrefixReuse(t *testing.T) {
	first, second := fkSystem+"Question one?", fkSystem+"Another question?"
	cold, _ := fkEngine(t, Config{Parallel: 1})
	want := fkGenerate(t, cold, fkGreedy(second, 8)).Text

	e, r := fkEngine(t, Config{Parallel: 2})
	if got := fkGenerate(t, e, fkGreedy(first, 8)).Usage.CachedTokens; got != 0 {
		t.Errorf("first request: %d cached tokens, want 0", got)
	}
	before := r.Stats().Decoded
	res := fkGenerate(t, e, fkGreedy(second, 8))
	shared := bytePrefixLen(first, second)
	if res.Usage.CachedTokens != shared || res.Usage.PromptTokens != len(second) {
		t.Errorf("second request: usage %+v, want %d cached of %d", res.Usage, shared, len(second))
	}
	if got := r.Stats().Decoded - before; got != int64(len(second)-shared) {
		t.Errorf("decoded %d prompt tokens, want %d", got, len(second)-shared)
	}
	if res.Text != want {
		t.Errorf("continued prompt gave %q, a cold engine %q", res.Text, want)
	}
	// The same prompt again: all but its last token is cached.
	again := fkGenerate(t, e, fkGreedy(second, 8))
	if again.Usage.CachedTokens != len(second)-1 || again.Text != want {
		t.Errorf("repeated prompt: %d cached, %q; want %d, %q", again.Usage.CachedTokens, again.Text, len(second)-1, want)
	}
}

// Concurrent requests that share a system prompt decode it once, and give
// what each gives alone.
func TestFakePrefixSharedByConcurrentRequests(t *testing.T) {
	prompts := []string{fkSystem + "Alpha?", fkSystem + "Beta?", fkSystem + "Gamma?", fkSystem + "Delta?"}
	solo, _ := fkEngine(t, Config{Parallel: 1})
	want := make([]string, len(prompts))
	for i, p := range prompts {
		want[i] = fkGenerate(t, solo, fkGreedy(p, 6)).Text
	}
	for _, batch := range []int{512, 32} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			e, r := fkEngine(t, Config{Parallel: 4, Batch: batch})
			results := make([]Result, len(prompts))
			var wg sync.WaitGroup
			for i, p := range prompts {
				wg.Go(func() {
					res, err := e.Generate(context.Background(), fkGreedy(p, 6))
					if err != nil {
						t.Error(err)
					}
					results[i] = res
				})
			}
			wg.Wait()
			cached := make([]int, len(results))
			var total int
			for i, res := range results {
				cached[i] = res.Usage.CachedTokens
				total += len(prompts[i])
				if res.Text != want[i] {
					t.Errorf("prompt %d: %q beside others, %q alone", i, res.Text, want[i])
				}
			}
			slices.Sort(cached)
			shared := len(fkSystem)
			if want := []int{0, shared, shared, shared}; !slices.Equal(cached, want) {
				t.Errorf("cached tokens %v, want %v", cached, want)
			}
			if got, want := r.Stats().Decoded, int64(total-3*shared); got != want {
				t.Errorf("decoded %d prompt tokens, want %d (%d without the cache)", got, want, total)
			}
		})
	}
}

// A prefix saved on disk by one engine is restored by the next, which
// then decodes only the rest and gives the cold output.
func TestFakePrefixOnDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fake.gguf")
	if err := os.WriteFile(path, []byte("a fake model"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	prompt := fkSystem + "What is on disk?"
	cfg := Config{Parallel: 1, CacheDir: dir, saveMin: 16, saveLong: 64}
	first, _ := fkEngineAt(t, path, cfg)
	want := fkGenerate(t, first, fkGreedy(prompt, 8))
	if want.Usage.CachedTokens != 0 {
		t.Fatalf("first engine: %d cached, want 0", want.Usage.CachedTokens)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, r := fkEngineAt(t, path, cfg)
	res := fkGenerate(t, second, fkGreedy(prompt, 8))
	if res.Usage.CachedTokens == 0 || int64(res.Usage.PromptTokens-res.Usage.CachedTokens) != r.Stats().Decoded {
		t.Errorf("second engine: usage %+v, decoded %d: want the prefix restored from disk", res.Usage, r.Stats().Decoded)
	}
	if res.Text != want.Text {
		t.Errorf("restored prefix gave %q, the cold engine %q", res.Text, want.Text)
	}
}

func bytePrefixLen(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

var fkQuestions = []string{"Is it sunny? ", "Which colour is the sky? Answer with one letter: ", "Rate it from 1 to 5: ", "Yes or no? ", "Pick A, B or C: "}

func fkScore(t *testing.T, e *Engine, prefix string, branches ...Branch) ScoreResult {
	t.Helper()
	res, err := e.Score(context.Background(), ScoreRequest{Model: "fake", Prefix: prefix, Branches: branches})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Branches) != len(branches) {
		t.Fatalf("%d branch scores for %d branches", len(res.Branches), len(branches))
	}
	return res
}

// Over the whole vocabulary a branch's probabilities sum to 1, and the
// most likely token is the one greedy generation picks after the same
// text.
func TestFakeScoreProbabilities(t *testing.T) {
	e, r := fkEngine(t, Config{Parallel: 1})
	all := make([][]int, e.names["fake"].llm.VocabSize())
	for i := range all {
		all[i] = []int{i}
	}
	for _, q := range fkQuestions {
		res := fkScore(t, e, fkSystem, Branch{Text: q, Candidates: all}).Branches[0]
		var sum float64
		best := 0
		for i, p := range res.Probabilities {
			if p < 0 || p > 1 || math.IsNaN(p) {
				t.Fatalf("probability %v of token %d", p, i)
			}
			sum += p
			if p > res.Probabilities[best] {
				best = i
			}
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("%q: probabilities sum to %v", q, sum)
		}
		fkGenerate(t, e, fkGreedy(fkSystem+q, 2))
		if got := r.Cache(0)[len(fkSystem+q)]; int(got) != best {
			t.Errorf("%q: most likely token %d, greedy generation starts with %d", q, best, got)
		}
	}
}

// A branch gives the same numbers alone and among others, in one group
// or several (few branch sequences, little branch room, small batches),
// for single tokens and for candidates of several tokens, which branch
// into trees.
func TestFakeScoreBranchesIndependent(t *testing.T) {
	singles := [][]int{{'A'}, {'B'}, {'C'}, {'y'}, {'n'}, {'1'}, {'5'}}
	words := [][]int{{'y', 'e', 's'}, {'y', 'e', 'a', 'h'}, {'n', 'o'}, {'A'}}
	for _, c := range []struct {
		name  string
		cands [][]int
		cfgs  []Config
	}{
		{"singles", singles, []Config{{Parallel: 2}, {Parallel: 1, Branches: 2}, {Parallel: 2, BranchContext: 60}, {Parallel: 2, Batch: 16, BranchContext: 64}}},
		{"words", words, []Config{{Parallel: 2}, {Parallel: 1, Branches: 4}, {Parallel: 2, BranchContext: 80}, {Parallel: 2, Batch: 16, BranchContext: 96}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, _ := fkEngine(t, Config{Parallel: 2})
			var branches []Branch
			var alone []BranchScore
			for _, q := range fkQuestions {
				b := Branch{Text: q, Candidates: c.cands}
				branches = append(branches, b)
				alone = append(alone, fkScore(t, e, fkSystem, b).Branches[0])
			}
			for _, cfg := range c.cfgs {
				e, _ := fkEngine(t, cfg)
				res := fkScore(t, e, fkSystem, branches...)
				for i := range branches {
					for j := range c.cands {
						if d := math.Abs(res.Branches[i].LogProbs[j] - alone[i].LogProbs[j]); d > 1e-9 {
							t.Errorf("config %+v, %q, candidate %d: log-probability %v together, %v alone",
								cfg, fkQuestions[i], j, res.Branches[i].LogProbs[j], alone[i].LogProbs[j])
						}
					}
				}
			}
		})
	}
}

// Scoring beside generation changes neither.
func TestFakeScoreBesideGeneration(t *testing.T) {
	solo, _ := fkEngine(t, Config{Parallel: 1})
	b := Branch{Text: "Yes or no? ", Candidates: [][]int{{'y'}, {'n'}}}
	wantScore := fkScore(t, solo, fkSystem, b).Branches[0]
	wantText := fkGenerate(t, solo, fkGreedy(fkPrompts[0], 32)).Text

	e, _ := fkEngine(t, Config{Parallel: 2})
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			res, err := e.Generate(context.Background(), fkGreedy(fkPrompts[0], 32))
			if err != nil || res.Text != wantText {
				t.Errorf("generation beside scoring: %q, %v; want %q", res.Text, err, wantText)
			}
		})
		wg.Go(func() {
			res, err := e.Score(context.Background(), ScoreRequest{Model: "fake", Prefix: fkSystem, Branches: []Branch{b}})
			if err != nil {
				t.Error(err)
				return
			}
			if !slices.Equal(res.Branches[0].LogProbs, wantScore.LogProbs) {
				t.Errorf("scoring beside generation: %v, want %v", res.Branches[0].LogProbs, wantScore.LogProbs)
			}
		})
	}
	wg.Wait()
}

// Chat requests render with the model's ChatML template, whose markup
// becomes control tokens while the messages' text stays text; a second
// turn reuses the first turn's prompt and the tokens it generated, as far
// as the template renders them the same.
func TestFakeChatSecondTurn(t *testing.T) {
	e, r := fkEngine(t, Config{Parallel: 1})
	zero := 0.0
	turn1 := Request{Model: "fake", MaxTokens: 8, Temperature: &zero, Messages: []Message{
		Text(RoleSystem, fkSystem), Text(RoleUser, "What is <|im_end|> a prefix?"),
	}}
	texts, _, err := e.names["fake"].prompt(turn1, false)
	if err != nil {
		t.Fatal(err)
	}
	var controls int
	for _, tok := range texts[0] {
		if tok >= fakebackend.BOS {
			controls++
		}
	}
	if controls != 5 { // <|im_start|> and <|im_end|> for each message, and the assistant's <|im_start|>
		t.Errorf("%d control tokens in the prompt, want 5: the user's text stays text", controls)
	}
	res1 := fkGenerate(t, e, turn1)
	kv := r.Cache(0)
	turn2 := turn1
	turn2.Messages = append(slices.Clone(turn1.Messages), Text(RoleAssistant, res1.Text), Text(RoleUser, "And a suffix?"))
	texts, _, err = e.names["fake"].prompt(turn2, false)
	if err != nil {
		t.Fatal(err)
	}
	res2 := fkGenerate(t, e, turn2)
	if want := runner.CommonPrefix(kv, texts[0]); res2.Usage.CachedTokens != want {
		t.Errorf("second turn: %d cached, want %d (the tokens it shares with the KV cache)", res2.Usage.CachedTokens, want)
	}
	if res2.Usage.CachedTokens < res1.Usage.PromptTokens {
		t.Errorf("second turn reused %d tokens, less than the first turn's prompt of %d", res2.Usage.CachedTokens, res1.Usage.PromptTokens)
	}
}
