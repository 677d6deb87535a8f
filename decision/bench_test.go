//go:build cgo

package decision_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/testmodels"
)

// BenchmarkDecisionOptions answers one choice over a new ~200-token state
// on the Qwen3-0.6B-shaped model (its real tokenizer spells every digit
// as a token, so "001" to "255" are labels of three tokens): 3 options
// against 255. The time is the whole request: the state, the question
// listing its options, and the labels' tree.
func BenchmarkDecisionOptions(b *testing.B) {
	path := testmodels.Qwen3Bench(b)
	e, err := inference.New(inference.Config{
		Models:  []catalog.Model{{ID: "qwen3", Path: path, Kind: catalog.KindDecision}},
		Threads: runtime.NumCPU(), Parallel: 1, ContextTokens: 4096,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	ev, err := decision.New(decision.Config{Engine: e, Model: "qwen3"})
	if err != nil {
		b.Fatal(err)
	}
	var run atomic.Int64
	for _, n := range []int{3, decision.MaxOptions} {
		q := decision.Question{Type: decision.TypeChoice, Instructions: "Which category fits the message best?"}
		for i := range n {
			q.Options = append(q.Options, decision.Option{Name: fmt.Sprintf("category %d", i+1)})
		}
		b.Run(fmt.Sprintf("options=%d", n), func(b *testing.B) {
			var tokens int
			for range b.N {
				state := fmt.Sprintf("Message %d. ", run.Add(1)) + strings.Repeat("The parcel came late and the box was torn, so I want to know what happens next. ", 10)
				res, err := ev.Evaluate(context.Background(), decision.Request{Model: "qwen3", State: state, Questions: map[string]decision.Question{"category": q}})
				if err != nil {
					b.Fatal(err)
				}
				tokens = res.Usage.InputTokens
			}
			b.ReportMetric(float64(tokens), "input-tokens")
		})
	}
}
