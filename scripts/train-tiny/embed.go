package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest/tinyembed"
	"github.com/inferkit/inferkit/internal/tinymodel"
)

// The embedding model (package inferencetest/tinyembed) is trained on
// paraphrase pairs: -model embed on each step.

// embedPair is one training row: the tokens of two phrasings of a fact
// and of a near fact, each wrapped in [CLS] and [SEP] as the engine
// wraps an input.
type embedPair struct {
	A     []int `json:"a"`
	B     []int `json:"b"`
	Apart []int `json:"apart"`
}

// wordPiece's [CLS] and [SEP] (internal/tinymodel).
const cls, sep = 2, 3

func writeEmbedData(dir string, seed uint64, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	o := tinyembed.Shape()
	path := filepath.Join(dir, "skeleton.gguf")
	if err := tinymodel.WriteModel(path, o); err != nil {
		return err
	}
	eng, done, err := load(path)
	if err != nil {
		return err
	}
	defer done()
	tokens := func(s string) ([]int, error) {
		t, err := eng.Tokenize("tiny", s)
		return append(append([]int{cls}, t...), sep), err
	}
	f, err := os.Create(filepath.Join(dir, "train.jsonl"))
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	longest := 0
	for _, p := range tinyembed.Pairs(tinyembed.Stream(seed, "train"), n) {
		var row embedPair
		for _, s := range []struct {
			text string
			to   *[]int
		}{{p.A, &row.A}, {p.B, &row.B}, {p.Apart, &row.Apart}} {
			if *s.to, err = tokens(s.text); err != nil {
				return err
			}
			longest = max(longest, len(*s.to))
		}
		b, _ := json.Marshal(row)
		w.Write(append(b, '\n'))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Printf("train: %d paraphrase pairs, longest %d tokens\n", n, longest)
	cfg := map[string]any{"arch": o.Arch, "layers": o.Layers, "embd": o.Embd, "heads": o.Heads, "ff": o.FF,
		"vocab": tinymodel.WordPieceSize, "rope_base": 1000, "norm_eps": 1e-12, "seed": seed}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	return os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644)
}

// probes is how many held-out probes evaluateEmbed measures.
const probes = 1000

// evaluateEmbed checks that the engine embeds as train.py did, then
// measures the share of held-out probes whose right candidate is the
// nearest to the query, for the trained model and, to compare, for the
// random weights of the data step's skeleton.
func evaluateEmbed(dir, path string, seed uint64) error {
	eng, done, err := load(path)
	if err != nil {
		return err
	}
	defer done()
	var check struct {
		Tokens    []int
		Embedding []float64
	}
	b, err := os.ReadFile(filepath.Join(dir, "check.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &check); err != nil {
		return err
	}
	// The engine wraps tokens in [CLS] and [SEP] itself.
	res, err := eng.Embed(context.Background(), inference.EmbedRequest{Model: "tiny", Tokens: [][]int{check.Tokens[1 : len(check.Tokens)-1]}})
	if err != nil {
		return err
	}
	worst := 0.0
	for i, v := range res.Embeddings[0] {
		worst = max(worst, math.Abs(float64(v)-check.Embedding[i]))
	}
	fmt.Printf("parity with train.py: embedding within %.2g\n", worst)
	if worst > 1e-2 {
		return fmt.Errorf("the engine's embedding differs from train.py's by %v: the model is not the one trained", worst)
	}
	start := time.Now()
	right, err := probeAccuracy(eng, seed, true)
	if err != nil {
		return err
	}
	fmt.Printf("held out: %d/%d probes right (%.1f%%), in %v\n", right, probes, 100*float64(right)/probes, time.Since(start).Round(time.Millisecond))
	random, done, err := load(filepath.Join(dir, "skeleton.gguf"))
	if err != nil {
		return err
	}
	defer done()
	if right, err = probeAccuracy(random, seed, false); err != nil {
		return err
	}
	fmt.Printf("untrained (random weights of the same shape): %d/%d probes right (%.1f%%)\n", right, probes, 100*float64(right)/probes)
	return nil
}

// probeAccuracy is how many of the held-out probes of seed eng's model
// embeds the right candidate nearest the query of, printing the first
// misses when say is set.
func probeAccuracy(eng *inference.Engine, seed uint64, say bool) (int, error) {
	right := 0
	for i, p := range tinyembed.Probes(tinyembed.Stream(seed, "test"), probes) {
		res, err := eng.Embed(context.Background(), inference.EmbedRequest{Model: "tiny", Input: append([]string{p.Query}, p.Candidates...)})
		if err != nil {
			return 0, err
		}
		if got := tinyembed.Nearest(res.Embeddings[0], res.Embeddings[1:]); got == p.Right {
			right++
		} else if say && i-right < 3 {
			fmt.Printf("  wrong: %q nearest %q, not %q\n", p.Query, p.Candidates[got], p.Candidates[p.Right])
		}
	}
	return right, nil
}
