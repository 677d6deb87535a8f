//go:build cgo

package inference

import (
	"context"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/backend"
)

// newArchs are architectures the pinned llama.cpp does not load, which the
// engine runs on Ollama's Go engine: Qwen3.5's hybrid of linear-attention
// (recurrent) and full-attention layers, and Gemma 4's sliding-window and
// global layers.
var newArchs = []inferencetest.Options{
	{Arch: "qwen35"},
	{Arch: "gemma4", SlidingWindow: 16},
}

// archEngine loads the model opts describe as "tiny" on cfg.
func archEngine(t *testing.T, opts inferencetest.Options, path string, cfg Config) *Engine {
	t.Helper()
	if path == "" {
		path = inferencetest.Model(t, opts)
	}
	cfg.Models = []catalog.Model{{ID: "tiny", Path: path}}
	cfg.Threads = 2
	cfg.ContextTokens = 1024
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// greedyTiny generates n tokens greedily after prompt on "tiny", with
// their log-probabilities when logprobs is set (the prompt is then
// decoded whole, whatever the cache holds).
func greedyTiny(t *testing.T, e *Engine, prompt string, n int, logprobs bool) Result {
	t.Helper()
	zero := 0.0
	res, err := e.Generate(context.Background(), Request{Model: "tiny", Prompt: prompt, MaxTokens: n, Temperature: &zero, Logprobs: logprobs, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var archPrompts = []string{
	system + "Question one?",
	"Once upon a time, in a small village by the sea,",
	system + "Another question entirely?",
	"Count: one, two, three,",
}

// Each new architecture loads on the Go engine, generates, gives the same
// greedy output alone and beside other requests, reuses cached prompt
// prefixes with the output a cold engine gives, and scores decisions as
// a single sequence does.
func TestNewArchitectures(t *testing.T) {
	for _, opts := range newArchs {
		t.Run(opts.Arch, func(t *testing.T) { checkArchitecture(t, opts, Config{}, backend.Ollama) })
	}
}

// checkArchitecture runs the checks of TestNewArchitectures on the model
// opts describe, with engines of base's backend, which must be
// backendName.
func checkArchitecture(t *testing.T, opts inferencetest.Options, base Config, backendName string) {
	with := func(c Config) Config {
		c.Backend, c.Library = base.Backend, base.Library
		return c
	}
	path := inferencetest.Model(t, opts)
	one := archEngine(t, opts, path, with(Config{Parallel: 1}))
	info := one.Models()[0]
	if info.Backend != backendName {
		t.Fatalf("backend %q, want %q", info.Backend, backendName)
	}
	if info.Family == "" {
		t.Error("no family recognised")
	}
	want := make([]string, len(archPrompts))
	for i, p := range archPrompts {
		res := greedyTiny(t, one, p, 12, false)
		if res.Usage.CompletionTokens != 12 {
			t.Fatalf("%d tokens generated, want 12", res.Usage.CompletionTokens)
		}
		want[i] = res.Text
	}

	t.Run("batches", func(t *testing.T) {
		many := archEngine(t, opts, path, with(Config{Parallel: 4}))
		got := make([]string, len(archPrompts))
		var wg sync.WaitGroup
		for i, p := range archPrompts {
			wg.Go(func() { got[i] = greedyTiny(t, many, p, 12, false).Text })
		}
		wg.Wait()
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("prompt %d beside others: %q, alone: %q", i, got[i], want[i])
			}
		}
	})

	t.Run("reuses prefixes", func(t *testing.T) {
		e := archEngine(t, opts, path, with(Config{Parallel: 1}))
		cold := archEngine(t, opts, path, with(Config{Parallel: 1}))
		// A Score request leaves exactly its prefix in the
		// sequence. A prompt that continues all of it reuses it
		// on every architecture, a recurrent state included.
		score(t, e, system, Branch{Text: "?", Candidates: singles(1, 2)})
		next := system + "Go on."
		got := greedyTiny(t, e, next, 8, false)
		if got.Usage.CachedTokens == 0 {
			t.Error("a continuing prompt reused nothing")
		}
		if w := greedyTiny(t, cold, next, 8, false); got.Text != w.Text {
			t.Errorf("continuing: %q, a cold engine gives %q", got.Text, w.Text)
		}
		// One that shares part of it: an attention cache keeps
		// that part, a recurrent state goes back to its checkpoint at
		// the end of the scored prefix where the backend keeps
		// checkpoints, and starts afresh where it does not.
		other := system + "Something else?"
		got = greedyTiny(t, e, other, 8, false)
		r := one.names["tiny"].runner
		if partial := got.Usage.CachedTokens > 0; partial != (r.SharesKV() || r.Checkpoints()) {
			t.Errorf("a shared part: %d cached, memory shared %v, checkpoints %v", got.Usage.CachedTokens, r.SharesKV(), r.Checkpoints())
		}
		if w := greedyTiny(t, cold, other, 8, false); got.Text != w.Text {
			t.Errorf("a shared part: %q, a cold engine gives %q", got.Text, w.Text)
		}
	})

	t.Run("scores", func(t *testing.T) {
		many := archEngine(t, opts, path, with(Config{Parallel: 2, Branches: 3}))
		checkBranching(t, one, many)
	})
}

// On the architectures both backends load, the Go engine agrees with
// llama.cpp on the same file: the same greedy text, and the same
// probabilities over the whole vocabulary. The sliding window is narrower
// than the prompts, so that gemma3 shows the Go engine's window matches
// llama.cpp's.
func TestBackendsAgree(t *testing.T) {
	for _, opts := range []inferencetest.Options{{Arch: "qwen3"}, {Arch: "gemma3", SlidingWindow: 16}} {
		t.Run(opts.Arch, func(t *testing.T) {
			path := inferencetest.Model(t, opts)
			lc := archEngine(t, opts, path, Config{Parallel: 1, Backend: backend.LlamaCpp})
			ol := archEngine(t, opts, path, Config{Parallel: 1, Backend: backend.Ollama})
			if b := ol.Models()[0].Backend; b != backend.Ollama {
				t.Fatalf("backend %q", b)
			}
			same, tokens, worst := agreement(t, lc, ol, true)
			t.Logf("greedy agreement: %d of %d tokens", same, tokens)
			t.Logf("largest probability difference over the vocabulary: %.2g", worst)
			if worst > 1e-3 {
				t.Errorf("probabilities differ by up to %v", worst)
			}
		})
	}
}

// agreement compares two engines of the same "tiny" file: the greedy
// tokens of archPrompts, 24 each, that agree before the first that does
// not (of all tokens), and the largest difference of a probability over
// the whole vocabulary after system and each of scoreQuestions. With
// strict, a greedy text that differs is an error.
func agreement(t *testing.T, a, b *Engine, strict bool) (same, tokens int, worst float64) {
	t.Helper()
	for _, p := range archPrompts {
		x, y := greedyTiny(t, a, p, 24, true), greedyTiny(t, b, p, 24, true)
		for i := range min(len(x.Logprobs), len(y.Logprobs)) {
			if x.Logprobs[i].Token != y.Logprobs[i].Token {
				break
			}
			same++
		}
		tokens += len(x.Logprobs)
		if strict && x.Text != y.Text {
			t.Errorf("%q:\n%s %q\n%s %q", p, a.Models()[0].Backend, x.Text, b.Models()[0].Backend, y.Text)
		}
	}
	all := allTokens(a)
	for _, q := range scoreQuestions {
		br := Branch{Text: q, Candidates: singles(all...)}
		x, y := score(t, a, system, br).Branches[0], score(t, b, system, br).Branches[0]
		for i := range x.Probabilities {
			worst = max(worst, math.Abs(x.Probabilities[i]-y.Probabilities[i]))
		}
	}
	return same, tokens, worst
}

// What the Go engine cannot do fails with an error that names it, or, for
// the prompt cache on disk, is turned off for the model with a log line
// while requests go on; a backend of another name, or llama.cpp named
// for a file only the Go engine loads, fails New.
func TestGoEngineGaps(t *testing.T) {
	opts := inferencetest.Options{Arch: "qwen35"}
	path := inferencetest.Model(t, opts)
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{KeyCache: "q8_0", ValueCache: "q8_0"}, "q8_0/q8_0 KV cache"},
		{Config{Backend: "vllm"}, "Config.Backend"},
		{Config{Backend: backend.LlamaCpp}, "llama"},
	} {
		c.cfg.Models = []catalog.Model{{ID: "tiny", Path: path}}
		e, err := New(c.cfg)
		if err == nil {
			e.Close()
			t.Errorf("%+v: New succeeded", c.cfg)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want it to name %q", c.cfg, err, c.want)
		}
	}
	var logs strings.Builder
	e := archEngine(t, opts, path, WithSaveThresholds(Config{Parallel: 1, CacheDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&logs, nil))}, 8, 16))
	for range 2 {
		greedyTiny(t, e, system+"Question?", 4, false)
	}
	if !strings.Contains(logs.String(), "prompt cache on disk is off") {
		t.Errorf("the disk cache is still on; log:\n%s", logs.String())
	}
	_, err := e.Score(context.Background(), ScoreRequest{Model: "tiny", Prefix: "Look:", Images: [][]byte{{1}}, Branches: []Branch{{Text: "?", Candidates: singles(1, 2)}}})
	if err == nil || !strings.Contains(err.Error(), "image") {
		t.Errorf("an image: %v", err)
	}
}
