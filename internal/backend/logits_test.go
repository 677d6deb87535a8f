package backend

import (
	"math"
	"testing"
)

func TestLogSumExp(t *testing.T) {
	for _, c := range []struct {
		name   string
		logits []float32
		want   float64
	}{
		{"none", nil, math.Inf(-1)},
		{"large", []float32{1000, 999, 998}, 1000 + math.Log(1+math.Exp(-1)+math.Exp(-2))},
		{"far below", []float32{0, -1e30}, 0},
		{"NaN skipped", []float32{float32(math.NaN()), 0, 0}, math.Log(2)},
		{"infinite", []float32{float32(math.Inf(1)), 0}, math.Inf(1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := LogSumExp(nil, c.logits); got != c.want && math.Abs(got-c.want) > 1e-12 {
				t.Errorf("LogSumExp(%v) = %v, want %v", c.logits, got, c.want)
			}
		})
	}
}

func TestLogSumExpNormalises(t *testing.T) {
	// Logits far from 0 must not overflow: the probabilities still sum to 1.
	logits := []float32{1000, 999, 998, -1e30}
	lse := LogSumExp(nil, logits)
	var sum float64
	for _, l := range logits {
		sum += math.Exp(float64(l) - lse)
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("probabilities sum to %v, want 1", sum)
	}
}

// sumExp is a LogSumExper that answers a fixed value.
type sumExp struct {
	Context
	v float64
}

func (s sumExp) LogSumExp([]float32) float64 { return s.v }

func TestLogSumExpAsksTheContext(t *testing.T) {
	if got := LogSumExp(sumExp{v: 7}, []float32{1}); got != 7 {
		t.Errorf("LogSumExp of a LogSumExper = %v, want its own 7", got)
	}
}
