//go:build cgo

package inference

import (
	"context"
	"fmt"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/runner"
)

// recurrentArchs have a recurrent state per sequence: mamba alone, jamba
// beside an attention KV cache.
var recurrentArchs = []string{"mamba", "jamba"}

func recurrentEngine(t *testing.T, arch string, cfg Config) (*Engine, *runner.Runner) {
	t.Helper()
	return recurrentFileEngine(t, inferencetest.Options{Arch: arch}, cfg)
}

// recurrentFileEngine is recurrentEngine on the file opts describe.
func recurrentFileEngine(t *testing.T, opts inferencetest.Options, cfg Config) (*Engine, *runner.Runner) {
	t.Helper()
	arch := opts.Arch
	cfg.Models = []catalog.Model{{ID: "tiny", Path: inferencetest.Model(t, opts)}}
	cfg.Threads = 1
	if cfg.ContextTokens == 0 {
		cfg.ContextTokens = 1024
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	r := e.names["tiny"].runner
	if r.SharesKV() {
		t.Fatalf("%s shares its memory between sequences", arch)
	}
	return e, r
}

// A recurrent state cannot be cut back: a prompt that shares only part of
// what a sequence holds starts afresh, and one that continues all of it
// reuses it; both give what a fresh engine gives.
func TestRecurrentPrefixReuse(t *testing.T) {
	for _, arch := range recurrentArchs {
		t.Run(arch, func(t *testing.T) {
			e, _ := recurrentEngine(t, arch, Config{Parallel: 1})
			cold, _ := recurrentEngine(t, arch, Config{Parallel: 1})
			// A Score request leaves exactly its prefix in the sequence.
			score(t, e, system, Branch{Text: "?", Candidates: singles('y')})
			whole := system + "Go on."
			got := generate(t, e, whole)
			if got.Usage.CachedTokens != len(system) {
				t.Errorf("continuing the state: %d cached, want %d", got.Usage.CachedTokens, len(system))
			}
			if want := generate(t, cold, whole); got.Text != want.Text {
				t.Errorf("continuing the state: %q, a fresh engine gives %q", got.Text, want.Text)
			}
			cut := system[:100] + "Something else entirely?"
			got = generate(t, e, cut)
			if got.Usage.CachedTokens != 0 {
				t.Errorf("cut prompt: %d cached, want 0", got.Usage.CachedTokens)
			}
			if want := generate(t, cold, cut); got.Text != want.Text {
				t.Errorf("cut prompt: %q, a fresh engine gives %q", got.Text, want.Text)
			}
		})
	}
}

// Decisions branch a recurrent state by whole-sequence copies.
func TestRecurrentScore(t *testing.T) {
	for _, arch := range recurrentArchs {
		t.Run(arch, func(t *testing.T) {
			one, _ := recurrentEngine(t, arch, Config{Parallel: 1})
			many, _ := recurrentEngine(t, arch, Config{Parallel: 2, Branches: 2})
			checkBranching(t, one, many)
		})
	}
}

// Checkpoints of the recurrent state: the same request twice reuses all
// but its last token, and a four-turn conversation's fourth turn decodes
// its new tokens and at most CheckpointEvery more; every output is what a
// fresh engine without checkpoints gives. On every backend that runs a
// recurrent model: Mamba and Jamba on both llama.cpp builds, Qwen3.5 on
// the Go engine and on the library (there with its multi-token-prediction
// block too, which the Go engine refuses).
func TestRecurrentCheckpoints(t *testing.T) {
	const every = 64
	type run struct {
		opts    inferencetest.Options
		backend string
	}
	runs := []run{{inferencetest.Options{Arch: "qwen35"}, backend.Ollama}}
	for _, arch := range recurrentArchs {
		runs = append(runs, run{inferencetest.Options{Arch: arch}, backend.LlamaCpp}, run{inferencetest.Options{Arch: arch}, backend.LibLlama})
	}
	runs = append(runs, run{inferencetest.Options{Arch: "qwen35"}, backend.LibLlama}, run{inferencetest.Options{Arch: "qwen35", NextN: 1}, backend.LibLlama})
	for _, c := range runs {
		arch := c.opts.Arch
		name := arch + "/" + c.backend
		if c.opts.NextN > 0 {
			name += "/mtp"
		}
		t.Run(name, func(t *testing.T) {
			// With n-gram drafting, where the library keeps snapshots to
			// roll drafted tokens back: a prompt's prefix must still be
			// reached through a checkpoint, never through a snapshot of
			// an earlier step.
			cfg := Config{Parallel: 1, ContextTokens: 2048, Backend: c.backend, Library: LibraryFor(t, c.backend), Draft: DraftNgram, DraftRecurrent: true}
			// Room for a turn's prompt beside the last turn's tokens,
			// which the sequence keeps only if they fit together.
			on, off := cfg, cfg
			on.CheckpointEvery, off.CheckpointBytes = every, -1
			e, r := recurrentFileEngine(t, c.opts, on)
			cold, _ := recurrentFileEngine(t, c.opts, off)
			if b := e.Models()[0].Backend; b != c.backend {
				t.Fatalf("backend %q, want %q", b, c.backend)
			}
			prompt := system + "What is a checkpoint?"
			generate(t, e, prompt)
			again := generate(t, e, prompt)
			if again.Usage.CachedTokens*10 < again.Usage.PromptTokens*9 {
				t.Errorf("the same prompt again: %d of %d tokens cached, want 90%% at least", again.Usage.CachedTokens, again.Usage.PromptTokens)
			}
			if want := generate(t, cold, prompt); again.Text != want.Text {
				t.Errorf("the same prompt again: %q, a fresh engine gives %q", again.Text, want.Text)
			}

			zero := 0.0
			req := Request{Model: "tiny", MaxTokens: 6, Temperature: &zero, Messages: []Message{Text(RoleSystem, system)}}
			for turn := range 4 {
				req.Messages = append(req.Messages, Text(RoleUser, fmt.Sprintf("Question number %d?", turn)))
				toks, _, err := e.names["tiny"].prompt(req, false)
				if err != nil {
					t.Fatal(err)
				}
				held := runner.CommonPrefix(r.Cache(0), toks[0])
				got, err := e.Generate(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				want, err := cold.Generate(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if got.Text != want.Text {
					t.Errorf("turn %d: %q, a fresh engine gives %q", turn, got.Text, want.Text)
				}
				prefilled, fresh := got.Usage.PromptTokens-got.Usage.CachedTokens, len(toks[0])-held
				if turn > 0 && prefilled > fresh+every {
					t.Errorf("turn %d prefilled %d tokens, %d new ones and more than %d others", turn, prefilled, fresh, every)
				}
				// Qwen3.5's template renders a past turn without the
				// thinking its prompt opened: the checkpoint where that
				// starts serves the next turn, which decodes only its own.
				if arch == "qwen35" && turn > 0 && prefilled != fresh {
					t.Errorf("turn %d prefilled %d tokens, not only its %d new ones", turn, prefilled, fresh)
				}
				t.Logf("turn %d: %d prompt tokens, %d prefilled, %d of them not in the sequence", turn, got.Usage.PromptTokens, prefilled, fresh)
				req.Messages = append(req.Messages, Text(RoleAssistant, got.Text))
			}
		})
	}
}

// A recurrent model's prefixes on disk (Config.CacheDir) are kept at its
// checkpoints' positions, on llama.cpp (Mamba, Jamba) and on the library
// (Mamba, whose whole state is its recurrent one): after a restart, a
// prompt that shares part of a long one resumes from within what it
// shares, with a fresh engine's output.
func TestRecurrentCheckpointsOnDisk(t *testing.T) {
	const every = 64
	runs := [][2]string{{"mamba", backend.LlamaCpp}, {"jamba", backend.LlamaCpp}, {"mamba", backend.LibLlama}}
	for _, run := range runs {
		arch, be := run[0], run[1]
		t.Run(arch+"/"+be, func(t *testing.T) {
			lib := LibraryFor(t, be)
			dir := t.TempDir()
			path := inferencetest.Model(t, inferencetest.Options{Arch: arch})
			open := func(budget int64) *Engine {
				cfg := Config{Models: []catalog.Model{{ID: "tiny", Path: path}}, Threads: 1, Parallel: 1, ContextTokens: 2048,
					CheckpointEvery: every, CheckpointBytes: budget, Backend: be, Library: lib}
				if budget > 0 {
					cfg.CacheDir = dir
				}
				cfg.saveMin, cfg.saveLong = 16, 1<<30
				e, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
			first, second := system+"First question?", system[:len(system)-30]+"Second question?"
			cold := open(-1)
			want := generate(t, cold, second)
			cold.Close()
			e := open(1 << 20)
			generate(t, e, first)
			e.Close() // waits for the saves
			e = open(1 << 20)
			defer e.Close()
			got := generate(t, e, second)
			shared := bytePrefix(first, second)
			if got.Usage.CachedTokens == 0 || got.Usage.CachedTokens > shared {
				t.Errorf("after a restart %d tokens cached, want some of the %d shared", got.Usage.CachedTokens, shared)
			}
			if got.Text != want.Text {
				t.Errorf("after a restart %q, a fresh engine gives %q", got.Text, want.Text)
			}
		})
	}
}
