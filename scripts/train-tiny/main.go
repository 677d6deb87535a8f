// Command train-tiny makes the tiny trained chat model (issue 32): it
// writes synthetic conversations as the engine tokenizes them, and, once
// train.py has trained on them, writes the trained weights as a GGUF file
// and measures each skill's accuracy on the held-out split through the
// engine itself. Every step is deterministic from its seed:
//
//	go run ./scripts/train-tiny data  -dir .build/train -seed 1
//	/usr/bin/python3 scripts/train-tiny/train.py .build/train --steps 2600
//	/usr/bin/python3 scripts/train-tiny/train.py .build/train --resume --steps 3400 --lr 2e-3
//	go run ./scripts/train-tiny write -dir .build/train -out .build/train/chat.gguf
//	go run ./scripts/train-tiny eval  -dir .build/train -model .build/train/chat.gguf
//
// make train-tiny runs the four. The model's shape and skills are
// internal/tinychat's.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest/tinychat"
	"github.com/inferkit/inferkit/internal/tinymodel"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: train-tiny data|write|eval [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", ".build/train", "the training folder")
	seed := fs.Uint64("seed", 1, "the data's seed")
	train := fs.Int("train", 6000, "training conversations per skill")
	test := fs.Int("test", 200, "held-out conversations per skill")
	out := fs.String("out", "", "the GGUF file to write")
	model := fs.String("model", "", "the GGUF file to evaluate")
	fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "data":
		err = writeData(*dir, *seed, *train, *test)
	case "write":
		err = writeModel(*dir, *out)
	case "eval":
		err = evaluate(*dir, *model)
	default:
		err = fmt.Errorf("unknown step %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "train-tiny:", err)
		os.Exit(1)
	}
}

// sequence is one training sequence: the tokens, and which of them the
// loss counts (the answer's, and its end of turn).
type sequence struct {
	Skill  string `json:"skill"`
	Tokens []int  `json:"tokens"`
	Target []int  `json:"target"` // [start, end) of the answer's tokens
}

// skeleton loads the model's shape with random weights, for the engine
// to render and tokenize conversations exactly as it will for the
// trained model.
func skeleton(dir string) (*inference.Engine, func(), error) {
	path := filepath.Join(dir, "skeleton.gguf")
	if err := tinymodel.WriteModel(path, tinychat.Shape()); err != nil {
		return nil, nil, err
	}
	return load(path)
}

func load(path string) (*inference.Engine, func(), error) {
	eng, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "tiny", Path: path}},
		Parallel: 4, ContextTokens: 1024, Threads: 2, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, nil, err
	}
	return eng, func() { eng.Close() }, nil
}

func writeData(dir string, seed uint64, nTrain, nTest int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	eng, done, err := skeleton(dir)
	if err != nil {
		return err
	}
	defer done()
	for _, split := range []struct {
		name string
		n    int
	}{{"train", nTrain}, {"test", nTest}} {
		r := tinychat.Stream(seed, split.name)
		f, err := os.Create(filepath.Join(dir, split.name+".jsonl"))
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		longest := 0
		for _, ex := range tinychat.Examples(r, split.n) {
			seq, err := tokenize(eng, ex)
			if err != nil {
				return fmt.Errorf("%s: %w", ex.Skill, err)
			}
			longest = max(longest, len(seq.Tokens))
			b, _ := json.Marshal(seq)
			w.Write(append(b, '\n'))
		}
		if err := w.Flush(); err != nil {
			return err
		}
		f.Close()
		fmt.Printf("%s: %d conversations per skill, %d skills, longest %d tokens\n", split.name, split.n, len(tinychat.Skills), longest)
	}
	o := tinychat.Shape()
	cfg := map[string]any{"layers": o.Layers, "embd": o.Embd, "heads": o.Heads, "kv_heads": o.KVHeads, "head_dim": o.HeadDim,
		"ff": o.FF, "vocab": len(tinymodel.ByteLevel().Tokens), "rope_base": 1e6, "rms_eps": 1e-6, "seed": seed, "test": nTest}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	return os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644)
}

// tokenize renders ex's conversation with the generation prompt and
// appends its answer and the end of turn, as the engine tokenizes them.
func tokenize(eng *inference.Engine, ex tinychat.Example) (sequence, error) {
	req := ex.Req
	req.Model = "tiny"
	prompt, err := eng.RenderPrompt(req)
	if err != nil {
		return sequence{}, err
	}
	p, err := eng.Tokenize("tiny", prompt)
	if err != nil {
		return sequence{}, err
	}
	a, err := eng.Tokenize("tiny", ex.Want+"<|im_end|>")
	if err != nil {
		return sequence{}, err
	}
	return sequence{Skill: ex.Skill, Tokens: append(p, a...), Target: []int{len(p), len(p) + len(a)}}, nil
}

// writeModel reads train.py's weights.bin and weights.json and writes
// the GGUF file.
func writeModel(dir, out string) error {
	if out == "" {
		return errors.New("write: -out is required")
	}
	var index map[string][2]int64 // name: offset and count of float32s
	b, err := os.ReadFile(filepath.Join(dir, "weights.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &index); err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(dir, "weights.bin"))
	if err != nil {
		return err
	}
	defer f.Close()
	weights := map[string][]float32{}
	for name, at := range index {
		v := make([]float32, at[1])
		if _, err := f.Seek(at[0]*4, io.SeekStart); err != nil {
			return err
		}
		if err := binary.Read(f, binary.LittleEndian, v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("%s holds %v", name, x)
			}
		}
		weights[name] = v
	}
	o := tinychat.Shape()
	o.Weights = weights
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := tinymodel.WriteModel(out, o); err != nil {
		return err
	}
	st, _ := os.Stat(out)
	fmt.Printf("wrote %s: %d tensors, %d bytes\n", out, len(weights), st.Size())
	return nil
}

// evaluate runs the held-out conversations of every skill through the
// engine, greedily, and prints each skill's exact accuracy.
func evaluate(dir, path string) error {
	eng, done, err := load(path)
	if err != nil {
		return err
	}
	defer done()
	var cfg struct {
		Seed uint64
		Test int
	}
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return err
	}
	json.Unmarshal(b, &cfg)
	if err := parity(eng, dir); err != nil {
		return err
	}
	results := map[string][2]int{}
	start := time.Now()
	for _, ex := range tinychat.Examples(tinychat.Stream(cfg.Seed, "test"), cfg.Test) {
		req := ex.Req
		zero := 0.0
		req.Model, req.Temperature, req.MaxTokens = "tiny", &zero, 96
		res, err := eng.Generate(context.Background(), req)
		r := results[ex.Skill]
		r[1]++
		if err == nil && ex.Check(res) {
			r[0]++
		} else if r[1]-r[0] <= 3 {
			fmt.Printf("  %s wrong: want %q, got %q %v %v\n", ex.Skill, ex.Want, res.Text, res.ToolCalls, err)
		}
		results[ex.Skill] = r
	}
	for _, sk := range tinychat.Skills {
		r := results[sk.Name]
		fmt.Printf("%-11s %4d/%-4d %.1f%%\n", sk.Name, r[0], r[1], 100*float64(r[0])/float64(max(1, r[1])))
	}
	fmt.Printf("evaluated in %v\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// parity compares the engine's next-token log-probabilities after one
// prompt with those train.py computed from the same weights.
func parity(eng *inference.Engine, dir string) error {
	var check struct {
		Prompt   []int
		Logprobs []float64
	}
	b, err := os.ReadFile(filepath.Join(dir, "check.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &check); err != nil {
		return err
	}
	tok := tinymodel.ByteLevel()
	var text []byte
	for _, t := range check.Prompt {
		if t < 256 {
			text = append(text, byte(t))
		} else {
			text = append(text, tok.Tokens[t]...)
		}
	}
	// The last prompt token is the branch, so that the candidates are
	// scored after it.
	cut := len(text) - 1
	br := inference.Branch{Text: string(text[cut:])}
	for i := range check.Logprobs {
		br.Candidates = append(br.Candidates, []int{i})
	}
	res, err := eng.Score(context.Background(), inference.ScoreRequest{Model: "tiny", Prefix: string(text[:cut]), Branches: []inference.Branch{br}})
	if err != nil {
		return err
	}
	worst := 0.0
	for i, lp := range res.Branches[0].LogProbs {
		worst = max(worst, math.Abs(lp-check.Logprobs[i]))
	}
	fmt.Printf("parity with train.py: next-token log-probabilities within %.2g\n", worst)
	if worst > 1e-2 {
		return fmt.Errorf("the engine's log-probabilities differ from train.py's by %v: the model is not the one trained", worst)
	}
	return nil
}
