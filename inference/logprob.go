package inference

import (
	"math"
	"slices"
)

// MaxTopLogprobs is the most alternatives Request.TopLogprobs may ask for
// at each token.
const MaxTopLogprobs = 20

// MaxChoices is the most completions one Request may ask for
// (Request.Choices).
const MaxChoices = 16

// TokenLogprob is one generated token and its log-probability under the
// model: a log-softmax of the token's logits over the whole vocabulary,
// in float64, before sampling's temperature, penalties and truncation,
// so that it does not depend on how the token was sampled.
type TokenLogprob struct {
	// Token is the vocabulary entry's id.
	Token int
	// Bytes are the bytes the token stands for; a token may hold part of
	// a UTF-8 character.
	Bytes []byte
	// Logprob is the token's natural-log probability, at most 0.
	Logprob float64
	// Top are the most likely tokens at this position, most likely first
	// (ties by lower id), as many as the request's TopLogprobs.
	Top []TopLogprob
}

// TopLogprob is one of the most likely tokens at a position.
type TopLogprob struct {
	Token   int
	Bytes   []byte
	Logprob float64
}

// logSumExp is log Σ exp(l) over the logits, computed in float64 from the
// largest: the normaliser of a log-softmax. Logits more than 50 below the
// largest are left out: each adds less than 2e-22 to a sum of at least 1,
// so even a vocabulary of a million of them is below float64's precision,
// and a trained model's vocabulary is mostly such logits, whose exp is
// most of the cost.
func logSumExp(logits []float32) float64 {
	hi := math.Inf(-1)
	for _, l := range logits {
		hi = max(hi, float64(l))
	}
	var sum float64
	for _, l := range logits {
		if d := float64(l) - hi; d > -50 {
			sum += math.Exp(d)
		}
	}
	return hi + math.Log(sum)
}

// topTokens returns the ids of the k largest logits, largest first, ties
// by lower id. It keeps k candidates sorted while it scans, so it costs
// one pass over the vocabulary for small k.
func topTokens(logits []float32, k int) []int {
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
