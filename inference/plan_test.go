//go:build cgo

package inference

import (
	"runtime"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/llamacpp"
)

// The plan's weights are the tensors llama.cpp loads, and its KV bytes a
// cell what a sequence's saved state takes a token, for each cache type.
func TestPlanMatchesWhatLoads(t *testing.T) {
	path := inferencetest.Model(t, inferencetest.Options{Embd: 128, Heads: 2, KVHeads: 1, Layers: 3})
	m, err := llamacpp.LoadModel(path, llamacpp.ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	prompt, err := m.Tokenize(strings.Repeat("Cells hold keys and values. ", 8), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range []string{"f16", "q8_0", "q4_0"} {
		cfg := Config{Models: []catalog.Model{{ID: "a", Path: path}, {ID: "b", Path: path}}, Parallel: 2, ContextTokens: 256, Batch: 64,
			Branches: 2, BranchContext: 64, KeyCache: ct, ValueCache: ct}
		plan, err := Plan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Models) != 1 || len(plan.Models[0].IDs) != 2 {
			t.Fatalf("%s: one file, two ids: %+v", ct, plan)
		}
		mp := plan.Models[0]
		if mp.Weights != m.Size() {
			t.Errorf("weights %d, llama.cpp's %d", mp.Weights, m.Size())
		}
		cells := 2*256 + 64
		perCell := float64(mp.KV) / float64(cells)

		typ, _ := llamacpp.ParseCacheType(ct)
		ctx, err := llamacpp.NewContext(m, llamacpp.ContextParams{Context: 256, Threads: 1, KeyType: typ, ValueType: typ})
		if err != nil {
			t.Fatal(err)
		}
		b := llamacpp.NewBatch(ctx, len(prompt))
		for i, tok := range prompt {
			b.Add(tok, i, []int{0}, i == len(prompt)-1)
		}
		if err := ctx.Decode(b); err != nil {
			t.Fatal(err)
		}
		perToken := float64(ctx.SequenceStateSize(0)) / float64(len(prompt))
		b.Close()
		ctx.Close()
		// The state adds each cell's position and sequences, a few bytes.
		if perToken < perCell || perToken > perCell*1.15 {
			t.Errorf("%s: the plan counts %.0f bytes a cell, a saved state takes %.0f a token", ct, perCell, perToken)
		}
		if mp.Compute == 0 || mp.Total() != mp.Weights+mp.KV+mp.Compute || !strings.Contains(plan.String(), "total") {
			t.Errorf("%s: plan %+v\n%s", ct, mp, plan)
		}
	}
	if _, err := Plan(Config{Models: []catalog.Model{{ID: "a", Path: t.TempDir()}}}); err == nil {
		t.Error("a plan of a directory")
	}
}

// New refuses a configuration above its memory limit, naming the plan;
// without a limit it loads.
func TestMemoryLimit(t *testing.T) {
	path := inferencetest.Model(t, inferencetest.Options{})
	cfg := Config{Models: []catalog.Model{{ID: "a", Path: path}}, Threads: 1, ContextTokens: 256}
	plan, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MemoryLimit = int64(plan.Total()) - 1
	if e, err := New(cfg); err == nil || !strings.Contains(err.Error(), "memory limit") || !strings.Contains(err.Error(), path) {
		if e != nil {
			e.Close()
		}
		t.Fatalf("a limit one byte below the plan: %v", err)
	}
	for _, limit := range []int64{int64(plan.Total()), -1, 0} {
		cfg.MemoryLimit = limit
		e, err := New(cfg)
		if err != nil {
			t.Fatalf("limit %d: %v", limit, err)
		}
		e.Close()
	}
	if runtime.GOOS == "linux" && availableMemory() <= 0 {
		t.Error("MemAvailable unread on Linux")
	}
}

// A recurrent model's plan counts the checkpoints of its state
// (Config.CheckpointBytes); an attention model's does not.
func TestPlanCountsCheckpoints(t *testing.T) {
	for _, arch := range []string{"mamba", "jamba", "llama"} {
		path := inferencetest.Model(t, inferencetest.Options{Arch: arch})
		kv := map[int64]uint64{}
		for _, budget := range []int64{-1, 1 << 20} {
			plan, err := Plan(Config{Models: []catalog.Model{{ID: "a", Path: path}}, Threads: 1, ContextTokens: 256, CheckpointBytes: budget})
			if err != nil {
				t.Fatal(err)
			}
			kv[budget] = plan.Models[0].KV
		}
		want := uint64(1 << 20)
		if arch == "llama" {
			want = 0
		}
		if got := kv[1<<20] - kv[-1]; got != want {
			t.Errorf("%s: checkpoints of 1 MiB add %d bytes to the plan, want %d", arch, got, want)
		}
	}
}
