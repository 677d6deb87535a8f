//go:build cgo

package inference_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/runner"
)

// Drafting changes no output: on every backend, greedy requests give the
// same tokens with n-gram lookup and with a draft model as without
// drafting — free text, a stop string, a token limit and a grammar — on
// the trained tiny llama (whose stories repeat themselves, so n-gram
// drafts are accepted) and on a random Qwen3 with a smaller Qwen3 of the
// same vocabulary as its draft model. Qwen3.5 on the library, whose
// recurrent state rolls back over a step's drafted tokens, drafts too,
// with and without its multi-token-prediction block; a recurrent or
// hybrid model whose state cannot roll back (Qwen3.5 on the Go engine,
// Mamba and Jamba on both llama.cpp builds) drafts nothing and answers
// the same.
func TestSpeculativeGreedySame(t *testing.T) {
	qwenOpts := inferencetest.Options{Arch: "qwen3", Seed: 3, ContextLength: 512}
	qwen := inferencetest.Model(t, qwenOpts)
	small := qwenOpts
	small.Seed, small.Layers = 4, 1
	qwenDraft := inferencetest.Model(t, small)
	type model struct {
		name, path, draft string
		on                []string // the backends that load it
		rollsBack         []string // those that draft on its recurrent state; nil: all of on
	}
	all := []string{backend.LlamaCpp, backend.Ollama, backend.LibLlama}
	qwen35 := inferencetest.Model(t, inferencetest.Options{Arch: "qwen35", Seed: 5})
	models := []model{
		{"stories", storiesPath(t), storiesPath(t), all, nil},
		{"qwen3", qwen, qwenDraft, all, nil},
		{"qwen35", qwen35, "", []string{backend.Ollama, backend.LibLlama}, []string{backend.LibLlama}},
		{"qwen35-mtp", inferencetest.Model(t, inferencetest.Options{Arch: "qwen35", Seed: 5, NextN: 1}), "", []string{backend.LibLlama}, []string{backend.LibLlama}},
		{"mamba", inferencetest.Model(t, inferencetest.Options{Arch: "mamba", Seed: 6}), "", []string{backend.LlamaCpp, backend.LibLlama}, []string{}},
		{"jamba", inferencetest.Model(t, inferencetest.Options{Arch: "jamba", Seed: 7}), "", []string{backend.LlamaCpp, backend.LibLlama}, []string{}},
	}
	prompt := "Once upon a time, there was a little girl named Lily. She loved to play outside. One day, Lily"
	copyPrompt := prompt + " " + prompt
	for _, be := range all {
		for _, m := range models {
			if !slices.Contains(m.on, be) {
				continue
			}
			drafts := m.rollsBack == nil || slices.Contains(m.rollsBack, be)
			t.Run(be+"/"+m.name, func(t *testing.T) {
				lib := inference.LibraryFor(t, be)
				engines := map[string]*inference.Engine{}
				for _, d := range []string{"none", "ngram", "model"} {
					if d == "model" && m.draft == "" {
						continue
					}
					cm := catalog.Model{ID: "m", Path: m.path}
					cfg := inference.Config{Models: []catalog.Model{cm}, Parallel: 2, ContextTokens: 512, Backend: be, Library: lib, DraftRecurrent: true}
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
				if be != backend.Ollama {
					reqs["grammar"] = grammar
				}
				drafted := 0
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
						if d != "none" {
							drafted += u.DraftedTokens
						}
						switch {
						case d == "none" && u.DraftedTokens != 0, !drafts && u.DraftedTokens != 0:
							t.Errorf("%s, %s: %d tokens drafted", d, name, u.DraftedTokens)
						case d == "model" && name == "free" && m.name == "stories" && u.AcceptedTokens < u.CompletionTokens/2:
							t.Errorf("the model drafting for itself: %d of %d tokens accepted", u.AcceptedTokens, u.CompletionTokens)
						}
					}
				}
				if drafts && drafted == 0 {
					t.Error("nothing drafted on a model that drafts")
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

// On the library's Qwen3.5 (with and without its multi-token-prediction
// block), with Config.DraftRecurrent, a drafter right at 0, 50, 75 and
// 100% of the positions gives
// the greedy tokens of an engine that drafts nothing: the hybrid memory
// drops the rejected tokens from its attention cells and its recurrent
// state alike. The conversation's next turn, which resumes from the
// checkpoint at the end of the drafted one, gives a cold engine's text
// too.
func TestSpeculativeRecurrentRollback(t *testing.T) {
	for _, opts := range []inferencetest.Options{{Arch: "qwen35", Seed: 5}, {Arch: "qwen35", Seed: 5, NextN: 1}} {
		t.Run(fmt.Sprintf("mtp=%d", opts.NextN), func(t *testing.T) {
			lib := inference.LibraryFor(t, backend.LibLlama)
			cfg := inference.Config{Models: []catalog.Model{{ID: "m", Path: inferencetest.Model(t, opts)}}, Parallel: 1, ContextTokens: 1024,
				Backend: backend.LibLlama, Library: lib, DraftRecurrent: true}
			off := cfg
			off.Draft = inference.DraftNone
			cold := newEngine(t, off)
			// Without DraftRecurrent the same drafter drafts nothing,
			// and a request that asks for drafts is told why.
			plain := cfg
			plain.DraftRecurrent = false
			noDraft := newEngine(t, inference.WithDrafter(plain, &runner.Replay{Percent: 100}))
			spec := true
			if _, err := noDraft.Generate(context.Background(), inference.Request{Model: "m", Prompt: "Hi", MaxTokens: 4, Speculative: &spec}); err == nil || !strings.Contains(err.Error(), "DraftRecurrent") {
				t.Errorf("Speculative on a recurrent model without DraftRecurrent: %v", err)
			}
			sw := &switchable{}
			e := newEngine(t, inference.WithDrafter(cfg, sw))
			zero := 0.0
			first := inference.Request{Model: "m", MaxTokens: 48, Temperature: &zero,
				Messages: []inference.Message{inference.Text(inference.RoleUser, "Tell me a story about a fox.")}}
			want, err := cold.Generate(context.Background(), first)
			if err != nil {
				t.Fatal(err)
			}
			// The continuation the drafter replays: what a run that
			// drafts nothing was asked to follow.
			replay := &runner.Replay{}
			sw.d = replay
			if _, err := e.Generate(context.Background(), first); err != nil {
				t.Fatal(err)
			}
			seen := replay.Seen
			for _, pct := range []int{0, 50, 75, 100} {
				sw.d = &runner.Replay{Want: seen, Percent: pct}
				got, err := e.Generate(context.Background(), first)
				if err != nil {
					t.Fatal(err)
				}
				u := got.Usage
				t.Logf("%d%% right: %d tokens, %d drafted, %d accepted", pct, u.CompletionTokens, u.DraftedTokens, u.AcceptedTokens)
				if got.Text != want.Text {
					t.Errorf("%d%% right: %q, without drafting %q", pct, got.Text, want.Text)
				}
				if u.DraftedTokens == 0 || pct >= 50 && u.AcceptedTokens == 0 || pct == 0 && u.AcceptedTokens != 0 {
					t.Errorf("%d%% right: %d drafted, %d accepted", pct, u.DraftedTokens, u.AcceptedTokens)
				}
			}
			next := first
			next.Messages = append(slices.Clone(first.Messages), inference.Text(inference.RoleAssistant, want.Text), inference.Text(inference.RoleUser, "And then?"))
			sw.d = runner.Ngram{}
			got, err := e.Generate(context.Background(), next)
			if err != nil {
				t.Fatal(err)
			}
			if w, err := cold.Generate(context.Background(), next); err != nil || got.Text != w.Text {
				t.Errorf("the next turn: %q, a cold engine %q (%v)", got.Text, w.Text, err)
			}
			if got.Usage.CachedTokens == 0 {
				t.Error("the next turn reused nothing of the drafted one")
			}
		})
	}
}
