//go:build cgo

package inference_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/backend/backendtest"
	"github.com/inferkit/inferkit/internal/goengine"
	"github.com/inferkit/inferkit/internal/libllama"
	"github.com/inferkit/inferkit/internal/llamacpp"
	"github.com/inferkit/inferkit/internal/testmodels"
)

// nodeLlamaCpp names node-llama-cpp among BenchmarkBackends' backends.
const nodeLlamaCpp = "node-llama-cpp"

// benchNode runs testdata/nodellama_bench.mjs, node-llama-cpp's own
// prefill and single-stream decode of the same tokens as benchBackend's
// (the file's tokenizer, read by the compiled-in llama.cpp), once per
// iteration, and reports the median of each. It skips without node or
// INFERKIT_NODE_LLAMA_CPP.
func benchNode(b *testing.B, path string) {
	dir := os.Getenv("INFERKIT_NODE_LLAMA_CPP")
	node, err := exec.LookPath("node")
	if dir == "" || err != nil {
		b.Skip("skipping: node-llama-cpp needs node and INFERKIT_NODE_LLAMA_CPP, a folder where node-llama-cpp 3.21.1 is installed")
	}
	m := loadBackend(b, backend.LlamaCpp, path)
	pre, prompt := promptTokens(b, m, benchPrefillLen), promptTokens(b, m, benchPrompt)
	m.Close()
	var prefill, decode []float64
	for range b.N {
		p, d := runNode(b, node, dir, path, pre, prompt)
		prefill, decode = append(prefill, p), append(decode, d)
	}
	slices.Sort(prefill)
	slices.Sort(decode)
	b.ReportMetric(prefill[len(prefill)/2], "prefill-tok/s")
	b.ReportMetric(decode[len(decode)/2], "decode-tok/s")
}

// BenchmarkBackends measures the backends bare, as BenchmarkBareLoop
// measures llama.cpp: prefill and decode tokens per second on the
// Qwen3-0.6B-shaped file, which all load, and on the Qwen3.5-0.8B-shaped
// file, which the compiled-in llama.cpp does not. Beside them runs
// node-llama-cpp itself (nodeLlamaCpp), on the same llama.cpp release as
// the libllama backend's test library, where INFERKIT_NODE_LLAMA_CPP names
// a folder where node-llama-cpp 3.21.1 is installed. Run it with -count 3
// for medians; the backends alternate within each count:
//
//	INFERKIT_NODE_LLAMA_CPP=DIR go test -run '^$' -bench 'Backends/qwen3-0.6b' -count 3 ./inference
func BenchmarkBackends(b *testing.B) {
	files := []struct {
		name     string
		path     func(testing.TB) string
		backends []string
	}{
		{"qwen3-0.6b", testmodels.Qwen3Bench, []string{backend.LlamaCpp, backend.Ollama, backend.LibLlama, nodeLlamaCpp}},
		{"qwen3.5-0.8b", testmodels.Qwen35Bench, []string{backend.Ollama, backend.LibLlama, nodeLlamaCpp}},
	}
	for _, f := range files {
		for _, name := range f.backends {
			b.Run(f.name+"/"+name, func(b *testing.B) {
				if name == nodeLlamaCpp {
					benchNode(b, f.path(b))
					return
				}
				m := loadBackend(b, name, f.path(b))
				defer m.Close()
				benchBackend(b, m, 1, 4)
			})
		}
	}
}

func loadBackend(b *testing.B, name, path string) backend.Model {
	var m backend.Model
	var err error
	switch name {
	case backend.Ollama:
		m, err = goengine.Load(path, goengine.Params{Threads: runtime.NumCPU()})
	case backend.LibLlama:
		var lib *libllama.Library
		if lib, err = libllama.Open(inference.LibraryFor(b, name)); err == nil {
			m, err = lib.LoadModel(path, libllama.ModelParams{})
		}
	default:
		m, err = llamacpp.LoadModel(path, llamacpp.ModelParams{})
	}
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// benchBackend decodes over the backend seam with nothing around it: a
// prompt of benchPrefillLen tokens in one batch, then, for each count of
// streams, benchGenerate tokens of each stream after a prompt of its own.
func benchBackend(b *testing.B, m backend.Model, streams ...int) {
	most := slices.Max(streams)
	ctx, err := m.NewContext(backend.ContextParams{Context: most * benchPerSeq, Batch: 512, Sequences: most, Threads: runtime.NumCPU()})
	if err != nil {
		b.Fatal(err)
	}
	defer ctx.Close()
	batch := ctx.NewBatch(512)
	defer batch.Close()
	b.Run("prefill", func(b *testing.B) {
		p := promptTokens(b, m, benchPrefillLen)
		var elapsed time.Duration
		for range b.N {
			ctx.Clear()
			batch.Clear()
			for i, t := range p {
				if _, err := batch.Add(t, i, []int{0}, i == len(p)-1); err != nil {
					b.Fatal(err)
				}
			}
			start := time.Now()
			if err := ctx.Decode(batch); err != nil {
				b.Fatal(err)
			}
			elapsed += time.Since(start)
		}
		b.ReportMetric(float64(benchPrefillLen*b.N)/elapsed.Seconds(), "tok/s")
	})
	for _, n := range streams {
		b.Run(fmt.Sprintf("decode/streams=%d", n), func(b *testing.B) {
			p := promptTokens(b, m, benchPrompt)
			var elapsed time.Duration
			for range b.N {
				elapsed += backendtest.DecodeStreams(b, m, ctx, batch, p, n, benchGenerate)
			}
			b.ReportMetric(float64(n*(benchGenerate-1)*b.N)/elapsed.Seconds(), "tok/s")
		})
	}
}

// BenchmarkLibraryRounds compares, on the Qwen3-0.6B-shaped file with
// runtime.NumCPU() threads, the compiled-in llama.cpp, the libllama
// backend without and with flash attention on its f16 cache
// (Config.FlashAttention; libllama-fa), and node-llama-cpp itself on the
// same llama.cpp release, which turns flash attention on:
// prefill of benchPrefillLen tokens in one batch, and single-stream
// greedy decode of benchGenerate tokens after benchPrompt. Three rounds
// interleave the three, so that a noisy machine slows each alike, and
// each reports its median as metrics named after it. node-llama-cpp runs
// where INFERKIT_NODE_LLAMA_CPP names a folder where node-llama-cpp
// 3.21.1 is installed (and is left out, saying so, elsewhere):
//
//	INFERKIT_NODE_LLAMA_CPP=DIR go test -run '^$' -bench LibraryRounds -benchtime 1x ./inference
func BenchmarkLibraryRounds(b *testing.B) {
	path := testmodels.Qwen3Bench(b)
	type contender struct {
		name            string
		m               backend.Model
		fa              bool
		prefill, decode []float64
	}
	var cs []*contender
	for _, name := range []string{backend.LlamaCpp, backend.LibLlama} {
		m := loadBackend(b, name, path)
		defer m.Close()
		cs = append(cs, &contender{name: name, m: m})
	}
	cs = append(cs, &contender{name: backend.LibLlama + "-fa", m: cs[1].m, fa: true})
	pre, prompt := promptTokens(b, cs[0].m, benchPrefillLen), promptTokens(b, cs[0].m, benchPrompt)
	dir := os.Getenv("INFERKIT_NODE_LLAMA_CPP")
	node, err := exec.LookPath("node")
	if dir == "" || err != nil {
		b.Log("node-llama-cpp left out: it needs node and INFERKIT_NODE_LLAMA_CPP, a folder where node-llama-cpp 3.21.1 is installed")
		node = ""
	} else {
		cs = append(cs, &contender{name: nodeLlamaCpp})
	}
	for range b.N {
		for range 3 {
			for _, c := range cs {
				var p, d float64
				if c.m == nil {
					p, d = runNode(b, node, dir, path, pre, prompt)
				} else {
					p, d = bareRates(b, c.m, c.fa, pre, prompt)
				}
				c.prefill, c.decode = append(c.prefill, p), append(c.decode, d)
			}
		}
	}
	for _, c := range cs {
		b.ReportMetric(backendtest.Median(c.prefill), c.name+"-prefill-tok/s")
		b.ReportMetric(backendtest.Median(c.decode), c.name+"-decode-tok/s")
		b.Logf("%s: prefill %.1f tok/s, decode %.2f tok/s (rounds: %.1f, %.2f)", c.name, backendtest.Median(c.prefill), backendtest.Median(c.decode), c.prefill, c.decode)
	}
}

// bareRates measures m as benchBackend does, once: prefill of pre in one
// batch, and greedy decode of benchGenerate tokens after prompt, one
// sequence, in tokens per second; with fa, flash attention on the f16
// cache where the backend lets it be chosen.
func bareRates(b *testing.B, m backend.Model, fa bool, pre, prompt []backend.Token) (prefill, decode float64) {
	ctx, err := m.NewContext(backend.ContextParams{Context: benchPerSeq, Batch: 512, Threads: runtime.NumCPU(), FlashAttention: fa})
	if err != nil {
		b.Fatal(err)
	}
	defer ctx.Close()
	batch := ctx.NewBatch(512)
	defer batch.Close()
	fill := func(toks []backend.Token) time.Duration {
		batch.Clear()
		for i, t := range toks {
			if _, err := batch.Add(t, i, []int{0}, i == len(toks)-1); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		if err := ctx.Decode(batch); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	prefill = float64(len(pre)) / fill(pre).Seconds()
	ctx.Clear()
	s, err := m.NewSampler(backend.SamplerParams{Ban: m.EOGTokens()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	fill(prompt)
	next := s.Sample(ctx, len(prompt)-1, nil)
	start := time.Now()
	for step := range benchGenerate - 1 {
		batch.Clear()
		if _, err := batch.Add(next, len(prompt)+step, []int{0}, true); err != nil {
			b.Fatal(err)
		}
		if err := ctx.Decode(batch); err != nil {
			b.Fatal(err)
		}
		next = s.Sample(ctx, 0, nil)
	}
	return prefill, float64(benchGenerate-1) / time.Since(start).Seconds()
}

// runNode runs testdata/nodellama_bench.mjs once: node-llama-cpp's
// prefill of pre and decode after prompt, in tokens per second.
func runNode(b *testing.B, node, dir, path string, pre, prompt []backend.Token) (prefill, decode float64) {
	spec, err := json.Marshal(map[string]any{"prefill": pre, "prompt": prompt, "generate": benchGenerate})
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(node, "testdata/nodellama_bench.mjs", path, strconv.Itoa(runtime.NumCPU()), strconv.Itoa(benchPerSeq), string(spec))
	cmd.Env = append(os.Environ(), "INFERKIT_NODE_LLAMA_CPP="+dir)
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("node: %v\n%s", err, out)
	}
	var r struct{ Prefill, Decode float64 }
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		b.Fatalf("node printed %q: %v", out, err)
	}
	return r.Prefill, r.Decode
}
