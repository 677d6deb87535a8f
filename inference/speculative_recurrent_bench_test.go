//go:build cgo

package inference_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/backend/backendtest"
	"github.com/inferkit/inferkit/internal/runner"
	"github.com/inferkit/inferkit/internal/testmodels"
)

// BenchmarkSpeculativeRecurrent measures drafting on a recurrent state
// that rolls back: the Qwen3.5-0.8B-shaped file on the library
// (libllama), one stream, greedy, -spec-threads threads. Decode tokens
// per second of an engine without a drafter (plain: no snapshots kept),
// and of one with a replay drafter, not drafting (off: the snapshots'
// cost alone) and right at 0, 75 and 100% of the positions, in three
// interleaved rounds; each reports its median against plain's:
//
//	go test -run '^$' -bench SpeculativeRecurrent -benchtime 1x ./inference
func BenchmarkSpeculativeRecurrent(b *testing.B) {
	path := testmodels.Qwen35Bench(b)
	lib := inference.LibraryFor(b, backend.LibLlama)
	sw := &switchable{}
	e, err := inference.New(inference.WithDrafter(inference.Config{Models: []catalog.Model{{ID: "m", Path: path}}, Parallel: 1,
		ContextTokens: benchPerSeq, Threads: *specThreads, Backend: backend.LibLlama, Library: lib, DraftRecurrent: true}, sw))
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	plain, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "m", Path: path}}, Parallel: 1,
		ContextTokens: benchPerSeq, Threads: *specThreads, Backend: backend.LibLlama, Library: lib, Draft: inference.DraftNone})
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close()
	zero := 0.0
	off := false
	req := inference.Request{Model: "m", Prompt: strings.Repeat(benchText, 5), MaxTokens: specGenerate, Temperature: &zero, IgnoreEOS: true}
	// The replay's continuation: what a run was asked to follow.
	replay := &runner.Replay{}
	sw.d = replay
	if _, err := e.Generate(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	want := replay.Seen
	names := []string{"plain", "off", "replay=0", "replay=75", "replay=100"}
	rates := map[string][]float64{}
	for range b.N {
		for range 3 {
			for _, name := range names {
				r, on := req, e
				switch name {
				case "plain":
					on = plain
				case "off":
					r.Speculative = &off
				default:
					pct, _ := strconv.Atoi(strings.TrimPrefix(name, "replay="))
					sw.d = &runner.Replay{Want: want, Percent: pct}
				}
				res, err := on.Generate(context.Background(), r)
				if err != nil {
					b.Fatal(err)
				}
				rates[name] = append(rates[name], float64(res.Usage.CompletionTokens-1)/res.Timings.Decode.Seconds())
			}
		}
	}
	base := backendtest.Median(rates["plain"])
	for _, name := range names {
		m := backendtest.Median(rates[name])
		b.ReportMetric(m, name+"-tok/s")
		b.Logf("%s: %.2f tok/s, %.2fx (rounds %.2f)", name, m, m/base, rates[name])
	}
}
