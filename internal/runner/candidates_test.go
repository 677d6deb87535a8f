package runner

import (
	"fmt"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
)

func TestNewCandidateTree(t *testing.T) {
	tree := NewCandidateTree([][]backend.Token{{1, 2, 3}, {1, 2, 4}, {1, 5}, {6}, {1, 2}})
	// Inner nodes: 1, 1-2. Deepest: 1-2, on one path that reads both.
	if len(tree.Paths) != 1 || fmt.Sprint(tree.Paths[0]) != "[1 2]" {
		t.Fatalf("paths %v, want [[1 2]]", tree.Paths)
	}
	if got := fmt.Sprint(tree.Reads[0]); got != "[1 2]" {
		t.Errorf("reads %v, want nodes 1 and 2", got)
	}
	// Two subtrees: the shared first token is read once.
	tree = NewCandidateTree([][]backend.Token{{0, 0, 1}, {0, 0, 2}, {0, 1, 1}, {0, 1, 2}, {1, 0, 0}, {1, 0, 1}})
	if got := fmt.Sprint(tree.Paths); got != "[[0 0] [0 1] [1 0]]" {
		t.Fatalf("paths %v", got)
	}
	reads := 0
	for _, r := range tree.Reads {
		for _, n := range r {
			if n >= 0 {
				reads++
			}
		}
	}
	// Inner nodes: 0, 0-0, 0-1, 1, 1-0.
	if reads != 5 || tree.Cells() != 6 || tree.Depth() != 2 {
		t.Errorf("%d reads, %d cells, depth %d; want 5, 6, 2", reads, tree.Cells(), tree.Depth())
	}
	// Single tokens decode nothing after the branch.
	if tree := NewCandidateTree([][]backend.Token{{1}, {2}}); len(tree.Paths) != 0 || tree.Depth() != 0 {
		t.Errorf("single tokens: paths %v", tree.Paths)
	}
}
