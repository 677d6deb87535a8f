//go:build cgo

package inference_test

import (
	"sync"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// Loading reports its progress per file, rising to 1; a file that two ids
// name is loaded, and reported, once.
func TestLoadProgress(t *testing.T) {
	path := inferencetest.Model(t, inferencetest.Options{Layers: 4})
	var mu sync.Mutex
	var seen []float64
	e := newEngine(t, inference.Config{
		Models: []catalog.Model{{ID: "a", Path: path}, {ID: "b", Aliases: []string{"c"}, Path: path}},
		Progress: func(p string, f float64) {
			mu.Lock()
			defer mu.Unlock()
			if p != path {
				t.Errorf("progress for %q, want %q", p, path)
			}
			seen = append(seen, f)
		},
	})
	if len(seen) < 2 || seen[len(seen)-1] != 1 {
		t.Fatalf("progress %v, want steps rising to 1", seen)
	}
	ones := 0
	for i, f := range seen {
		if i > 0 && f < seen[i-1] {
			t.Errorf("progress went back: %v", seen)
		}
		if f == 1 {
			ones++
		}
	}
	if ones != 1 {
		t.Errorf("progress reached 1 %d times, want once: the shared file loads once", ones)
	}
	if infos := e.Models(); len(infos) != 2 || infos[1].ID != "b" || infos[1].Aliases[0] != "c" || infos[0].Path != infos[1].Path {
		t.Errorf("models %+v", infos)
	}
}
