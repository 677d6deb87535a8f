//go:build cgo

package inference

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
)

func storiesModel(t *testing.T) string {
	p, _ := filepath.Abs("../../shared/models/stories260K.gguf")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("skipping: the tiny trained model is not at ../shared/models/stories260K.gguf (%v)", err)
	}
	return p
}

// waitFor polls cond for up to 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A caller's break frees its sequence within one decode step, and new
// requests take the freed sequences at once.
func TestBreakFreesSlotWithinOneStep(t *testing.T) {
	e, err := New(Config{Models: []catalog.Model{{ID: "s", Path: storiesModel(t)}}, Parallel: 4, ContextTokens: 512, Queue: 4, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r := e.names["s"].runner
	zero := 0.0
	long := Request{Model: "s", Prompt: "Once upon a time", Temperature: &zero} // runs to the end of the context

	started := make(chan struct{})
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for _, err := range e.Stream(context.Background(), long) {
				if err != nil {
					t.Error(err)
					return
				}
				started <- struct{}{}
				<-release
				break
			}
		})
	}
	for range 4 {
		<-started
	}
	if got := r.Stats().Active; got != 4 {
		t.Fatalf("%d active sequences, want 4", got)
	}
	close(release)
	wg.Wait()
	before := r.Stats().Steps
	waitFor(t, "the cancelled sequences to be freed", func() bool { return r.Stats().Active == 0 })
	if steps := r.Stats().Steps - before; steps > 1 {
		t.Errorf("sequences freed after %d decode steps, want at most 1", steps)
	}

	// All sequences are free again: new requests start at once and run.
	short := long
	short.MaxTokens = 5
	var done sync.WaitGroup
	for range 4 {
		done.Go(func() {
			if _, err := e.Generate(context.Background(), short); err != nil {
				t.Error(err)
			}
		})
	}
	done.Wait()
}
