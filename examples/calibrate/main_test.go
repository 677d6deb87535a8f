package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/decision"
)

func TestReadExamples(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "tickets.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	xs, err := readExamples(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(xs) != 12 {
		t.Fatalf("%d examples, want 12 (the blank line skipped)", len(xs))
	}
	// Line numbers count the blank line; answers are option indexes.
	for _, want := range []struct{ line, answer int }{{1, 0}, {2, 1}, {4, 2}, {6, 2}, {8, 1}, {9, 0}, {10, 1}} {
		var x example
		for _, y := range xs {
			if y.line == want.line {
				x = y
			}
		}
		if x.line == 0 || x.answer != want.answer {
			t.Errorf("line %d: %+v, want answer %d", want.line, x, want.answer)
		}
	}
	if !strings.Contains(xs[2].request.State, "\"order\": 17") {
		t.Errorf("a JSON state reads %q", xs[2].request.State)
	}
}

func TestReadExamplesErrors(t *testing.T) {
	const q = `"question": {"type": "choice", "criteria": {"a": null, "b": null}}`
	good := `{"state": "s", ` + q + `, "answer": "a"}` + "\n"
	for _, c := range []struct{ name, data, want string }{
		{"not JSON", good + "{\n", "line 2:"},
		{"no answer", good + `{"state": "s", ` + q + `}`, `line 2: want "state", "question" and "answer"`},
		{"unknown option", good + `{"state": "s", ` + q + `, "answer": "c"}`, `line 2: answer: "c" is none of the options`},
		{"score level", good + `{"state": "s", "question": {"type": "score", "criteria": ["x", "y"]}, "answer": 2}`, "line 2: answer: a score's answer is a level from 0 to 1"},
		{"noul answer", good + `{"state": "s", "question": {"type": "noul"}, "answer": "yes"}`, "line 2: answer: a noul's answer is true or false"},
		{"bad question", good + `{"state": "s", "question": {"type": "maybe"}, "answer": 1}`, "line 2: decision: questions.q.type"},
		{"empty state", good + `{"state": "", ` + q + `, "answer": "a"}`, "line 2: decision: state"},
		{"one example", good, "1 examples"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readExamples(strings.NewReader(c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one with %q", err, c.want)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"-model", "m.gguf"})
	if err != nil || o.data != "-" || o.holdout != 0.3 || o.seed != 1 || o.ctx != 4096 {
		t.Errorf("defaults: %+v, %v", o, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "-model is required"},
		{[]string{"-model", "m.gguf", "-holdout", "0"}, "-holdout is 0"},
		{[]string{"-model", "m.gguf", "-holdout", "1"}, "-holdout is 1"},
		{[]string{"-model", "m.gguf", "extra.jsonl"}, "unexpected arguments"},
		{[]string{"-model", "m.gguf", "-seed", "-1"}, "invalid value"},
	} {
		if _, err := parseFlags(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one with %q", c.args, err, c.want)
		}
	}
}

// An answer's probabilities come out in the question's order, not the
// answer map's: a choice's options as the request lists them, a score's
// levels from 0, a noul's yes then no.
func TestProbabilities(t *testing.T) {
	yes := 0.8
	for _, c := range []struct {
		name string
		q    decision.Question
		a    decision.Answer
		want []float64
	}{
		{"choice", decision.Question{Type: decision.TypeChoice, Options: []decision.Option{{Name: "zeta"}, {Name: "alpha"}, {Name: "mu"}}},
			decision.Answer{Probabilities: map[string]float64{"alpha": 0.2, "mu": 0.3, "zeta": 0.5}}, []float64{0.5, 0.2, 0.3}},
		{"score", decision.Question{Type: decision.TypeScore, Labels: []string{"low", "mid", "high", "top"}},
			decision.Answer{Probabilities: map[string]float64{"3": 0.4, "0": 0.1, "2": 0.3, "1": 0.2}}, []float64{0.1, 0.2, 0.3, 0.4}},
		{"noul", decision.Question{Type: decision.TypeNoul}, decision.Answer{Noul: &yes}, []float64{0.8, 0.2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := probabilities(c.q, c.a)
			if len(got) != len(c.want) {
				t.Fatalf("%v, want %v", got, c.want)
			}
			for i := range got {
				if math.Abs(got[i]-c.want[i]) > 1e-12 {
					t.Errorf("%v, want %v", got, c.want)
				}
			}
		})
	}
}

func TestSplit(t *testing.T) {
	xs := make([]decision.Example, 10)
	for i := range xs {
		xs[i].Answer = i
	}
	train, held := split(xs, 0.3, 1)
	if len(train) != 7 || len(held) != 3 {
		t.Fatalf("%d and %d", len(train), len(held))
	}
	again, _ := split(xs, 0.3, 1)
	for i := range train {
		if train[i].Answer != again[i].Answer {
			t.Fatal("the same seed split differently")
		}
	}
	if train, held := split(xs[:2], 0.01, 1); len(train) != 1 || len(held) != 1 {
		t.Errorf("two examples: %d and %d", len(train), len(held))
	}
}

// The whole command on a real tiny model: the report shows the four
// metrics before and after, and a finite temperature within bounds.
func TestRun(t *testing.T) {
	model := filepath.Join("..", "..", "..", "shared", "models", "stories260K.gguf")
	if _, err := os.Stat(model); err != nil {
		t.Skip("the tiny model ../shared/models/stories260K.gguf is not here (CI has it; a fresh clone does not)")
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"-model", model, "-data", filepath.Join("testdata", "tickets.jsonl"), "-threads", "1", "-ctx", "512"}, nil, &out)
	if err != nil {
		t.Fatal(err)
	}
	report := out.String()
	t.Log("\n" + report)
	if !strings.Contains(report, "examples: 8 fitted, 4 held out") {
		t.Errorf("counts missing:\n%s", report)
	}
	num := `(\d+\.\d+)`
	rows := regexp.MustCompile(`(?m)^temperature \S+\s+`+num+`\s+`+num+`\s+`+num+`\s+`+num+`$`).FindAllStringSubmatch(report, -1)
	if len(rows) != 2 {
		t.Fatalf("want the metrics before and after:\n%s", report)
	}
	m := regexp.MustCompile(`fitted temperature: (\S+)`).FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("no fitted temperature:\n%s", report)
	}
	temp, err := strconv.ParseFloat(m[1], 64)
	if err != nil || math.IsNaN(temp) || temp < decision.MinTemperature || temp > decision.MaxTemperature {
		t.Errorf("fitted temperature %q", m[1])
	}
}
