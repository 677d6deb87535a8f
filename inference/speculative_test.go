//go:build cgo

package inference_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/backend"
)

// Drafting changes no output: on llama.cpp and on the Go engine, greedy
// requests give the same tokens with n-gram lookup and with a draft
// model as without drafting — free text, a stop string, a token limit
// and a grammar — on the trained tiny llama (whose stories repeat
// themselves, so n-gram drafts are accepted) and on a random Qwen3 with a
// smaller Qwen3 of the same vocabulary as its draft model. A recurrent
// or hybrid model (Qwen3.5 on the Go engine, Mamba and Jamba on
// llama.cpp), whose state cannot roll back, drafts nothing and answers the
// same.
func TestSpeculativeGreedySame(t *testing.T) {
	qwenOpts := inferencetest.Options{Arch: "qwen3", Seed: 3, ContextLength: 512}
	qwen := inferencetest.Model(t, qwenOpts)
	small := qwenOpts
	small.Seed, small.Layers = 4, 1
	qwenDraft := inferencetest.Model(t, small)
	type model struct {
		name, path, draft string
		recurrent         bool
		only              string // the one backend that loads it, or ""
	}
	models := []model{
		{"stories", storiesPath(t), storiesPath(t), false, ""},
		{"qwen3", qwen, qwenDraft, false, ""},
		{"qwen35", inferencetest.Model(t, inferencetest.Options{Arch: "qwen35", Seed: 5}), "", true, backend.Ollama},
		{"mamba", inferencetest.Model(t, inferencetest.Options{Arch: "mamba", Seed: 6}), "", true, backend.LlamaCpp},
		{"jamba", inferencetest.Model(t, inferencetest.Options{Arch: "jamba", Seed: 7}), "", true, backend.LlamaCpp},
	}
	prompt := "Once upon a time, there was a little girl named Lily. She loved to play outside. One day, Lily"
	copyPrompt := prompt + " " + prompt
	for _, be := range []string{backend.LlamaCpp, backend.Ollama} {
		for _, m := range models {
			if m.only != "" && m.only != be {
				continue
			}
			t.Run(be+"/"+m.name, func(t *testing.T) {
				engines := map[string]*inference.Engine{}
				for _, d := range []string{"none", "ngram", "model"} {
					if d == "model" && m.draft == "" {
						continue
					}
					cm := catalog.Model{ID: "m", Path: m.path}
					cfg := inference.Config{Models: []catalog.Model{cm}, Parallel: 2, ContextTokens: 512, Backend: be}
					switch d {
					case "none":
						cfg.Draft = inference.DraftNone
					case "ngram":
						cfg.Draft = inference.DraftNgram
					case "model":
						cfg.Models[0].Draft = m.draft
					}
					engines[d] = newEngine(t, cfg)
				}
				reqs := map[string]inference.Request{
					"free":  greedyM(prompt, 64),
					"copy":  greedyM(copyPrompt, 64),
					"short": greedyM(copyPrompt, 5),
				}
				stop := greedyM(copyPrompt, 64)
				reqs["stop"] = stop
				grammar := greedyM(prompt, 40)
				grammar.Format = &inference.Format{Grammar: `root ::= [a-z ]+ "."`}
				if be == backend.LlamaCpp {
					reqs["grammar"] = grammar
				}
				for name, req := range reqs {
					want, err := engines["none"].Generate(context.Background(), req)
					if err != nil {
						t.Fatal(err)
					}
					if name == "stop" && len(want.Text) > 12 {
						// The stop string is a piece from the middle of
						// the output.
						req.Stop = []string{want.Text[len(want.Text)/2 : len(want.Text)/2+4]}
						if want, err = engines["none"].Generate(context.Background(), req); err != nil {
							t.Fatal(err)
						}
					}
					for d, e := range engines {
						got, err := e.Generate(context.Background(), req)
						if err != nil {
							t.Fatalf("%s, %s: %v", d, name, err)
						}
						if got.Text != want.Text || got.FinishReason != want.FinishReason || got.Usage.CompletionTokens != want.Usage.CompletionTokens {
							t.Errorf("%s, %s: with drafts %q (%s, %d tokens)\nwithout %q (%s, %d)", d, name, got.Text, got.FinishReason, got.Usage.CompletionTokens,
								want.Text, want.FinishReason, want.Usage.CompletionTokens)
						}
						u := got.Usage
						t.Logf("%s, %s: %d tokens, %d drafted, %d accepted", d, name, u.CompletionTokens, u.DraftedTokens, u.AcceptedTokens)
						switch {
						case d == "none" && u.DraftedTokens != 0, m.recurrent && u.DraftedTokens != 0:
							t.Errorf("%s, %s: %d tokens drafted", d, name, u.DraftedTokens)
						case d == "model" && name == "free" && m.name == "stories" && u.AcceptedTokens < u.CompletionTokens/2:
							t.Errorf("the model drafting for itself: %d of %d tokens accepted", u.AcceptedTokens, u.CompletionTokens)
						}
					}
				}
			})
		}
	}
}

// greedyM is a greedy request to model "m".
func greedyM(prompt string, maxTokens int) inference.Request {
	req := greedy(prompt, maxTokens)
	req.Model = "m"
	return req
}

// Request.Speculative false drafts nothing; true on a model without a
// drafter is a FieldError naming it; a draft model of another vocabulary
// fails New with an error that says so.
func TestSpeculativeKnobs(t *testing.T) {
	path := storiesPath(t)
	e := newEngine(t, inference.Config{Models: []catalog.Model{{ID: "m", Path: path}}, Parallel: 1, ContextTokens: 256, Draft: inference.DraftNgram})
	off, on := false, true
	req := greedyM("Once upon a time, Lily saw a cat. Once upon a time, Lily", 40)
	res, err := e.Generate(context.Background(), req)
	if err != nil || res.Usage.DraftedTokens == 0 {
		t.Fatalf("n-gram drafting by default: %d drafted, %v", res.Usage.DraftedTokens, err)
	}
	req.Speculative = &off
	if res, err := e.Generate(context.Background(), req); err != nil || res.Usage.DraftedTokens != 0 {
		t.Fatalf("Speculative false: %d drafted, %v", res.Usage.DraftedTokens, err)
	}
	st := e.Stats()[0]
	if st.DraftedTokens == 0 || st.AcceptedTokens > st.DraftedTokens {
		t.Fatalf("stats: %d drafted, %d accepted", st.DraftedTokens, st.AcceptedTokens)
	}

	plain := newEngine(t, inference.Config{Models: []catalog.Model{{ID: "m", Path: path}}, Parallel: 1, ContextTokens: 256})
	req.Speculative = &on
	_, err = plain.Generate(context.Background(), req)
	if fe, ok := err.(*inference.FieldError); !ok || !strings.Contains(fmt.Sprint(fe), "Speculative") {
		t.Fatalf("Speculative true without a drafter: %v", err)
	}

	other := inferencetest.Model(t, inferencetest.Options{Arch: "qwen3"})
	_, err = inference.New(inference.Config{Models: []catalog.Model{{ID: "m", Path: path, Draft: other}}, Parallel: 1, ContextTokens: 256, Threads: 1})
	if err == nil || !strings.Contains(err.Error(), "same vocabulary") {
		t.Fatalf("a draft model of another vocabulary: %v", err)
	}
}
