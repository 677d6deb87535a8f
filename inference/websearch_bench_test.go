//go:build cgo

package inference_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/testmodels"
	"github.com/inferkit/inferkit/search"
	"github.com/inferkit/inferkit/search/localindex"
)

// fixedQuery searches s for its text, whatever the model asked: the
// benchmark's model has random weights, whose queries match nothing.
type fixedQuery struct {
	s    search.Searcher
	text string
}

func (f fixedQuery) Search(ctx context.Context, q search.Query) ([]search.Result, error) {
	q.Text = f.text
	return f.s.Search(ctx, q)
}

// BenchmarkSearchLatency measures what a search adds to a request, with a
// local index over the repository's README and BENCHMARKS: the search
// itself (from the event that announces it to the one that ends it), and
// the turn after it, which reads the results (from the search's end to
// the first token of the answer), on the Qwen3-0.6B shape with 2 threads
// and search_context_size low (3 results of up to 500 characters).
func BenchmarkSearchLatency(b *testing.B) {
	docs := b.TempDir()
	for _, name := range []string{"README.md", "BENCHMARKS.md"} {
		data, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(docs, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ix, err := localindex.Open(filepath.Join(b.TempDir(), "index"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.AddFolder(context.Background(), docs, localindex.FolderOptions{}); err != nil {
		b.Fatal(err)
	}
	e, err := inference.New(inference.Config{
		Models: []catalog.Model{{ID: "qwen3", Path: testmodels.Qwen3Bench(b)}}, Parallel: 1, ContextTokens: 4096,
		Threads: min(2, runtime.NumCPU()), Search: fixedQuery{ix, "prompt cache restart"},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	zero := 0.0
	var searching, reading time.Duration
	var read int
	for i := range b.N {
		req := inference.Request{Model: "qwen3", MaxTokens: 160, Temperature: &zero, NoThinking: true,
			Messages: []inference.Message{inference.Text(inference.RoleUser, "How does the prompt cache survive a restart? Run "+string(rune('a'+i%26)))},
			Search:   &inference.SearchOptions{Force: true, MaxSearches: 1, Results: 3, ContentChars: 500}}
		first, err := e.Prepare(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		var started, ended, answered time.Time
		var res inference.Result
		for ev, err := range e.Run(context.Background(), first) {
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			switch {
			case ev.Search != nil && ev.Search.Status == inference.SearchSearching:
				started = now
			case ev.Search != nil:
				ended = now
			case ev.Final != nil:
				res = *ev.Final
			case !ended.IsZero() && answered.IsZero() && (ev.Text != "" || ev.Reasoning != ""):
				answered = now
			}
		}
		if len(res.Searches) != 1 || res.Searches[0].Status != inference.SearchCompleted || len(res.Searches[0].Results) == 0 || answered.IsZero() {
			b.Fatalf("searches %+v, answered %v", res.Searches, !answered.IsZero())
		}
		searching += ended.Sub(started)
		reading += answered.Sub(ended)
		// The second turn's prompt is the first's, the call and the
		// results: what it read beyond the first prompt.
		read += res.Usage.PromptTokens - 2*first.InputTokens
	}
	n := float64(b.N)
	b.ReportMetric(searching.Seconds()*1000/n, "ms-search")
	b.ReportMetric(reading.Seconds()/n, "s-to-answer-after")
	b.ReportMetric(float64(read)/n, "tokens-added")
	b.ReportMetric(0, "ns/op")
}
