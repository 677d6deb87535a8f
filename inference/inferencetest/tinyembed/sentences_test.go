package tinyembed

import (
	"slices"
	"testing"
)

// Probes and pairs are the same from the same seed, and the splits
// differ; each probe's candidates are distinct sentences other than the
// query, and each pair's two phrasings differ.
func TestSentences(t *testing.T) {
	a, b := Probes(Stream(1, "test"), 200), Probes(Stream(1, "test"), 200)
	if !slices.EqualFunc(a, b, func(x, y Probe) bool { return x.Query == y.Query && slices.Equal(x.Candidates, y.Candidates) }) {
		t.Fatal("one seed gave two sets of probes")
	}
	if train := Probes(Stream(1, "train"), 1); train[0].Query == a[0].Query {
		t.Error("the splits drew one probe")
	}
	rights := map[int]int{}
	for _, p := range a {
		rights[p.Right]++
		if len(p.Candidates) != 4 || slices.Contains(p.Candidates, p.Query) {
			t.Fatalf("probe %+v", p)
		}
		c := slices.Clone(p.Candidates)
		slices.Sort(c)
		if len(slices.Compact(c)) != 4 {
			t.Errorf("probe %+v repeats a candidate", p)
		}
	}
	if len(rights) != 4 {
		t.Errorf("the right candidate is at %v only", rights)
	}
	for _, p := range Pairs(Stream(1, "train"), 200) {
		if p.A == p.B || p.B == p.Apart || p.A == p.Apart {
			t.Errorf("pair %+v", p)
		}
	}
}

func TestNearest(t *testing.T) {
	q := []float64{1, 0}
	if got := Nearest(q, [][]float64{{0, 1}, {0.8, 0.6}, {-1, 0}}); got != 1 {
		t.Errorf("nearest %d, want 1", got)
	}
	if got := Nearest(q, nil); got != -1 {
		t.Errorf("no candidates: %d, want -1", got)
	}
	if got := Nearest([]float32{0, 1}, [][]float32{{0, -1}, {0, -1}}); got != 0 {
		t.Errorf("equals: %d, want the first", got)
	}
}
