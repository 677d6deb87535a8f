//go:build cgo

package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/search"
	"github.com/inferkit/inferkit/search/localindex"
)

// The web search tests run the real engine on a tiny model forced to
// search, against a SearXNG-style httptest server or a bleve index over a
// temporary folder. The model's answer is forced too, through a JSON
// schema whose one value cites the second result: "[2]", Lyon's page.

// searchResultsJSON is what the SearXNG-style server answers to any query.
const searchResultsJSON = `{"query": "q", "results": [
	{"url": "https://example.org/paris", "title": "Paris", "content": "Paris is the capital of France.", "publishedDate": "2026-01-02T00:00:00"},
	{"url": "https://example.org/lyon", "title": "Lyon", "content": "Lyon is a city in France."}
]}`

// citedAnswer is the answer the tests force: a JSON string that cites the
// second result.
const citedAnswer = `Lyon is a city in France [2].`

// citedSchema forces citedAnswer.
const citedSchema = `{"type": "string", "enum": ["Lyon is a city in France [2]."]}`

// searxng starts a SearXNG-style server and returns a client of it.
func searxng(t *testing.T) search.Searcher {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" || r.URL.Query().Get("q") == "" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(searchResultsJSON))
	}))
	t.Cleanup(srv.Close)
	s, err := search.NewSearXNG(search.SearXNGConfig{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// docsIndex indexes a temporary folder of two Markdown pages served at
// https://docs.example.org/. The tiny model's queries are noise, which
// match no word: pinned(docsIndex(t)) searches it for "capital of
// France" instead, which ranks Paris first and Lyon second, as the
// SearXNG server does.
func docsIndex(t *testing.T) search.Searcher {
	t.Helper()
	docs := t.TempDir()
	for name, text := range map[string]string{
		"paris.md": "# Paris\n\nParis is the capital of France.\n",
		"lyon.md":  "# Lyon\n\nLyon is a city in France.\n",
	} {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := localindex.Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if _, err := ix.AddFolder(context.Background(), docs, localindex.FolderOptions{BaseURL: "https://docs.example.org/"}); err != nil {
		t.Fatal(err)
	}
	return ix
}

// pinned searches s for "capital of France", whatever the model asked.
func pinned(s search.Searcher) search.Searcher { return pinnedQuery{s, "capital of France"} }

// pinnedQuery searches for its text whatever the model asked.
type pinnedQuery struct {
	search.Searcher
	text string
}

func (p pinnedQuery) Search(ctx context.Context, q search.Query) ([]search.Result, error) {
	q.Text = p.text
	return p.Searcher.Search(ctx, q)
}

// searchServer serves the tiny model under core-2-5-mini with s as the
// engine's search backend (nil: none), and returns the base URL.
func searchServer(t *testing.T, s search.Searcher) string {
	t.Helper()
	m, _ := policy.Model(policy.Core25Mini)
	m.Path = inferencetest.Model(t, inferencetest.Options{Seed: 3, ContextLength: 4096})
	models := []catalog.Model{m}
	return serveEngine(t, inference.Config{Models: models, Parallel: 2, ContextTokens: 2048, Search: s}, httpapi.Config{Models: models}, "")
}
