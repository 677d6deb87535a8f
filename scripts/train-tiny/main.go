// Command train-tiny makes the tiny trained models of packages
// inferencetest/tinychat and inferencetest/tinyembed (issue 32). For the
// chat model it writes the synthetic conversations and decisions of
// tinychat as the engine tokenizes them, and, once train.py has trained
// on them, writes the trained weights as a GGUF file and measures each
// skill's accuracy on the held-out split, and the decisions'
// calibration, through the engine itself; for the embedding model (-kind
// embed), the paraphrase pairs of tinyembed, then its held-out probes.
// Every step is deterministic from its seed (and train.py from its
// thread count):
//
//	go run ./scripts/train-tiny data  -dir .build/train -seed 1
//	/usr/bin/python3 scripts/train-tiny/train.py .build/train --threads 2 --steps 6000
//	go run ./scripts/train-tiny write -dir .build/train -out .build/train/chat.gguf
//	go run ./scripts/train-tiny eval  -dir .build/train -model .build/train/chat.gguf
//
//	go run ./scripts/train-tiny data  -kind embed -dir .build/train-embed -seed 1
//	/usr/bin/python3 scripts/train-tiny/train.py .build/train-embed --threads 2 --steps 300 --batch 64
//	go run ./scripts/train-tiny write -dir .build/train-embed -out .build/train-embed/embed.gguf
//	go run ./scripts/train-tiny eval  -dir .build/train-embed -model .build/train-embed/embed.gguf
//
// make train-tiny runs them all.
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
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest/tinychat"
	"github.com/inferkit/inferkit/inference/inferencetest/tinyembed"
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
	kind := fs.String("kind", "chat", "the model to make data for: chat (tinychat) or embed (tinyembed)")
	pairs := fs.Int("pairs", 30000, "training paraphrase pairs, for -kind embed")
	out := fs.String("out", "", "the GGUF file to write")
	model := fs.String("model", "", "the GGUF file to evaluate")
	fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "data":
		switch *kind {
		case "chat":
			err = writeData(*dir, *seed, *train, *test)
		case "embed":
			err = writeEmbedData(*dir, *seed, *pairs)
		default:
			err = fmt.Errorf("-kind %q: want chat or embed", *kind)
		}
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

// skeleton loads the model's shape with random weights and the
// vocabulary of merges, for the engine to render and tokenize
// conversations exactly as it will for the trained model.
func skeleton(dir string, merges []string) (*inference.Engine, func(), error) {
	path := filepath.Join(dir, "skeleton.gguf")
	if err := tinymodel.WriteModel(path, tinychat.Shape(merges)); err != nil {
		return nil, nil, err
	}
	return load(path)
}

// vocabMerges is how many merges the vocabulary learns.
const vocabMerges = 400

// learnVocabulary learns the vocabulary's merges from the rendered
// conversations of the first 500 of each skill of the training split,
// and writes them to merges.json.
func learnVocabulary(dir string, seed uint64) ([]string, error) {
	eng, done, err := skeleton(dir, nil)
	if err != nil {
		return nil, err
	}
	defer done()
	f, err := newFramer(eng)
	if err != nil {
		return nil, err
	}
	var texts []string
	for _, ex := range tinychat.Examples(tinychat.Stream(seed, "train"), 500) {
		prompt, answer, err := f.render(ex)
		if err != nil {
			return nil, err
		}
		texts = append(texts, prompt+answer)
	}
	merges := learnMerges(texts, vocabMerges)
	b, _ := json.MarshalIndent(merges, "", " ")
	return merges, os.WriteFile(filepath.Join(dir, "merges.json"), b, 0o644)
}

// readMerges reads the merges learnVocabulary wrote.
func readMerges(dir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "merges.json"))
	if err != nil {
		return nil, err
	}
	var merges []string
	return merges, json.Unmarshal(b, &merges)
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
	merges, err := learnVocabulary(dir, seed)
	if err != nil {
		return err
	}
	eng, done, err := skeleton(dir, merges)
	if err != nil {
		return err
	}
	defer done()
	fr, err := newFramer(eng)
	if err != nil {
		return err
	}
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
			seq, err := fr.tokenize(ex)
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
	o := tinychat.Shape(merges)
	cfg := map[string]any{"layers": o.Layers, "embd": o.Embd, "heads": o.Heads, "kv_heads": o.KVHeads, "head_dim": o.HeadDim,
		"ff": o.FF, "vocab": len(o.Tokenizer.Tokens), "rope_base": 1e6, "rms_eps": 1e-6, "seed": seed, "test": nTest}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	return os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644)
}

// A framer renders examples as the engine's model "tiny" reads them.
type framer struct {
	eng *inference.Engine
	ev  *decision.Evaluator
}

func newFramer(eng *inference.Engine) (*framer, error) {
	ev, err := decision.New(decision.Config{Engine: eng, Model: "tiny"})
	return &framer{eng, ev}, err
}

// render is ex's prompt text, up to the answer, and the answer's text: a
// conversation rendered with the generation prompt, or a decision framed
// by decision.Evaluator, its answer the right option's label.
func (f *framer) render(ex tinychat.Example) (prompt, answer string, err error) {
	if ex.Decision == nil {
		req := ex.Req
		req.Model = "tiny"
		prompt, err := f.eng.RenderPrompt(req)
		return prompt, ex.Want, err
	}
	req, err := decisionOf(ex)
	if err != nil {
		return "", "", err
	}
	ps, err := f.ev.Prompts(req)
	if err != nil {
		return "", "", err
	}
	return ps[0].Text, ps[0].Labels[ex.Answer], nil
}

// tokenize is ex's training sequence: its prompt, its answer and the end
// of turn, as the engine tokenizes them.
func (f *framer) tokenize(ex tinychat.Example) (sequence, error) {
	prompt, answer, err := f.render(ex)
	if err != nil {
		return sequence{}, err
	}
	p, err := f.eng.Tokenize("tiny", prompt)
	if err != nil {
		return sequence{}, err
	}
	a, err := f.eng.Tokenize("tiny", answer+"<|im_end|>")
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
	cfg, err := readConfig(dir)
	if err != nil {
		return err
	}
	o := tinyembed.Shape()
	if cfg.Arch != o.Arch {
		merges, err := readMerges(dir)
		if err != nil {
			return err
		}
		o = tinychat.Shape(merges)
	}
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

// config is what the data step wrote to config.json that the later
// steps read: the architecture (the embedding model's, or none for the
// chat model), the seed, and the held-out conversations per skill.
type config struct {
	Arch string
	Seed uint64
	Test int
}

func readConfig(dir string) (config, error) {
	var cfg config
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return cfg, err
	}
	return cfg, json.Unmarshal(b, &cfg)
}

// evaluate runs the held-out conversations of every skill through the
// engine, greedily, and prints each skill's exact accuracy.
func evaluate(dir, path string) error {
	cfg, err := readConfig(dir)
	if err != nil {
		return err
	}
	if cfg.Arch == tinyembed.Shape().Arch {
		return evaluateEmbed(dir, path, cfg.Seed)
	}
	eng, done, err := load(path)
	if err != nil {
		return err
	}
	defer done()
	if err := parity(eng, dir); err != nil {
		return err
	}
	ev, err := decision.New(decision.Config{Engine: eng, Model: "tiny"})
	if err != nil {
		return err
	}
	results := map[string][2]int{}
	decided := map[string][]decision.Example{}
	chance := map[string]float64{} // the sum of |p(yes) − chance of yes|
	start := time.Now()
	for _, ex := range tinychat.Examples(tinychat.Stream(cfg.Seed, "test"), cfg.Test) {
		var right bool
		var got any
		if ex.Decision != nil {
			x, err := decide(ev, ex)
			if err != nil {
				return err
			}
			decided[ex.Skill] = append(decided[ex.Skill], x)
			if ex.Chance != nil {
				chance[ex.Skill] += math.Abs(x.Probabilities[0] - ex.Chance[0])
			}
			right, got = x.Likeliest() == ex.Answer, x.Probabilities
		} else {
			req := ex.Req
			zero := 0.0
			req.Model, req.Temperature, req.MaxTokens = "tiny", &zero, 96
			res, err := eng.Generate(context.Background(), req)
			right, got = err == nil && ex.Check(res), fmt.Sprintf("%q %v %v", res.Text, res.ToolCalls, err)
		}
		r := results[ex.Skill]
		r[1]++
		if right {
			r[0]++
		} else if r[1]-r[0] <= 3 {
			fmt.Printf("  %s wrong: want %q (option %d), got %v\n", ex.Skill, ex.Want, ex.Answer, got)
		}
		results[ex.Skill] = r
	}
	for _, sk := range tinychat.Skills {
		r := results[sk.Name]
		fmt.Printf("%-13s %4d/%-4d %.1f%%", sk.Name, r[0], r[1], 100*float64(r[0])/float64(max(1, r[1])))
		if c, ok := chance[sk.Name]; ok {
			fmt.Printf("  (answers drawn at random; the model's p(yes) is within %.3f of the chance it was drawn with, on average)", c/float64(r[1]))
		}
		fmt.Println()
	}
	var all []decision.Example
	for _, sk := range tinychat.Skills {
		all = append(all, decided[sk.Name]...)
	}
	for _, set := range []struct {
		name string
		xs   []decision.Example
	}{{"decide_rain", decided["decide_rain"]}, {"all decisions", all}} {
		if err := calibration(set.name, set.xs); err != nil {
			return err
		}
	}
	fmt.Printf("evaluated in %v\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// decisionOf is ex's decision request, for the model "tiny".
func decisionOf(ex tinychat.Example) (decision.Request, error) {
	var req decision.Request
	if err := json.Unmarshal(ex.Decision, &req); err != nil {
		return req, fmt.Errorf("%s: %w", ex.Skill, err)
	}
	req.Model = "tiny"
	return req, req.Validate(false)
}

// decide answers ex's decision and returns it as a calibration example.
func decide(ev *decision.Evaluator, ex tinychat.Example) (decision.Example, error) {
	req, err := decisionOf(ex)
	if err != nil {
		return decision.Example{}, err
	}
	res, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		return decision.Example{}, err
	}
	return decision.ExampleOf(req.Questions["q"], res.Answers["q"], ex.Answer)
}

// calibration prints decision.Calibrate's report of xs: a temperature
// fitted on the even ones, measured on the odd.
func calibration(name string, xs []decision.Example) error {
	var fit, held []decision.Example
	for i, x := range xs {
		if i%2 == 0 {
			fit = append(fit, x)
		} else {
			held = append(held, x)
		}
	}
	r, err := decision.Calibrate(fit, held)
	if err != nil {
		return err
	}
	fmt.Printf("calibration of %s (%d fitted, %d held out): temperature %.3f\n", name, r.Fitted, len(held), r.Temperature)
	for _, m := range []struct {
		when string
		m    decision.Metrics
	}{{"before", r.Before}, {"after", r.After}} {
		fmt.Printf("  %-6s accuracy %.3f  log loss %.3f  Brier %.3f  ECE %.3f\n", m.when, m.m.Accuracy, m.m.LogLoss, m.m.Brier, m.m.ECE)
	}
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
	merges, err := readMerges(dir)
	if err != nil {
		return err
	}
	tok := tinychat.Vocabulary(merges)
	byteOf := map[rune]byte{}
	for b := range 256 {
		byteOf[[]rune(tok.Tokens[b])[0]] = byte(b)
	}
	var text []byte
	last := 0
	for _, t := range check.Prompt {
		n := len(text)
		if tok.Types[t] == tinymodel.TokenNormal {
			for _, c := range tok.Tokens[t] {
				text = append(text, byteOf[c])
			}
		} else {
			text = append(text, tok.Tokens[t]...)
		}
		last = len(text) - n
	}
	// The last prompt token is the branch, so that the candidates are
	// scored after it.
	cut := len(text) - last
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
