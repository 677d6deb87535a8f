package runner

import (
	"math"
	"slices"
	"testing"
)

func TestTopTokens(t *testing.T) {
	for name, c := range map[string]struct {
		logits []float32
		k      int
		want   []int
	}{
		"largest first":     {[]float32{1, 5, 3, 4, 2}, 3, []int{1, 3, 2}},
		"ties by lower id":  {[]float32{2, 7, 7, 1, 7}, 2, []int{1, 2}},
		"all of them":       {[]float32{0, -1, 3}, 5, []int{2, 0, 1}},
		"none":              {[]float32{1, 2}, 0, nil},
		"negative infinity": {[]float32{float32(math.Inf(-1)), -3, float32(math.Inf(-1))}, 2, []int{1, 0}},
		"the last is best":  {[]float32{1, 1, 1, 9}, 1, []int{3}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := TopTokens(c.logits, c.k); !slices.Equal(got, c.want) {
				t.Errorf("TopTokens(%v, %d) = %v, want %v", c.logits, c.k, got, c.want)
			}
		})
	}
}
