//go:build cgo

package inference_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest/tinychat"
	"github.com/inferkit/inferkit/inference/inferencetest/tinyembed"
	"github.com/inferkit/inferkit/internal/backend"
)

// TestChatModelSkills: the shipped trained model does what it was
// trained to (its decisions are package decision's to test), on
// conversations it never saw (a seed of their own), as
// often as its measured accuracy says (tinychat.AtLeast), on every
// backend that loads it,
// without drafting, with n-gram drafting and with itself as the draft
// model, and a second time on the same engine, the prompt cache then
// serving the shared prefixes. Neither drafting nor the cache changes a
// greedy answer: on one backend, every configuration answers each
// conversation as the first did, word for word.
func TestChatModelSkills(t *testing.T) {
	path := tinychat.Model(t)
	const n = 20
	examples := tinychat.Examples(tinychat.Stream(7, "test"), n)
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
			for _, pass := range []string{"cold", "cached"} {
				right, cached := map[string]int{}, 0
				answers := make([]string, len(examples))
				for i, ex := range examples {
					if ex.Decision != nil {
						continue // package decision's TestTrainedModel
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
					if strings.HasPrefix(sk.Name, "decide_") {
						continue
					}
					if want := tinychat.AtLeast(sk.Name, n); right[sk.Name] < want {
						t.Errorf("%s, %s: %d of %d right, want %d or more (held-out accuracy %.3f)", pass, sk.Name, right[sk.Name], n, want, tinychat.Accuracy()[sk.Name])
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
