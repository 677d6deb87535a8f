package localindex_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/inferkit/inferkit/search"
	"github.com/inferkit/inferkit/search/localindex"
)

// An Index over a folder of Markdown files, served at docs.example.com.
func ExampleIndex() {
	docs, err := os.MkdirTemp("", "docs")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(docs)
	for name, text := range map[string]string{
		"kv-cache.md":  "# The KV cache\n\nPrompts that start like an earlier one reuse its KV cache.\n",
		"decisions.md": "# Decisions\n\nA decision answers with a probability for every option.\n",
	} {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			log.Fatal(err)
		}
	}

	dir, err := os.MkdirTemp("", "index")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ix, err := localindex.Open(dir) // an empty directory becomes an index
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()

	ctx := context.Background()
	n, err := ix.AddFolder(ctx, docs, localindex.FolderOptions{BaseURL: "https://docs.example.com/"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("indexed", n, "documents")

	results, err := ix.Search(ctx, search.Query{Text: "which prompts reuse the cache?", Count: 3})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Printf("%s\n  %s\n  %s\n", r.Title, r.URL, r.Content)
	}
	// Output:
	// indexed 2 documents
	// The KV cache
	//   https://docs.example.com/kv-cache.md
	//   # The KV cache Prompts that start like an earlier one reuse its KV cache.
}
