//go:build cgo

package inference

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// bertEngine loads the tiny BERT reranker as "bert" and the tiny llama as
// "tiny".
func bertEngine(t *testing.T) *Engine {
	t.Helper()
	e, err := New(Config{
		Threads:       1,
		ContextTokens: 1024,
		Models: []catalog.Model{
			{ID: "bert", Path: inferencetest.Model(t, inferencetest.Options{Arch: "bert"})},
			{ID: "tiny", Path: inferencetest.Model(t, inferencetest.Options{})},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

var rankDocs = []string{"The sky is blue today.", "It rains, and the streets are wet.", "Stock prices fell 3% on Monday!", "a", "Cats sleep most of the day; dogs less so."}

func TestRank(t *testing.T) {
	e := bertEngine(t)
	if infos := e.Models(); !infos[0].Encoder || infos[1].Encoder {
		t.Fatalf("Encoder flags %v %v", infos[0].Encoder, infos[1].Encoder)
	}
	ctx := context.Background()
	all, err := e.Rank(ctx, RankRequest{Model: "bert", Query: "What is the weather like?", Documents: rankDocs})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Scores) != len(rankDocs) || all.Usage.PromptTokens == 0 {
		t.Fatalf("result %+v", all)
	}
	distinct := map[float64]bool{}
	tokens := 0
	for i, d := range rankDocs {
		one, err := e.Rank(ctx, RankRequest{Model: "bert", Query: "What is the weather like?", Documents: []string{d}})
		if err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(one.Scores[0]) || math.Abs(one.Scores[0]-all.Scores[i]) > 1e-4 {
			t.Errorf("document %d: alone %v, together %v", i, one.Scores[0], all.Scores[i])
		}
		distinct[all.Scores[i]] = true
		tokens += one.Usage.PromptTokens
	}
	if len(distinct) < 3 {
		t.Errorf("scores barely differ: %v", all.Scores)
	}
	if tokens != all.Usage.PromptTokens {
		t.Errorf("usage %d together, %d one by one", all.Usage.PromptTokens, tokens)
	}
	// [CLS] query [SEP] doc [SEP].
	q, _ := e.Tokenize("bert", "What is the weather like?")
	d, _ := e.Tokenize("bert", rankDocs[0])
	one, _ := e.Rank(ctx, RankRequest{Model: "bert", Query: "What is the weather like?", Documents: rankDocs[:1]})
	if want := len(q) + len(d) + 3; one.Usage.PromptTokens != want {
		t.Errorf("pair of %d tokens, want %d", one.Usage.PromptTokens, want)
	}
}

func TestRankErrors(t *testing.T) {
	e := bertEngine(t)
	ctx := context.Background()
	for _, c := range []struct {
		req  RankRequest
		want error
	}{
		{RankRequest{Model: "tiny", Query: "q", Documents: []string{"d"}}, ErrInvalidRequest},
		{RankRequest{Model: "bert", Query: "q"}, ErrInvalidRequest},
		{RankRequest{Model: "bert", Query: "q", Documents: make([]string, 257)}, ErrInvalidRequest},
		{RankRequest{Model: "bert", Query: strings.Repeat("word ", 600), Documents: []string{"d"}}, ErrContextLength},
		{RankRequest{Model: "nope", Query: "q", Documents: []string{"d"}}, ErrModelNotFound},
	} {
		if _, err := e.Rank(ctx, c.req); !errors.Is(err, c.want) {
			t.Errorf("%s, %d documents: %v, want %v", c.req.Model, len(c.req.Documents), err, c.want)
		}
	}
	if _, err := e.Generate(ctx, Request{Model: "bert", Prompt: "hello"}); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("Generate on an encoder: %v", err)
	}
	if _, err := e.Score(ctx, ScoreRequest{Model: "bert", Prefix: "x", Branches: []Branch{{Text: "y", Candidates: singles(5)}}}); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("Score on an encoder: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Rank(cancelled, RankRequest{Model: "bert", Query: "q", Documents: []string{"d"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
