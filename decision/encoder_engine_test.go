//go:build cgo

package decision_test

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// bertEvaluator runs decisions on the tiny BERT reranker through the real
// engine.
func bertEvaluator(t *testing.T) *decision.Evaluator {
	t.Helper()
	path := inferencetest.Model(t, inferencetest.Options{Arch: "bert"})
	e, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "bert", Aliases: []string{"system-one-340m"}, Path: path, Kind: catalog.KindDecision}}, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ev, err := decision.New(decision.Config{Engine: e, Model: "system-one-340m"})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// checkEncoderAnswers: probabilities over exactly the options, summing to
// 1; no option mass.
func checkEncoderAnswers(t *testing.T, req decision.Request, res decision.Response) {
	t.Helper()
	if res.Usage.OutputTokens != 0 || res.Usage.InputTokens <= 0 {
		t.Errorf("usage %+v", res.Usage)
	}
	if got, want := slices.Sorted(maps.Keys(res.Answers)), slices.Sorted(maps.Keys(req.Questions)); !slices.Equal(got, want) {
		t.Fatalf("answers %v, questions %v", got, want)
	}
	for name, q := range req.Questions {
		a := res.Answers[name]
		if a.Type != q.Type || a.OptionMass != nil {
			t.Errorf("%s: %+v", name, a)
		}
		var keys []string
		switch q.Type {
		case decision.TypeNoul:
			if a.Noul == nil || *a.Noul <= 0 || *a.Noul >= 1 {
				t.Errorf("%s: noul %v", name, a.Noul)
			}
			continue
		case decision.TypeChoice:
			for _, o := range q.Options {
				keys = append(keys, o.Name)
			}
		case decision.TypeScore:
			for i := range q.Labels {
				keys = append(keys, string(rune('0'+i)))
			}
		}
		if got := slices.Sorted(maps.Keys(a.Probabilities)); !slices.Equal(got, slices.Sorted(slices.Values(keys))) {
			t.Errorf("%s: probabilities over %v, want %v", name, got, keys)
		}
		var sum float64
		for _, p := range a.Probabilities {
			if p <= 0 || p >= 1 {
				t.Errorf("%s: probability %v", name, p)
			}
			sum += p
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("%s: probabilities sum to %v", name, sum)
		}
		if a.Confidence == nil || *a.Confidence < 0 || *a.Confidence > 1 {
			t.Errorf("%s: confidence %v", name, a.Confidence)
		}
	}
}

func TestEncoderAnswers(t *testing.T) {
	ev := bertEvaluator(t)
	req := decode(t, mixed)
	res, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkEncoderAnswers(t, req, res)
	if j, _ := json.Marshal(res); strings.Contains(string(j), "option_mass") {
		t.Error("option_mass in an encoder's response")
	}
	uniform := true
	for _, a := range res.Answers {
		for _, p := range a.Probabilities {
			if math.Abs(p-1/float64(len(a.Probabilities))) > 1e-3 {
				uniform = false
			}
		}
	}
	if uniform {
		t.Error("every answer is uniform: the options' scores do not differ")
	}

	// Together or one by one: the same numbers.
	sameAlone(t, ev, req, res)
}

// More options than one Rank call takes: 100 choices of 52 options.
func TestEncoderManyOptions(t *testing.T) {
	ev := bertEvaluator(t)
	req := decision.Request{Model: "system-one-340m", State: "A short state.", Questions: map[string]decision.Question{}}
	for i := range 6 {
		q := decision.Question{Type: decision.TypeChoice}
		for j := range decision.MaxOptions {
			q.Options = append(q.Options, decision.Option{Name: string(rune('a'+j%26)) + strings.Repeat("x", j/26) + string(rune('0'+i))})
		}
		req.Questions[string(rune('a'+i))] = q
	}
	res, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkEncoderAnswers(t, req, res)
}
