package runner

import "slices"

// TopTokens returns the ids of the k largest logits, largest first, ties
// by lower id. It keeps k candidates sorted while it scans, so it costs
// one pass over the vocabulary for small k.
func TopTokens(logits []float32, k int) []int {
	k = min(k, len(logits))
	if k <= 0 {
		return nil
	}
	top := make([]int, 0, k+1)
	for id, l := range logits {
		if len(top) == k && l <= logits[top[k-1]] {
			continue
		}
		at, _ := slices.BinarySearchFunc(top, l, func(t int, l float32) int {
			if logits[t] >= l {
				return -1 // equal logits keep the lower id first
			}
			return 1
		})
		top = slices.Insert(top, at, id)
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}
