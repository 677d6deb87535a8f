package backend

import "math"

// LogSumExper is a Context that works out log-sum-exp itself, faster
// than LogSumExp's Go (llama.cpp's, in C).
type LogSumExper interface {
	// LogSumExp is LogSumExp of logits, by the same steps.
	LogSumExp(logits []float32) float64
}

// LogSumExp returns log Σ exp(l) over logits, from the largest: the
// normaliser of a log-softmax, so that a token's log-probability is its
// logit less this. Logits more than 50 below the largest are left out
// (each term is below 2e-22). It asks ctx when it is a LogSumExper, and
// works it out in Go otherwise (ctx nil included); the sum runs in
// float64.
func LogSumExp(ctx Context, logits []float32) float64 {
	if l, ok := ctx.(LogSumExper); ok {
		return l.LogSumExp(logits)
	}
	hi := float32(math.Inf(-1))
	for _, l := range logits {
		if l > hi { // a NaN is never the largest
			hi = l
		}
	}
	if math.IsInf(float64(hi), 0) {
		return float64(hi)
	}
	var sum float64
	for _, l := range logits {
		if d := float64(l) - float64(hi); d > -50 {
			sum += math.Exp(d)
		}
	}
	return float64(hi) + math.Log(sum)
}
