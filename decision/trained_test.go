//go:build cgo

package decision_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest/tinychat"
	"github.com/inferkit/inferkit/internal/backend"
)

// trainedEvaluator is an Evaluator of the trained chat model
// (tinychat.Model) on backend b.
func trainedEvaluator(t *testing.T, b string) *decision.Evaluator {
	t.Helper()
	eng, err := inference.New(inference.Config{Backend: b, Models: []catalog.Model{{ID: "tiny", Path: tinychat.Model(t)}},
		Parallel: 2, ContextTokens: 1024, Threads: 2, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	ev, err := decision.New(decision.Config{Engine: eng, Model: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// decideTrained answers ex's decision, as a calibration example.
func decideTrained(t *testing.T, ev *decision.Evaluator, ex tinychat.Example) decision.Example {
	t.Helper()
	var req decision.Request
	if err := json.Unmarshal(ex.Decision, &req); err != nil {
		t.Fatal(err)
	}
	req.Model = "tiny"
	res, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	x, err := decision.ExampleOf(req.Questions["q"], res.Answers["q"], ex.Answer)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// decisionSkills are the trained model's decision skills.
func decisionSkills() []tinychat.Skill {
	var out []tinychat.Skill
	for _, sk := range tinychat.Skills {
		if strings.HasPrefix(sk.Name, "decide_") {
			out = append(out, sk)
		}
	}
	return out
}

// TestTrainedModel: the trained chat model's decisions on 200 held-out
// questions of each decision skill are as often right as its measured
// accuracy says (tinychat.AtLeast) where the state decides them; where
// the answer was drawn at random (decide_rain), its probabilities are
// calibrated as they are: near the chances drawn with, of a small
// expected calibration error, and Calibrate, fitted on half of them,
// keeps their temperature near 1. Each skill's accuracy and calibration
// before and after Calibrate are logged (go test -v -run
// TestTrainedModel). Ollama's Go engine gives the same answers to the
// first 20 of each.
func TestTrainedModel(t *testing.T) {
	ev, other := trainedEvaluator(t, backend.LlamaCpp), trainedEvaluator(t, backend.Ollama)
	r := tinychat.Stream(7, "test")
	for _, sk := range decisionSkills() {
		var fit, held []decision.Example
		right, drift := 0, 0.0
		for i := range 200 {
			ex := sk.Make(r)
			x := decideTrained(t, ev, ex)
			if x.Likeliest() == ex.Answer {
				right++
			}
			if ex.Chance != nil {
				drift += math.Abs(x.Probabilities[0] - ex.Chance[0])
			}
			if i%2 == 0 {
				fit = append(fit, x)
			} else {
				held = append(held, x)
			}
			if i < 20 {
				if y := decideTrained(t, other, ex); y.Likeliest() != x.Likeliest() {
					t.Errorf("%s %d: %s picks option %d, %s %d (%v and %v)", sk.Name, i, backend.Ollama, y.Likeliest(),
						backend.LlamaCpp, x.Likeliest(), y.Probabilities, x.Probabilities)
				}
			}
		}
		rep, err := decision.Calibrate(fit, held)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: accuracy %d/200; held out, ECE %.3f before and %.3f after calibration (temperature %.2f), log loss %.3f and %.3f",
			sk.Name, right, rep.Before.ECE, rep.After.ECE, rep.Temperature, rep.Before.LogLoss, rep.After.LogLoss)
		if sk.Name != "decide_rain" {
			if want := tinychat.AtLeast(sk.Name, 200); right < want {
				t.Errorf("%s: %d of 200 right, want %d or more", sk.Name, right, want)
			}
			continue
		}
		drift /= 200
		t.Logf("%s: p(yes) is within %.3f of the chance of rain, on average", sk.Name, drift)
		if drift > 0.1 || rep.Before.ECE > 0.1 || rep.Temperature < 0.5 || rep.Temperature > 2 {
			t.Errorf("%s: p(yes) %.3f from the chance of rain on average, ECE %.3f, fitted temperature %.2f; want at most 0.1, 0.1 and within 0.5 to 2", sk.Name,
				drift, rep.Before.ECE, rep.Temperature)
		}
	}
}
