//go:build cgo

package inferencetest_test

import (
	"context"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// TestWeights: trained values reach the engine. An output layer of zeros
// makes every next token equally likely; a row of ones for one token
// makes it the likeliest. Bad names and lengths are refused.
func TestWeights(t *testing.T) {
	opts := inferencetest.Options{Arch: "qwen3"}
	vocab := len(inferencetest.ByteLevel().Tokens)
	out := make([]float32, 64*vocab)
	for i := range 64 {
		out['z'*64+i] = 1 // the row of the token "z"
	}
	opts.Weights = map[string][]float32{"output.weight": out}
	eng, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "m", Path: inferencetest.Model(t, opts)}},
		Threads: 1, Parallel: 1, ContextTokens: 256, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	res, err := eng.Score(context.Background(), inference.ScoreRequest{Model: "m", Prefix: "hello",
		Branches: []inference.Branch{{Text: " world", Candidates: [][]int{{'a'}, {'b'}, {'z'}}}}})
	if err != nil {
		t.Fatal(err)
	}
	lp := res.Branches[0].LogProbs
	if math.Abs(lp[0]-lp[1]) > 1e-6 || lp[2] <= lp[0] {
		t.Errorf("log-probabilities of a, b, z: %v; want a and b equal, z above", lp)
	}

	for _, c := range []struct {
		weights map[string][]float32
		want    string
	}{
		{map[string][]float32{"output.weight": out[:10]}, "has 10 values"},
		{map[string][]float32{"blk.9.attn_q.weight": out}, "no tensor"},
	} {
		opts.Weights = c.weights
		if err := inferencetest.WriteModel(t.TempDir()+"/m.gguf", opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v", c.want, err)
		}
	}
}
