//go:build cgo

package inference_test

import (
	"context"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

func budgetEngine(t *testing.T, kvTokens int) *inference.Engine {
	return newEngine(t, inference.Config{Models: []catalog.Model{{ID: "tiny", Path: inferencetest.Model(t, inferencetest.Options{})}},
		Parallel: 2, Context: 256, KVTokens: kvTokens})
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
	ctx := context.Background()
	var aEnd, bStart time.Time
	done := make(chan struct{})
	started := make(chan struct{})
	go func() {
		defer close(done)
		first := true
		for ev, err := range e.Stream(ctx, budgetRequest("First request.", 200)) {
			if err != nil {
				t.Error(err)
				return
			}
			if first {
				first = false
				close(started)
			}
			if ev.Final != nil {
				aEnd = time.Now()
			}
		}
	}()
	<-started
	for ev, err := range e.Stream(ctx, budgetRequest("Second request.", 200)) {
		if err != nil {
			t.Fatal(err)
		}
		if bStart.IsZero() && (ev.Text != "" || ev.Final != nil) {
			bStart = time.Now()
		}
	}
	<-done
	if aEnd.IsZero() || bStart.Before(aEnd) {
		t.Errorf("the second request started at %v, before the first ended at %v", bStart, aEnd)
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
