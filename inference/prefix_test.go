//go:build cgo

package inference

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/runner"
)

// fakeClock is a settable clock for CacheTTL.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// byteEngine runs a byte-level tiny model: one token per byte (add_bos is
// off), so a shared prefix in bytes is the same shared prefix in tokens.
func byteEngine(t *testing.T, cfg Config) (*Engine, *runner.Runner) {
	t.Helper()
	cfg.Models = []catalog.Model{{ID: "tiny", Path: inferencetest.Model(t, inferencetest.Options{ContextLength: 4096})}}
	cfg.Threads = 1
	if cfg.ContextTokens == 0 {
		cfg.ContextTokens = 1024
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, e.names["tiny"].runner
}

func generate(t *testing.T, e *Engine, prompt string) Result {
	t.Helper()
	zero := 0.0
	res, err := e.Generate(context.Background(), Request{Model: "tiny", Prompt: prompt, MaxTokens: 6, Temperature: &zero})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func bytePrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

var system = strings.Repeat("You are a careful assistant who answers briefly. ", 8)

func TestPrefixRepeatedSystemPrompt(t *testing.T) {
	e, r := byteEngine(t, Config{Parallel: 2})
	first, second := system+"Question one?", system+"Another question?"
	if got := generate(t, e, first).Usage.CachedTokens; got != 0 {
		t.Errorf("first request: %d cached tokens, want 0", got)
	}
	before := r.Stats().Decoded
	res := generate(t, e, second)
	want := bytePrefix(first, second)
	if res.Usage.CachedTokens != want || res.Usage.PromptTokens != len(second) {
		t.Errorf("second request: usage %+v, want %d cached of %d", res.Usage, want, len(second))
	}
	if got := r.Stats().Decoded - before; got != int64(len(second)-want) {
		t.Errorf("decoded %d prompt tokens, want %d", got, len(second)-want)
	}
	// The same prompt again: all but the last token, whose logits start
	// the output.
	if got := generate(t, e, second).Usage.CachedTokens; got != len(second)-1 {
		t.Errorf("repeated prompt: %d cached, want %d", got, len(second)-1)
	}
}

// A second turn reuses the first turn's prompt and the tokens it
// generated, as far as the template renders them the same.
func TestPrefixSecondTurn(t *testing.T) {
	e, r := byteEngine(t, Config{Parallel: 1})
	zero := 0.0
	turn1 := Request{Model: "tiny", MaxTokens: 8, Temperature: &zero, Messages: []Message{
		Text(RoleSystem, system), Text(RoleUser, "What is a prefix?"),
	}}
	res1, err := e.Generate(context.Background(), turn1)
	if err != nil {
		t.Fatal(err)
	}
	kv := r.Cache(0) // the prompt and what was generated
	turn2 := turn1
	turn2.Messages = append(slices.Clone(turn1.Messages), Text(RoleAssistant, res1.Text), Text(RoleUser, "And a suffix?"))
	texts, _, err := e.names["tiny"].prompt(turn2, false)
	if err != nil {
		t.Fatal(err)
	}
	res2, err := e.Generate(context.Background(), turn2)
	if err != nil {
		t.Fatal(err)
	}
	if want := runner.CommonPrefix(kv, texts[0]); res2.Usage.CachedTokens != want {
		t.Errorf("second turn: %d cached, want %d (the tokens it shares with the KV cache)", res2.Usage.CachedTokens, want)
	}
	if res2.Usage.CachedTokens < res1.Usage.PromptTokens {
		t.Errorf("second turn reused %d tokens, less than the first turn's prompt of %d", res2.Usage.CachedTokens, res1.Usage.PromptTokens)
	}
}

// Concurrent requests that share a system prompt decode it once, whether
// the others find it decoded (a KV copy) or join its prefill (small
// batches), and their output is what each gives alone.
func TestPrefixSharedByConcurrentRequests(t *testing.T) {
	prompts := []string{system + "Alpha?", system + "Beta?", system + "Gamma?", system + "Delta?"}
	solo, _ := byteEngine(t, Config{Parallel: 1})
	want := make([]string, len(prompts))
	for i, p := range prompts {
		want[i] = generate(t, solo, p).Text
	}
	for _, batch := range []int{512, 32} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			e, r := byteEngine(t, Config{Parallel: 4, Batch: batch})
			results := make([]Result, len(prompts))
			var wg sync.WaitGroup
			for i, p := range prompts {
				wg.Go(func() { results[i] = generate(t, e, p) })
			}
			wg.Wait()
			shared := len(system) // the questions start with different letters
			cached := make([]int, len(results))
			for i, res := range results {
				cached[i] = res.Usage.CachedTokens
				if res.Text != want[i] {
					t.Errorf("prompt %d: %q beside others, %q alone", i, res.Text, want[i])
				}
			}
			slices.Sort(cached)
			if want := []int{0, shared, shared, shared}; !slices.Equal(cached, want) {
				t.Errorf("cached tokens %v, want %v", cached, want)
			}
			var total int
			for _, p := range prompts {
				total += len(p)
			}
			if got, want := r.Stats().Decoded, int64(total-3*shared); got != want {
				t.Errorf("decoded %d prompt tokens, want %d (%d without the cache)", got, want, total)
			}
		})
	}
}

func TestPrefixTTL(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	e, _ := byteEngine(t, Config{Parallel: 1, Now: clock.Now})
	generate(t, e, system+"One")
	clock.Advance(4 * time.Minute)
	if got := generate(t, e, system+"Two").Usage.CachedTokens; got != len(system) {
		t.Errorf("after 4 minutes: %d cached, want %d", got, len(system))
	}
	clock.Advance(5*time.Minute + time.Second)
	if got := generate(t, e, system+"Three").Usage.CachedTokens; got != 0 {
		t.Errorf("after 5 minutes idle: %d cached, want 0", got)
	}
}

// With every sequence holding a cache, a new prompt evicts the least
// recently used one.
func TestPrefixEvictsLeastRecentlyUsed(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	e, _ := byteEngine(t, Config{Parallel: 2, Now: clock.Now})
	a, b, c := "Apples "+system, "Bananas "+system, "Cherries "+system
	for _, p := range []string{a, b, c} { // c evicts a
		generate(t, e, p)
		clock.Advance(time.Second)
	}
	if got := generate(t, e, b+"?").Usage.CachedTokens; got != len(b) {
		t.Errorf("b: %d cached, want %d", got, len(b))
	}
	clock.Advance(time.Second)
	if got := generate(t, e, a+"?").Usage.CachedTokens; got != 0 {
		t.Errorf("a, evicted: %d cached, want 0", got)
	}
	clock.Advance(time.Second)
	if got := generate(t, e, b+"!").Usage.CachedTokens; got != len(b) {
		t.Errorf("b, used last: %d cached, want %d", got, len(b))
	}
}
