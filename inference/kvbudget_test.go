//go:build cgo

package inference_test

import (
	"context"
	"iter"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

func budgetEngine(t *testing.T, kvTokens int) *inference.Engine {
	return newEngine(t, inference.Config{Models: []catalog.Model{{ID: "tiny", Path: inferencetest.Model(t, inferencetest.Options{})}},
		Parallel: 2, ContextTokens: 256, KVTokens: kvTokens})
}

func budgetRequest(prompt string, maxTokens int) inference.Request {
	zero := 0.0
	return inference.Request{Model: "tiny", Prompt: prompt, MaxTokens: maxTokens, Temperature: &zero, IgnoreEOS: true}
}

// The sequences share Config.KVTokens cells: a request waits while those
// at work hold too many, and never gets more context than the cells.
func TestKVTokensShared(t *testing.T) {
	if got := budgetEngine(t, 100).Models()[0].ContextLength; got != 100 {
		t.Errorf("context with 100 cells: %d", got)
	}
	e := budgetEngine(t, 300)
	if got := e.Models()[0].ContextLength; got != 256 {
		t.Errorf("context with 300 cells: %d", got)
	}
	// Each request reserves its prompt and 200 tokens: two do not fit.
	// The second is started once the first is at work, and when its first
	// token comes the first must be over: one sequence is active. (Had
	// both run at once, the first's 200 tokens would still be going.)
	// Timestamps taken by two readers cannot show this: a reader may see
	// the first's end after the second's start.
	ctx := context.Background()
	first, stopFirst := iter.Pull2(e.Stream(ctx, budgetRequest("First request.", 200)))
	defer stopFirst()
	if _, err, ok := first(); !ok || err != nil {
		t.Fatalf("the first request: %v", err)
	}
	second, stopSecond := iter.Pull2(e.Stream(ctx, budgetRequest("Second request.", 200)))
	defer stopSecond()
	if _, err, ok := second(); !ok || err != nil {
		t.Fatalf("the second request: %v", err)
	}
	if st := e.Stats()[0]; st.Active != 1 {
		t.Errorf("when the second request's first event came, %d sequences were active, want 1 (the first had to end)", st.Active)
	}
	for _, err := range drain(first) {
		t.Error(err)
	}
	for _, err := range drain(second) {
		t.Error(err)
	}
}

// drain reads what is left of a pulled stream and returns its errors.
func drain(next func() (inference.Event, error, bool)) []error {
	var errs []error
	for {
		_, err, ok := next()
		if !ok {
			return errs
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
}

// An idle sequence's cached prompt gives up its cells to a request that
// needs them; with cells to spare it stays.
func TestKVTokensEvictIdleCaches(t *testing.T) {
	for _, c := range []struct {
		cells  int
		cached bool
	}{{300, false}, {512, true}} {
		e := budgetEngine(t, c.cells)
		ctx := context.Background()
		a := budgetRequest("A prompt that comes back. A prompt that comes back.", 150)
		if _, err := e.Generate(ctx, a); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Generate(ctx, budgetRequest("Another prompt, which needs room.", 200)); err != nil {
			t.Fatal(err)
		}
		res, err := e.Generate(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Usage.CachedTokens > 0; got != c.cached {
			t.Errorf("%d cells: the first prompt came back with %d cached tokens", c.cells, res.Usage.CachedTokens)
		}
	}
}
