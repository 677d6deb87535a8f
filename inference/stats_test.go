//go:build cgo

package inference

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/inferkit/inferkit/catalog"
)

// Stats counts the sequences at work and the requests waiting for one,
// per catalog entry, and Models reports each file's load time.
func TestStatsQueueAndActive(t *testing.T) {
	e, err := New(Config{Models: []catalog.Model{{ID: "s", Path: storiesModel(t)}, {ID: "t", Path: storiesModel(t)}},
		Parallel: 2, ContextTokens: 512, Queue: 4, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	infos := e.Models()
	if infos[0].LoadTime <= 0 || infos[1].LoadTime != infos[0].LoadTime {
		t.Errorf("load times %v and %v, want one positive time for the shared file", infos[0].LoadTime, infos[1].LoadTime)
	}
	want := func(queued, active int) func() bool {
		return func() bool {
			s := e.Stats()
			return len(s) == 2 && reflect.DeepEqual(s, []ModelStats{{ID: "s", Queued: queued, Active: active, Sequences: 2},
				{ID: "t", Queued: queued, Active: active, Sequences: 2}})
		}
	}
	if !want(0, 0)() {
		t.Fatalf("idle stats %+v", e.Stats())
	}

	zero := 0.0
	long := Request{Model: "s", Prompt: "Once upon a time", Temperature: &zero}
	started := make(chan struct{}, 3)
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
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
	<-started
	<-started
	waitFor(t, "2 active sequences and 1 queued request", want(1, 2))
	close(release)
	wg.Wait()
	waitFor(t, "idle stats", want(0, 0))
	e.Close()
	if s := e.Stats(); !reflect.DeepEqual(s, []ModelStats{{ID: "s"}, {ID: "t"}}) {
		t.Errorf("stats after Close %+v", e.Stats())
	}
}
