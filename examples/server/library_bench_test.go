//go:build cgo

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/backend/backendtest"
	"github.com/inferkit/inferkit/internal/libllama"
	"github.com/inferkit/inferkit/internal/testmodels"
)

// BenchmarkLibraryServer compares, on the library (libllama) and the
// Qwen3-0.6B-shaped file with runtime.NumCPU() threads, the aggregate
// decode rate of benchStreams streaming chat completions through the
// HTTP API (the handler this server mounts, on an httptest server;
// greedy, ignore_eos, counted
// in the window where all streams generate: backendtest.SteadyWindow) with a bare
// loop that decodes as many sequences in each batch over the backend
// seam (backendtest.DecodeStreams). Three rounds interleave the two;
// each reports its median:
//
//	go test -run '^$' -bench LibraryServer -benchtime 1x ./examples/server
func BenchmarkLibraryServer(b *testing.B) {
	path := testmodels.Qwen3Bench(b)
	lib := testLibrary(b)
	opened, err := libllama.Open(lib)
	if err != nil {
		b.Fatal(err)
	}
	m, err := opened.LoadModel(path, libllama.ModelParams{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	ctx, err := m.NewContext(backend.ContextParams{Context: benchStreams * benchPerSeq, Batch: 512, Sequences: benchStreams, Threads: runtime.NumCPU()})
	if err != nil {
		b.Fatal(err)
	}
	defer ctx.Close()
	batch := ctx.NewBatch(512)
	defer batch.Close()
	p := backendtest.BenchTokens(b, m, benchPrompt)
	var prompt strings.Builder // the engine tokenizes it back to p
	for _, t := range p {
		prompt.Write(m.Piece(t, false))
	}

	e, err := inference.New(inference.Config{
		Models:        []catalog.Model{{ID: "qwen3", Path: path}},
		Parallel:      benchStreams,
		ContextTokens: benchPerSeq,
		Threads:       runtime.NumCPU(),
		Backend:       backend.LibLlama,
		Library:       lib,
		Draft:         inference.DraftNone,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	keys, err := httpapi.NewStaticKeys("sk-bench")
	if err != nil {
		b.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{Engine: e, Models: []catalog.Model{{ID: "qwen3", Path: path}}, Keys: keys})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()

	// The bare loop's prompts are as long as the server's, chat
	// template and all, so that both attend over as many cells.
	text := func(round, s int) string { return fmt.Sprintf("Round %d, stream %d. %s", round, s, prompt.String()) }
	var usage struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	first := chat(b, srv.URL, text(0, 0), false)
	if first == nil {
		b.FailNow()
	}
	err = json.NewDecoder(first).Decode(&usage)
	first.Close()
	if err != nil || usage.Usage.PromptTokens < benchPrompt {
		b.Fatalf("%+v, %v", usage, err)
	}
	p = backendtest.BenchTokens(b, m, usage.Usage.PromptTokens)
	var bare, server []float64
	var chunks []int // per stream, of benchGenerate tokens
	for range b.N {
		for round := range 3 {
			bare = append(bare, float64(benchStreams*(benchGenerate-1))/backendtest.DecodeStreams(b, m, ctx, batch, p, benchStreams, benchGenerate).Seconds())
			arrivals := make([][]time.Time, benchStreams)
			var wg sync.WaitGroup
			for s := range benchStreams {
				// A distinct start keeps each stream's prompt its own.
				wg.Go(func() { arrivals[s] = streamChat(b, chat(b, srv.URL, text(round+1, s), true)) })
			}
			wg.Wait()
			for _, a := range arrivals {
				chunks = append(chunks, len(a))
			}
			tokens, elapsed := backendtest.SteadyWindow(arrivals)
			server = append(server, float64(tokens)/elapsed.Seconds())
		}
	}
	b.ReportMetric(backendtest.Median(bare), "bare-tok/s")
	b.ReportMetric(backendtest.Median(server), "server-tok/s")
	b.Logf("%d streams on libllama: bare loop %.1f tok/s, HTTP server %.1f tok/s, %.2fx (rounds: %.1f, %.1f); text chunks of %d-token streams: %d to %d",
		benchStreams, backendtest.Median(bare), backendtest.Median(server), backendtest.Median(server)/backendtest.Median(bare), bare, server, benchGenerate, slices.Min(chunks), slices.Max(chunks))
}

// chat sends a greedy chat completion of benchGenerate tokens of text to
// the server at url, streamed or not; the caller closes the body. nil
// after a failure, which it reports.
func chat(b *testing.B, url, text string, stream bool) io.ReadCloser {
	body, _ := json.Marshal(map[string]any{
		"model": "qwen3", "stream": stream, "max_tokens": benchGenerate, "temperature": 0, "ignore_eos": true,
		"messages": []map[string]string{{"role": "user", "content": text}},
	})
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer sk-bench")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Error(err)
		return nil
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		b.Errorf("status %s", res.Status)
		return nil
	}
	return res.Body
}

// The figures of the benchmark, as inference's benchmarks take them: 8
// streams of 512 tokens, 128-token prompts, 48 tokens generated.
const (
	benchStreams  = 8
	benchPerSeq   = 512
	benchPrompt   = 128
	benchGenerate = 48
)

// streamChat reads a streamed chat completion as it comes and returns
// when each of its text chunks arrived.
func streamChat(b *testing.B, body io.ReadCloser) []time.Time {
	if body == nil {
		return nil
	}
	defer body.Close()
	var arrivals []time.Time
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || line == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					Reasoning string `json:"reasoning_content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(line), &chunk); err != nil {
			b.Errorf("chunk %q: %v", line, err)
			return nil
		}
		// A chunk of text per token (a token without text of its own,
		// such as part of a character, comes with the next: the count is
		// the server's lower bound).
		if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content+chunk.Choices[0].Delta.Reasoning != "" {
			arrivals = append(arrivals, time.Now())
		}
	}
	if len(arrivals) < benchGenerate/2 {
		b.Errorf("%d chunks of a %d-token completion", len(arrivals), benchGenerate)
	}
	return arrivals
}
