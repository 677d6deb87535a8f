package decision_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/inference"
)

// fakeRanker is an engine whose model "enc" is an encoder: a document's
// score is its length in bytes divided by 10.
type fakeRanker struct {
	fakeEngine
	ranks []inference.RankRequest
}

func (f *fakeRanker) Models() []inference.ModelInfo {
	return []inference.ModelInfo{{ID: "gen"}, {ID: "enc", Aliases: []string{"enc-alias"}, Encoder: true}}
}

func (f *fakeRanker) Rank(_ context.Context, req inference.RankRequest) (inference.RankResult, error) {
	f.ranks = append(f.ranks, req)
	res := inference.RankResult{Usage: inference.Usage{PromptTokens: len(req.Documents)}}
	for _, d := range req.Documents {
		res.Scores = append(res.Scores, float64(len(d))/10)
	}
	return res, nil
}

func TestEncoderPath(t *testing.T) {
	req := decision.Request{Model: "m", State: "the state", Questions: map[string]decision.Question{
		"c": {Type: decision.TypeChoice, Options: []decision.Option{{Name: "a"}, {Name: "bb", Description: "longer"}}},
		"n": {Type: decision.TypeNoul, Instructions: "It is true.", No: "it is false"},
		"s": {Type: decision.TypeScore, Labels: []string{"low", "highest"}},
	}}
	for _, model := range []string{"enc", "enc-alias"} {
		f := &fakeRanker{}
		ev, err := decision.New(decision.Config{Engine: f, Model: model, Temperature: 2})
		if err != nil {
			t.Fatal(err)
		}
		res, err := ev.Evaluate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.calls) != 0 || len(f.ranks) != 1 || f.ranks[0].Query != "the state" || len(f.ranks[0].Documents) != 6 {
			t.Fatalf("%d Score calls, Rank calls %+v", len(f.calls), f.ranks)
		}
		if res.Usage.InputTokens != 6 {
			t.Errorf("usage %+v", res.Usage)
		}
		// softmax of the scores at temperature 2.
		softmax2 := func(a, b string) float64 {
			x, y := float64(len(a))/20, float64(len(b))/20
			return math.Exp(x) / (math.Exp(x) + math.Exp(y))
		}
		docs := f.ranks[0].Documents
		c := res.Answers["c"]
		if want := softmax2(docs[0], docs[1]); math.Abs(c.Probabilities["a"]-want) > 1e-12 || c.Choice != "bb" || c.OptionMass != nil {
			t.Errorf("choice %+v, want p(a) %v", c, want)
		}
		if !strings.HasPrefix(docs[1], "bb: longer") {
			t.Errorf("option document %q", docs[1])
		}
		n := res.Answers["n"]
		if want := softmax2(docs[2], docs[3]); n.Noul == nil || math.Abs(*n.Noul-want) > 1e-12 || !strings.Contains(docs[2], "It is true.") || !strings.HasSuffix(docs[3], "\nit is false") {
			t.Errorf("noul %v, want %v (documents %q)", n.Noul, want, docs[2:4])
		}
		if s := res.Answers["s"]; math.Abs(s.Probabilities["0"]+s.Probabilities["1"]-1) > 1e-12 || s.OptionMass != nil {
			t.Errorf("score %+v", s)
		}
	}
	// A generative model of the same engine scores tokens.
	f := &fakeRanker{}
	ev, err := decision.New(decision.Config{Engine: f, Model: "gen"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Evaluate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if len(f.calls) != 1 || len(f.ranks) != 0 {
		t.Errorf("%d Score and %d Rank calls", len(f.calls), len(f.ranks))
	}
}

// An encoder reads text only: an evaluator that promises images for one
// is refused.
func TestEncoderNoImages(t *testing.T) {
	if _, err := decision.New(decision.Config{Engine: &fakeRanker{}, Model: "enc", Images: true}); err == nil || !strings.Contains(err.Error(), "encoder") {
		t.Errorf("New: %v", err)
	}
	if _, err := decision.New(decision.Config{Engine: &fakeRanker{}, Model: "gen", Images: true}); err != nil {
		t.Errorf("New for a generative model: %v", err)
	}
}
