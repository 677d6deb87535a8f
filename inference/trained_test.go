//go:build cgo

package inference_test

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest/tinychat"
	"github.com/inferkit/inferkit/inference/inferencetest/tinyembed"
	"github.com/inferkit/inferkit/internal/backend"
)

// TestChatModelSkills: the shipped trained model does what it was
// trained to, on conversations it never saw (a seed of their own), as
// often as its measured accuracy says (tinychat.Accuracy, less two
// standard deviations of 20 draws), on every backend that loads it,
// without drafting, with n-gram drafting and with itself as the draft
// model, and a second time on the same engine, the prompt cache then
// serving the shared prefixes. Neither drafting nor the cache changes a
// greedy answer: on one backend, every configuration answers each
// conversation as the first did, word for word.
func TestChatModelSkills(t *testing.T) {
	path := tinychat.Model(t)
	const n = 20
	examples := tinychat.Examples(tinychat.Stream(7, "test"), n)
	accuracy := tinychat.Accuracy()
	first := map[string][]string{} // by backend: each example's answer
	for _, c := range []struct {
		backend string
		draft   string // "", "ngram" or "model"
	}{{backend.LlamaCpp, ""}, {backend.LlamaCpp, "ngram"}, {backend.LlamaCpp, "model"}, {backend.Ollama, ""}, {backend.LibLlama, ""}, {backend.LibLlama, "model"}} {
		t.Run(fmt.Sprintf("%s/draft=%q", c.backend, c.draft), func(t *testing.T) {
			m := catalog.Model{ID: "tiny", Path: path}
			cfg := inference.Config{Backend: c.backend, Library: inference.LibraryFor(t, c.backend), Draft: inference.DraftNone,
				Parallel: 2, ContextTokens: 1024, Threads: 1, Logger: slog.New(slog.DiscardHandler)}
			switch c.draft {
			case "ngram":
				cfg.Draft = inference.DraftNgram
			case "model":
				cfg.Draft, m.Draft = inference.DraftDefault, path
			}
			cfg.Models = []catalog.Model{m}
			eng, err := inference.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			ev, err := decision.New(decision.Config{Engine: eng, Model: "tiny"})
			if err != nil {
				t.Fatal(err)
			}
			for _, pass := range []string{"cold", "cached"} {
				right, cached := map[string]int{}, 0
				answers := make([]string, len(examples))
				for i, ex := range examples {
					if ex.Decision != nil {
						x := decideTrained(t, ev, ex)
						answers[i] = fmt.Sprint(argmax(x.Probabilities))
						if ex.Chance != nil || argmax(x.Probabilities) == ex.Answer {
							right[ex.Skill]++ // a drawn answer is measured by TestChatModelDecisions
						}
						continue
					}
					req := ex.Req
					zero := 0.0
					req.Model, req.Temperature, req.MaxTokens = "tiny", &zero, 96
					res, err := eng.Generate(context.Background(), req)
					if err != nil {
						t.Fatal(err)
					}
					cached += res.Usage.CachedTokens
					answers[i] = fmt.Sprintf("%q %q", res.Reasoning, res.Text)
					for _, call := range res.ToolCalls { // their ids are random
						answers[i] += fmt.Sprintf(" %s(%s)", call.Name, call.Arguments)
					}
					if ex.Check(res) {
						right[ex.Skill]++
					}
				}
				for _, sk := range tinychat.Skills {
					a := accuracy[sk.Name]
					if sk.Name == "decide_rain" {
						a = 1 // every drawn answer counts as right here
					}
					if want := least(n, a); right[sk.Name] < want {
						t.Errorf("%s, %s: %d of %d right, want %d or more (held-out accuracy %.3f)", pass, sk.Name, right[sk.Name], n, want, a)
					}
				}
				if pass == "cached" && cached == 0 {
					t.Errorf("the second pass reused no cached prompt tokens")
				}
				if first[c.backend] == nil {
					first[c.backend] = answers
					continue
				}
				for i, a := range answers {
					if want := first[c.backend][i]; a != want {
						t.Errorf("%s, %s %d: answered %s, not %s as without drafting or cache", pass, examples[i].Skill, i, a, want)
					}
				}
			}
		})
	}
}

// least is the fewest right answers of n, for a skill of held-out
// accuracy a, that a test takes as no worse: two standard deviations
// below n·a, with a no higher than 0.985 (the rule of three's bound
// where all 200 held-out answers were right).
func least(n int, a float64) int {
	a = min(a, 1-3.0/200)
	return int(math.Ceil(float64(n)*a - 2*math.Sqrt(float64(n)*a*(1-a))))
}

// decideTrained answers ex's decision, as a calibration example.
func decideTrained(t *testing.T, ev *decision.Evaluator, ex tinychat.Example) decision.Example {
	t.Helper()
	req := *ex.Decision
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

func argmax(p []float64) int {
	best := 0
	for i, v := range p {
		if v > p[best] {
			best = i
		}
	}
	return best
}

// TestChatModelDecisions: the trained model's decisions on 200 held-out
// questions of each decision skill are as often right as its measured
// accuracy says (see least) where the state decides them; where the
// answer was drawn at random (decide_rain), its probabilities are
// calibrated as they are: near the chances drawn with, of a small
// expected calibration error, and decision.Calibrate, fitted on half of
// them, keeps their temperature near 1. The report of each skill's
// accuracy and calibration before and after decision.Calibrate is
// logged (go test -v -run TestChatModelDecisions).
func TestChatModelDecisions(t *testing.T) {
	eng, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "tiny", Path: tinychat.Model(t)}},
		Parallel: 2, ContextTokens: 1024, Threads: 2, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ev, err := decision.New(decision.Config{Engine: eng, Model: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	r := tinychat.Stream(7, "test")
	accuracy := tinychat.Accuracy()
	for _, sk := range tinychat.Skills {
		if !strings.HasPrefix(sk.Name, "decide_") {
			continue
		}
		var fit, held []decision.Example
		right, drift := 0, 0.0
		for i := range 200 {
			ex := sk.Make(r)
			x := decideTrained(t, ev, ex)
			if argmax(x.Probabilities) == ex.Answer {
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
		}
		rep, err := decision.Calibrate(fit, held)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: accuracy %d/200; held out, ECE %.3f before and %.3f after calibration (temperature %.2f), log loss %.3f and %.3f",
			sk.Name, right, rep.Before.ECE, rep.After.ECE, rep.Temperature, rep.Before.LogLoss, rep.After.LogLoss)
		if sk.Name != "decide_rain" {
			if want := least(200, accuracy[sk.Name]); right < want {
				t.Errorf("%s: %d of 200 right, want %d or more", sk.Name, right, want)
			}
			continue
		}
		drift /= 200
		t.Logf("%s: p(yes) is within %.3f of the chance of rain, on average", sk.Name, drift)
		if drift > 0.1 || rep.Before.ECE > 0.1 || rep.Temperature < 0.5 || rep.Temperature > 2 {
			t.Errorf("%s: p(yes) %.3f from the chance of rain on average, ECE %.3f, fitted temperature %.2f; want at most 0.1, 0.1 and within 0.5 to 2",
				sk.Name, drift, rep.Before.ECE, rep.Temperature)
		}
	}
}

// TestEmbedModel: the shipped trained embedding model, on probes it
// never saw (a seed of their own), embeds another phrasing of the
// query's fact nearer the query than a fact that differs in who, what or
// relation, on every backend that loads it.
func TestEmbedModel(t *testing.T) {
	path := tinyembed.Model(t)
	probes := tinyembed.Probes(tinyembed.Stream(7, "test"), 100)
	for _, b := range []string{backend.LlamaCpp, backend.LibLlama} {
		t.Run(b, func(t *testing.T) {
			eng, err := inference.New(inference.Config{Backend: b, Library: inference.LibraryFor(t, b),
				Models: []catalog.Model{{ID: "embed", Path: path, Kind: catalog.KindEmbedding}}, Threads: 1, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			right := 0
			for _, p := range probes {
				res, err := eng.Embed(context.Background(), inference.EmbedRequest{Model: "embed", Input: append([]string{p.Query}, p.Candidates...)})
				if err != nil {
					t.Fatal(err)
				}
				if got := tinyembed.Nearest(res.Embeddings[0], res.Embeddings[1:]); got == p.Right {
					right++
				} else {
					t.Logf("%q: nearest %q, not %q", p.Query, p.Candidates[got], p.Candidates[p.Right])
				}
			}
			if right < 95 {
				t.Errorf("%d of %d probes right, want 95 or more", right, len(probes))
			}
		})
	}
}
