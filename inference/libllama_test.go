//go:build cgo

package inference

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/libllama"
)

// npmLibrary is where scripts/fetch-testdata.sh puts llama.cpp v0.4.0,
// from node-llama-cpp's platform package.
const npmLibrary = "../.build/testdata/npm/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v0.4.0.so"

// testLibrary returns the llama.cpp library that INFERKIT_LIBLLAMA names,
// or the npm one, or skips the test when neither is there.
func testLibrary(t testing.TB) string {
	t.Helper()
	path := os.Getenv(libraryEnv)
	if path == "" {
		path = npmLibrary
	}
	if _, err := os.Stat(path); err != nil {
		t.Skipf("skipping: no llama.cpp library at %s (scripts/fetch-testdata.sh fetches one; %s names another)", path, libraryEnv)
	}
	return path
}

// LibraryFor returns the library that backend b needs in a test's
// Config: testLibrary's for backend.LibLlama (or a skip), "" for the
// others.
func LibraryFor(t testing.TB, b string) string {
	if b != backend.LibLlama {
		return ""
	}
	return testLibrary(t)
}

// With a library configured and no Backend named, the library runs the
// model: ModelInfo says so, and its greedy text is the compiled-in
// llama.cpp's on the same file.
func TestLibraryIsTriedFirst(t *testing.T) {
	lib := testLibrary(t)
	opts := inferencetest.Options{Arch: "qwen3"}
	path := inferencetest.Model(t, opts)
	e := archEngine(t, opts, path, Config{Parallel: 1, Library: lib})
	if b := e.Models()[0].Backend; b != backend.LibLlama {
		t.Fatalf("backend %q, want %q", b, backend.LibLlama)
	}
	lc := archEngine(t, opts, path, Config{Parallel: 1, Backend: backend.LlamaCpp})
	for _, p := range archPrompts[:2] {
		if a, b := greedyTiny(t, e, p, 12, false).Text, greedyTiny(t, lc, p, 12, false).Text; a != b {
			t.Errorf("%q: libllama %q, llama.cpp %q", p, a, b)
		}
	}
}

// The environment variable configures the library as Config.Library
// does; named with another Backend, it is not used.
func TestLibraryFromEnvironment(t *testing.T) {
	t.Setenv(libraryEnv, testLibrary(t))
	opts := inferencetest.Options{}
	path := inferencetest.Model(t, opts)
	if b := archEngine(t, opts, path, Config{Parallel: 1}).Models()[0].Backend; b != backend.LibLlama {
		t.Fatalf("with %s set: backend %q", libraryEnv, b)
	}
	if b := archEngine(t, opts, path, Config{Parallel: 1, Backend: backend.LlamaCpp}).Models()[0].Backend; b != backend.LlamaCpp {
		t.Fatalf("with %s set and Backend llama.cpp: backend %q", libraryEnv, b)
	}
}

// New refuses, before loading any model, a library path that names
// nothing, a library of another llama.cpp API (naming both versions), a
// libllama backend without a library, a library beside another
// backend, and the library's flash attention without the library.
func TestLibraryRefusedAtNew(t *testing.T) {
	t.Setenv(libraryEnv, "")
	models := []catalog.Model{{ID: "m", Path: inferencetest.Model(t, inferencetest.Options{})}}
	missing := filepath.Join(t.TempDir(), "libllama.so")
	cases := []struct {
		name string
		cfg  Config
		want []string
		is   error
	}{
		{"missing", Config{Library: missing}, []string{"Config.Library", missing}, fs.ErrNotExist},
		{"no library", Config{Backend: backend.LibLlama}, []string{libraryEnv, "Config.Library"}, nil},
		{"another backend", Config{Backend: backend.Ollama, Library: missing}, []string{"Config.Library", "ollama"}, nil},
		{"flash attention on another backend", Config{Backend: backend.LlamaCpp, FlashAttention: true}, []string{"Config.FlashAttention", "llama.cpp"}, nil},
		{"flash attention without a library", Config{FlashAttention: true}, []string{"Config.FlashAttention", libraryEnv}, nil},
	}
	if cc, err := exec.LookPath("cc"); err == nil {
		dir := t.TempDir()
		src := filepath.Join(dir, "old.c")
		if err := os.WriteFile(src, []byte(`const char *llama_version(void) { return "0.3.1"; }`), 0o644); err != nil {
			t.Fatal(err)
		}
		old := filepath.Join(dir, "libllama.so")
		if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", old, src).CombinedOutput(); err != nil {
			t.Fatalf("cc: %v\n%s", err, out)
		}
		cases = append(cases, struct {
			name string
			cfg  Config
			want []string
			is   error
		}{"another version", Config{Library: old, Backend: backend.LibLlama}, []string{"0.3.1", "0.4.0", "Config.Library"}, nil})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Models = models
			e, err := New(c.cfg)
			if err == nil {
				e.Close()
				t.Fatal("New succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("New: %v, want it to name %q", err, w)
				}
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("New: %v, want it to wrap %v", err, c.is)
			}
		})
	}
}

// newArchsOnLibrary are the architectures that the library runs and the
// compiled-in llama.cpp does not: qwen35 with the multi-token-prediction
// block the converter now writes by default (which the Go engine
// refuses), qwen35moe, which no other backend runs, and gemma4.
var newArchsOnLibrary = []inferencetest.Options{
	{Arch: "qwen35", NextN: 1},
	{Arch: "qwen35moe", NextN: 1},
	{Arch: "gemma4", SlidingWindow: 16},
}

// The new architectures, and one the compiled-in build runs too, load on
// the library, generate, batch, reuse prefixes and score as on the other
// backends (checkArchitecture).
func TestLibraryArchitectures(t *testing.T) {
	lib := testLibrary(t)
	for _, opts := range append([]inferencetest.Options{{Arch: "qwen3"}}, newArchsOnLibrary...) {
		t.Run(opts.Arch, func(t *testing.T) {
			checkArchitecture(t, opts, Config{Backend: backend.LibLlama, Library: lib}, backend.LibLlama)
		})
	}
}

// The differential test against the current llama.cpp: on the same tiny
// files, the compiled-in llama.cpp's llama, qwen3 and gemma3 and the Go
// engine's qwen35 and gemma4 against the library, greedy token by token
// and in probabilities over the whole vocabulary (agreement). The
// greedy texts must be the same, and the probabilities within 1e-3 (they
// are within 1e-5 with the library's attention run without flash
// attention; with it, gemma4's greedy text parted from the Go engine's
// at a near tie). The table is logged (go test -v -run
// TestLibraryAgreement ./inference).
func TestLibraryAgreement(t *testing.T) {
	lib := testLibrary(t)
	var table strings.Builder
	table.WriteString("| architecture | against | greedy tokens agreeing | largest probability difference |\n|---|---|---|---|\n")
	for _, c := range []struct {
		opts inferencetest.Options
		vs   string
	}{
		{inferencetest.Options{}, backend.LlamaCpp},
		{inferencetest.Options{Arch: "qwen3"}, backend.LlamaCpp},
		{inferencetest.Options{Arch: "gemma3", SlidingWindow: 16}, backend.LlamaCpp},
		{inferencetest.Options{Arch: "qwen35"}, backend.Ollama},
		{inferencetest.Options{Arch: "gemma4", SlidingWindow: 16}, backend.Ollama},
	} {
		arch := c.opts.Arch
		if arch == "" {
			arch = "llama"
		}
		t.Run(arch, func(t *testing.T) {
			path := inferencetest.Model(t, c.opts)
			ll := archEngine(t, c.opts, path, Config{Parallel: 1, Backend: backend.LibLlama, Library: lib})
			other := archEngine(t, c.opts, path, Config{Parallel: 1, Backend: c.vs})
			same, tokens, worst := agreement(t, other, ll, true)
			fmt.Fprintf(&table, "| %s | %s | %d of %d | %.2g |\n", arch, c.vs, same, tokens, worst)
			if worst > 1e-3 {
				t.Errorf("probabilities differ by up to %v", worst)
			}
		})
	}
	t.Logf("libllama (llama.cpp %s) against the other backends:\n%s", libllamaVersion(t, lib), table.String())
}

func libllamaVersion(t *testing.T, path string) string {
	lib, err := libllama.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return lib.Version()
}

// On the library, a JSON Schema constrains generation, log-probabilities
// come with the tokens, and embedding and reranking models give the
// compiled-in llama.cpp's numbers.
func TestLibraryFormatsAndEncoders(t *testing.T) {
	lib := testLibrary(t)
	opts := inferencetest.Options{Arch: "qwen3"}
	path := inferencetest.Model(t, opts)
	zero := 0.0
	req := Request{Model: "tiny", Prompt: "A person:", MaxTokens: 64, Temperature: &zero, Logprobs: true,
		Format: &Format{Schema: []byte(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)}}
	var res [2]Result
	for i, b := range []string{backend.LibLlama, backend.LlamaCpp} {
		e := archEngine(t, opts, path, Config{Parallel: 2, Backend: b, Library: LibraryFor(t, b)})
		var err error
		if res[i], err = e.Generate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	var v struct{ N *int }
	if err := json.Unmarshal([]byte(res[0].Text), &v); err != nil || v.N == nil {
		t.Errorf("under a schema: %q (%v)", res[0].Text, err)
	}
	if res[0].Text != res[1].Text || len(res[0].Logprobs) != len(res[1].Logprobs) || len(res[0].Logprobs) == 0 {
		t.Fatalf("under a schema: %q with %d log-probabilities; llama.cpp %q with %d", res[0].Text, len(res[0].Logprobs), res[1].Text, len(res[1].Logprobs))
	}
	for i, lp := range res[0].Logprobs {
		if want := res[1].Logprobs[i]; lp.Token != want.Token || math.Abs(lp.Logprob-want.Logprob) > 1e-3 {
			t.Fatalf("token %d: %+v, llama.cpp %+v", i, lp, want)
		}
	}

	for _, enc := range []inferencetest.Options{{Arch: "bert"}, {Arch: "bert", Pooling: "mean"}} {
		path := inferencetest.Model(t, enc)
		a := archEngine(t, enc, path, Config{Backend: backend.LibLlama, Library: lib})
		b := archEngine(t, enc, path, Config{Backend: backend.LlamaCpp})
		docs := []string{"a fox is an animal", "the sky is blue"}
		if enc.Pooling == "" {
			x, err := a.Rank(context.Background(), RankRequest{Model: "tiny", Query: "what is a fox", Documents: docs})
			if err != nil {
				t.Fatal(err)
			}
			y, err := b.Rank(context.Background(), RankRequest{Model: "tiny", Query: "what is a fox", Documents: docs})
			if err != nil {
				t.Fatal(err)
			}
			for i := range docs {
				if math.Abs(x.Scores[i]-y.Scores[i]) > 1e-3*max(1, math.Abs(y.Scores[i])) {
					t.Errorf("rank %d: %v, llama.cpp %v", i, x.Scores[i], y.Scores[i])
				}
			}
			continue
		}
		x, err := a.Embed(context.Background(), EmbedRequest{Model: "tiny", Input: docs})
		if err != nil {
			t.Fatal(err)
		}
		y, err := b.Embed(context.Background(), EmbedRequest{Model: "tiny", Input: docs})
		if err != nil {
			t.Fatal(err)
		}
		for i := range docs {
			for j := range y.Embeddings[i] {
				if math.Abs(float64(x.Embeddings[i][j]-y.Embeddings[i][j])) > 1e-4 {
					t.Fatalf("embedding %d[%d]: %v, llama.cpp %v", i, j, x.Embeddings[i][j], y.Embeddings[i][j])
				}
			}
		}
	}
}

// Config.FlashAttention changes how the library computes attention on an
// f16 cache: a decision's log-probabilities move, by less than 5e-3,
// and a prompt's prefix saved to disk with it comes back after a
// restart (its values are then stored untransposed).
func TestLibraryFlashAttention(t *testing.T) {
	lib := testLibrary(t)
	opts := inferencetest.Options{Arch: "qwen3"}
	path := inferencetest.Model(t, opts)
	var scores [2][]float64
	for i, fa := range []bool{false, true} {
		e := archEngine(t, opts, path, Config{Parallel: 1, Backend: backend.LibLlama, Library: lib, FlashAttention: fa})
		scores[i] = score(t, e, system, Branch{Text: "Yes or no?", Candidates: singles(allTokens(e)[:64]...)}).Branches[0].LogProbs
	}
	var moved, worst float64
	for i := range scores[0] {
		d := math.Abs(scores[0][i] - scores[1][i])
		moved, worst = moved+d, max(worst, d)
	}
	if moved == 0 || worst > 5e-3 {
		t.Errorf("with flash attention the log-probabilities moved by %.3g in all, %.3g at most; want some, under 5e-3", moved, worst)
	}
	checkSurvivesRestart(t, Config{Backend: backend.LibLlama, Library: lib, FlashAttention: true})
}
