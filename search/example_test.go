package search_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/inferkit/inferkit/search"
)

// A SearXNG client, here against a stand-in for an instance that answers
// every search with the same JSON. Titles and snippets come back as plain
// text, and Domains keeps only results from go.dev and its subdomains.
func Example() {
	instance := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"query": "go iterators", "results": [
			{"url": "https://go.dev/blog/range-functions", "title": "Range Over Function Types",
			 "content": "Iterators in <b>Go</b> 1.23 &amp; later.", "publishedDate": "2024-08-20T00:00:00"},
			{"url": "https://example.org/go-iterators", "title": "Go iterators, explained",
			 "content": "A blog post elsewhere.", "publishedDate": null},
			{"url": "https://pkg.go.dev/iter", "title": "iter package - iter - Go Packages",
			 "content": "Package iter provides basic definitions related to iterators.", "publishedDate": null}
		]}`)
	}))
	defer instance.Close()

	s, err := search.NewSearXNG(search.SearXNGConfig{URL: instance.URL})
	if err != nil {
		log.Fatal(err)
	}
	var searcher search.Searcher = s // what a web-search tool calls
	results, err := searcher.Search(context.Background(), search.Query{
		Text:    "go iterators",
		Count:   3,
		Domains: []string{"go.dev"},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Printf("%s\n  %s\n  %s\n", r.Title, r.URL, r.Content)
		if !r.Published.IsZero() {
			fmt.Println("  published", r.Published.Format("2006-01-02"))
		}
	}
	// Output:
	// Range Over Function Types
	//   https://go.dev/blog/range-functions
	//   Iterators in Go 1.23 & later.
	//   published 2024-08-20
	// iter package - iter - Go Packages
	//   https://pkg.go.dev/iter
	//   Package iter provides basic definitions related to iterators.
}
