package backendtest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/internal/backend"
)

// BenchText is English text that benchmarks tokenize into prompts.
const BenchText = "The quick brown fox jumps over the lazy dog while the river runs past the old mill and the children sing in the square. "

// BenchTokens is the first n tokens of BenchText repeated, on m.
func BenchTokens(tb testing.TB, m backend.Model, n int) []backend.Token {
	tb.Helper()
	toks, err := m.Tokenize(strings.Repeat(BenchText, n/8+1), false)
	if err != nil || len(toks) < n {
		tb.Fatalf("tokenize: %d tokens, %v", len(toks), err)
	}
	return toks[:n]
}

// DecodeStreams is the bare decode loop that benchmarks compare the
// engine with: it clears ctx, prefills prompt on each of sequences 0 to
// n-1 (ctx must have that many), and then decodes generate-1 greedy
// tokens of all n in each batch, with nothing around the backend. It
// returns how long those decodes took.
func DecodeStreams(tb testing.TB, m backend.Model, ctx backend.Context, batch backend.Batch, prompt []backend.Token, n, generate int) time.Duration {
	tb.Helper()
	ctx.Clear()
	next := make([]backend.Token, n)
	samplers := make([]backend.Sampler, n)
	for s := range n {
		sm, err := m.NewSampler(backend.SamplerParams{Ban: m.EOGTokens()})
		if err != nil {
			tb.Fatal(err)
		}
		defer sm.Close()
		samplers[s] = sm
		batch.Clear()
		for i, t := range prompt {
			if _, err := batch.Add(t, i, []int{s}, i == len(prompt)-1); err != nil {
				tb.Fatal(err)
			}
		}
		if err := ctx.Decode(batch); err != nil {
			tb.Fatal(err)
		}
		next[s] = sm.Sample(ctx, len(prompt)-1, nil)
	}
	start := time.Now()
	for step := range generate - 1 {
		batch.Clear()
		for s := range n {
			if _, err := batch.Add(next[s], len(prompt)+step, []int{s}, true); err != nil {
				tb.Fatal(err)
			}
		}
		if err := ctx.Decode(batch); err != nil {
			tb.Fatal(err)
		}
		for s := range n {
			next[s] = samplers[s].Sample(ctx, s, nil)
		}
	}
	return time.Since(start)
}

// SteadyWindow counts, of the arrival times of each stream's tokens, those
// in the window in which every stream generates: from the last first
// token to the first last token. Streams admitted one decode step apart
// compare with DecodeStreams there. Every stream must have a token.
func SteadyWindow(arrivals [][]time.Time) (tokens int, elapsed time.Duration) {
	start, end := arrivals[0][0], arrivals[0][len(arrivals[0])-1]
	for _, a := range arrivals {
		if a[0].After(start) {
			start = a[0]
		}
		if last := a[len(a)-1]; last.Before(end) {
			end = last
		}
	}
	for _, a := range arrivals {
		for _, t := range a {
			if t.After(start) && !t.After(end) {
				tokens++
			}
		}
	}
	return tokens, end.Sub(start)
}

// Median is the middle of xs (the upper one of an even count), which
// benchmarks report of their interleaved rounds.
func Median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}
