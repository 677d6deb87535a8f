// Command calibrate fits a decision model's calibration temperature from
// labelled examples and reports what it changes.
//
//	calibrate -model models/judge.gguf -data examples.jsonl
//
// Each line of the data is a JSON object:
//
//	{"state": "...", "question": {"type": "choice", "instructions": "...",
//	  "criteria": {"billing": null, "sales": null}}, "answer": "billing"}
//
// state is text or JSON, as in a decision request; question is one
// question of a request; answer is the right option's name for a choice,
// the right level's index for a score, and true or false for a noul. The
// command answers every question with the model at temperature 1, keeps a
// share of the examples out (-holdout), fits the temperature of least log
// loss on the rest, and prints accuracy, log loss, Brier score and
// expected calibration error on the held-out examples before and after,
// with the temperature to give the model's catalog entry
// (catalog.Model.Calibration, or examples/server's -calibration flag).
//
// Flags:
//
//	-model PATH     the GGUF file of the decision model (required)
//	-projector PATH its vision projector, for examples with images
//	-data PATH      the JSONL examples; "-" or none reads standard input
//	-holdout F      the share of examples measured and not fitted on
//	                (default 0.3)
//	-seed N         the seed of the split (default 1)
//	-ctx N          context tokens (default 4096)
//	-threads N      CPU threads (default: all cores)
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/inference"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "calibrate:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	model, projector, data string
	holdout                float64
	seed                   uint64
	ctx, threads           int
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.StringVar(&o.model, "model", "", "the GGUF file of the decision model")
	fs.StringVar(&o.projector, "projector", "", "its vision projector GGUF, for examples with images")
	fs.StringVar(&o.data, "data", "-", `the JSONL examples; "-" reads standard input`)
	fs.Float64Var(&o.holdout, "holdout", 0.3, "the share of examples held out to measure")
	fs.Uint64Var(&o.seed, "seed", 1, "the seed of the split")
	fs.IntVar(&o.ctx, "ctx", 4096, "context tokens")
	fs.IntVar(&o.threads, "threads", 0, "CPU threads (default: all cores)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.model == "":
		return o, errors.New("-model is required")
	case !(o.holdout > 0 && o.holdout < 1):
		return o, fmt.Errorf("-holdout is %v; want a share between 0 and 1", o.holdout)
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	in := stdin
	if o.data != "-" {
		f, err := os.Open(o.data)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	lines, err := readExamples(in)
	if err != nil {
		return err
	}
	const id = "model"
	m := catalog.Model{ID: id, Path: o.model, Projector: o.projector, Kind: catalog.KindDecision}
	eng, err := inference.New(inference.Config{Models: []catalog.Model{m}, ContextTokens: o.ctx, Threads: o.threads, Parallel: 1,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer eng.Close()
	ev, err := decision.New(decision.Config{Engine: eng, Model: id, Images: o.projector != ""})
	if err != nil {
		return err
	}
	examples := make([]decision.Example, len(lines))
	for i, l := range lines {
		if examples[i], err = l.evaluate(ctx, ev, id); err != nil {
			return fmt.Errorf("line %d: %w", l.line, err)
		}
	}
	train, heldOut := split(examples, o.holdout, o.seed)
	rep, err := decision.Calibrate(train, heldOut)
	if err != nil {
		return err
	}
	report(stdout, rep)
	return nil
}

// example is one line of the data.
type example struct {
	line     int
	request  decision.Request
	question decision.Question
	answer   int
}

// readExamples reads JSONL examples, naming the line of any that is
// wrong. Blank lines are skipped.
func readExamples(r io.Reader) ([]example, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var out []example
	n := 1
	for ; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		x, err := parseExample(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		x.line = n
		out = append(out, x)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n, err)
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("%d examples: want at least 2, some to fit and some to measure", len(out))
	}
	return out, nil
}

// parseExample reads one line: its state and question as a decision
// request reads them, and its answer as the index of the right option.
func parseExample(b []byte) (example, error) {
	var w struct {
		State    json.RawMessage `json:"state"`
		Question json.RawMessage `json:"question"`
		Answer   json.RawMessage `json:"answer"`
		Images   json.RawMessage `json:"images"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return example{}, err
	}
	if w.Question == nil || w.Answer == nil {
		return example{}, errors.New(`want "state", "question" and "answer"`)
	}
	// The request's own decoding reads a JSON state and the question's
	// forms; Validate then checks them.
	body, _ := json.Marshal(map[string]json.RawMessage{"model": json.RawMessage(`"model"`), "state": w.State,
		"questions": json.RawMessage(`{"q": ` + string(w.Question) + `}`), "images": orNull(w.Images)})
	var req decision.Request
	if err := json.Unmarshal(body, &req); err != nil {
		return example{}, err
	}
	if err := req.Validate(true); err != nil {
		return example{}, err
	}
	q := req.Questions["q"]
	i, err := answerIndex(q, w.Answer)
	if err != nil {
		return example{}, fmt.Errorf("answer: %w", err)
	}
	return example{request: req, question: q, answer: i}, nil
}

func orNull(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return json.RawMessage("null")
	}
	return raw
}

// answerIndex is the index of the right option: a choice's by name, a
// score's level, a noul's 0 for true (yes) and 1 for false.
func answerIndex(q decision.Question, raw json.RawMessage) (int, error) {
	switch q.Type {
	case decision.TypeChoice:
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			return 0, errors.New("a choice's answer is an option's name")
		}
		for i, o := range q.Options {
			if o.Name == name {
				return i, nil
			}
		}
		return 0, fmt.Errorf("%q is none of the options", name)
	case decision.TypeScore:
		var level int
		if err := json.Unmarshal(raw, &level); err != nil || level < 0 || level >= len(q.Labels) {
			return 0, fmt.Errorf("a score's answer is a level from 0 to %d", len(q.Labels)-1)
		}
		return level, nil
	}
	var yes bool
	if err := json.Unmarshal(raw, &yes); err != nil {
		return 0, errors.New("a noul's answer is true or false")
	}
	if yes {
		return 0, nil
	}
	return 1, nil
}

// evaluate asks the model x's question at temperature 1: its
// probabilities in the options' order.
func (x example) evaluate(ctx context.Context, ev *decision.Evaluator, model string) (decision.Example, error) {
	req := x.request
	req.Model = model
	res, err := ev.Evaluate(ctx, req)
	if err != nil {
		return decision.Example{}, err
	}
	return decision.Example{Probabilities: probabilities(x.question, res.Answers["q"]), Answer: x.answer}, nil
}

// probabilities are a's in the order of q's options: a choice's as the
// request lists them, a score's levels from 0, a noul's yes then no.
func probabilities(q decision.Question, a decision.Answer) []float64 {
	var p []float64
	switch q.Type {
	case decision.TypeChoice:
		for _, o := range q.Options {
			p = append(p, a.Probabilities[o.Name])
		}
	case decision.TypeScore:
		for i := range q.Labels {
			p = append(p, a.Probabilities[strconv.Itoa(i)])
		}
	default:
		p = []float64{*a.Noul, 1 - *a.Noul}
	}
	return p
}

// split shuffles the examples with seed and holds out a share of them,
// at least one on each side.
func split(xs []decision.Example, holdout float64, seed uint64) (train, heldOut []decision.Example) {
	xs = append([]decision.Example(nil), xs...)
	r := rand.New(rand.NewPCG(seed, seed))
	r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	n := min(max(int(float64(len(xs))*holdout+0.5), 1), len(xs)-1)
	return xs[n:], xs[:n]
}

// report prints what Calibrate found.
func report(w io.Writer, r decision.CalibrationReport) {
	fmt.Fprintf(w, "examples: %d fitted, %d held out\n\n", r.Fitted, r.Before.Examples)
	fmt.Fprintf(w, "held out           accuracy  log loss  Brier   ECE\n")
	row := func(name string, m decision.Metrics) {
		fmt.Fprintf(w, "%-18s %8.4f  %8.4f  %6.4f  %6.4f\n", name, m.Accuracy, m.LogLoss, m.Brier, m.ECE)
	}
	row("temperature 1", r.Before)
	row(fmt.Sprintf("temperature %.3g", r.Temperature), r.After)
	fmt.Fprintf(w, "\nfitted temperature: %.4g\n", r.Temperature)
	fmt.Fprintf(w, "put it in the model's catalog entry: catalog.Model{..., Calibration: %.4g}\n", r.Temperature)
	fmt.Fprintf(w, "or serve it with: inferkit-server -decision-model ID=PATH -calibration ID=%.4g\n", r.Temperature)
}
