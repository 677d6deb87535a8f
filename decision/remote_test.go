package decision_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/inference"
)

// remoteEngine is an engine whose model an upstream runs: it scores no
// branches, and answers each chat request with the first token's top
// log-probabilities that tops gives for the question it shows.
type remoteEngine struct {
	mu   sync.Mutex
	reqs []inference.Request
	tops func(question string) []inference.TopLogprob
}

func (r *remoteEngine) PrepareScore(inference.ScoreRequest) (*inference.PreparedScore, error) {
	return nil, errors.New("no branches on a remote model")
}

func (r *remoteEngine) RunScore(context.Context, *inference.PreparedScore) (inference.ScoreResult, error) {
	return inference.ScoreResult{}, errors.New("no branches on a remote model")
}

func (r *remoteEngine) Tokenize(string, string) ([]int, error) {
	return nil, errors.New("no tokenizer")
}
func (r *remoteEngine) RenderPrompt(inference.Request) (string, error) {
	return "", errors.New("no template")
}

func (r *remoteEngine) Models() []inference.ModelInfo {
	return []inference.ModelInfo{{ID: "judge", Backend: inference.RemoteBackend}}
}

func (r *remoteEngine) CountTokens(req inference.Request) (int, error) {
	return len(req.Messages[1].Content[0].Text) / 4, nil
}

func (r *remoteEngine) Generate(_ context.Context, req inference.Request) (inference.Result, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	user := req.Messages[1].Content[0].Text
	return inference.Result{Usage: inference.Usage{PromptTokens: 10},
		Logprobs: []inference.TokenLogprob{{Token: -1, Top: r.tops(user)}}}, nil
}

func top(text string, p float64) inference.TopLogprob {
	return inference.TopLogprob{Token: -1, Bytes: []byte(text), Logprob: math.Log(p)}
}

func TestRemoteModel(t *testing.T) {
	eng := &remoteEngine{tops: func(q string) []inference.TopLogprob {
		switch {
		case strings.Contains(q, "Which color"):
			// B listed twice (with a space), C not at all: it gets the
			// least likely listed token's probability.
			return []inference.TopLogprob{top(" B", 0.5), top("A", 0.2), top("B", 0.1), top("zebra", 0.05)}
		case strings.Contains(q, "Rate"):
			return []inference.TopLogprob{top("3", 0.6), top("1", 0.3), top("2", 0.1)}
		}
		// A noul: "Y" begins Yes, "No" is No.
		return []inference.TopLogprob{top("Y", 0.3), top("No", 0.6), top("maybe", 0.1)}
	}}
	ev, err := decision.New(decision.Config{Engine: eng, Model: "judge"})
	if err != nil {
		t.Fatal(err)
	}
	req := decision.Request{Model: "judge", State: "The sky is <|im_end|> blue.", Questions: map[string]decision.Question{
		"color": {Type: decision.TypeChoice, Instructions: "Which color?", Options: []decision.Option{{Name: "red"}, {Name: "blue"}, {Name: "green"}}},
		"rate":  {Type: decision.TypeScore, Instructions: "Rate it.", Labels: []string{"low", "mid", "high"}},
		"true":  {Type: decision.TypeNoul, Instructions: "Is it raining?"},
	}}
	p, err := ev.Prepare(req)
	if err != nil {
		t.Fatal(err)
	}
	if p.InputTokens <= 0 {
		t.Fatalf("InputTokens %d", p.InputTokens)
	}
	res, err := ev.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	near := func(what string, got, want float64) {
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	c := res.Answers["color"]
	// red 0.2, blue 0.6, green 0.05 (the floor), renormalised.
	sum := 0.2 + 0.6 + 0.05
	near("red", c.Probabilities["red"], 0.2/sum)
	near("blue", c.Probabilities["blue"], 0.6/sum)
	near("green", c.Probabilities["green"], 0.05/sum)
	if c.Choice != "blue" {
		t.Errorf("choice %q", c.Choice)
	}
	near("noul yes", *res.Answers["true"].Noul, 0.3/0.9)
	near("score mean", *res.Answers["rate"].Score, 0.3*0+0.1*1+0.6*2)
	if res.Usage.InputTokens != 30 {
		t.Errorf("usage %+v", res.Usage)
	}
	for _, r := range eng.reqs {
		if r.MaxTokens != 1 || !r.Logprobs || r.TopLogprobs != inference.MaxTopLogprobs || !r.NoThinking || *r.Temperature != 0 {
			t.Errorf("request %+v", r)
		}
	}

	// More options than the upstream lists tokens: refused by name.
	var many []decision.Option
	for i := range inference.MaxTopLogprobs + 1 {
		many = append(many, decision.Option{Name: strings.Repeat("x", i+1)})
	}
	_, err = ev.Prepare(decision.Request{Model: "judge", State: "s", Questions: map[string]decision.Question{"q": {Type: decision.TypeChoice, Options: many}}})
	if de, ok := errors.AsType[*decision.Error](err); !ok || de.Param != "questions.q.options" || !strings.Contains(de.Message, "remote engine") {
		t.Fatalf("21 options: %v", err)
	}
}
