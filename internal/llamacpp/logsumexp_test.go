package llamacpp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
)

// logSumExpGo is the plain float64 reference.
func logSumExpGo(x []float32) float64 {
	hi := math.Inf(-1)
	for _, v := range x {
		hi = max(hi, float64(v))
	}
	var sum float64
	for _, v := range x {
		sum += math.Exp(float64(v) - hi)
	}
	return hi + math.Log(sum)
}

func vocabLogits(n int, spread float64) []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * spread)
	}
	return x
}

func TestLogSumExp(t *testing.T) {
	for name, x := range map[string][]float32{
		"narrow":         vocabLogits(151936, 1),
		"trained":        vocabLogits(151936, 8), // most logits far below the top
		"one":            {3.5},
		"huge":           {1e30, 1e30 - 1},
		"minus infinity": {float32(math.Inf(-1)), 0},
	} {
		got, want := LogSumExp(x), logSumExpGo(x)
		if math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
		// The seam's Go, which backends without their own use.
		if got := backend.LogSumExp(nil, x); math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
			t.Errorf("%s: backend.LogSumExp %v, want %v", name, got, want)
		}
	}
	if got := LogSumExp(nil); !math.IsInf(got, -1) {
		t.Errorf("no logits: %v", got)
	}
}

func BenchmarkLogSumExp(b *testing.B) {
	x := vocabLogits(151936, 1)
	b.Run("c", func(b *testing.B) {
		for range b.N {
			LogSumExp(x)
		}
	})
	b.Run("go", func(b *testing.B) {
		for range b.N {
			logSumExpGo(x)
		}
	})
	b.Run("backend", func(b *testing.B) {
		for range b.N {
			backend.LogSumExp(nil, x)
		}
	})
}
