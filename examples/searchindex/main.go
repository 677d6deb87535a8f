// Command searchindex builds and queries a local full-text index of
// documents (package search/localindex), the index a server's web-search
// tool can read.
//
//	searchindex -index DIR [-base-url URL] FOLDER...
//	searchindex -index DIR -query TEXT [-count N] [-domain HOST]...
//
// The first form indexes the .txt, .md, .markdown, .html and .htm files
// under each FOLDER (again: a file indexed before is replaced) and prints
// how many documents it indexed; the second prints the best matches for
// TEXT. Both may be given at once: folders first, then the query.
//
// Flags:
//
//	-index DIR      the index directory, created when missing (required)
//	-base-url URL   the http(s) URL where each FOLDER is served; documents
//	                get URL + their path under FOLDER (default: file URLs)
//	-query TEXT     search the index for TEXT
//	-count N        how many results to print (default 5, at most 20)
//	-domain HOST    only results from HOST or its subdomains; repeatable
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/inferkit/inferkit/search"
	"github.com/inferkit/inferkit/search/localindex"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "searchindex:", err)
		os.Exit(1)
	}
}

// domains collects repeated -domain flags.
type domains []string

func (d *domains) String() string     { return strings.Join(*d, ",") }
func (d *domains) Set(v string) error { *d = append(*d, v); return nil }

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("searchindex", flag.ContinueOnError)
	fs.SetOutput(stdout)
	dir := fs.String("index", "", "the index directory, created when missing (required)")
	baseURL := fs.String("base-url", "", "the http(s) URL where each FOLDER is served (default: file URLs)")
	text := fs.String("query", "", "search the index for this text")
	count := fs.Int("count", search.DefaultCount, "how many results to print")
	var only domains
	fs.Var(&only, "domain", "only results from this host or its subdomains; repeatable")
	if err := fs.Parse(args); err != nil {
		return err
	}
	folders := fs.Args()
	switch {
	case *dir == "":
		return errors.New("-index DIR is required")
	case len(folders) == 0 && *text == "":
		return errors.New("give FOLDERs to index, -query TEXT, or both")
	}

	ix, err := localindex.Open(*dir)
	if err != nil {
		return err
	}
	defer ix.Close()

	for _, folder := range folders {
		n, err := ix.AddFolder(ctx, folder, localindex.FolderOptions{BaseURL: *baseURL})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "indexed %d documents from %s\n", n, folder)
	}
	if *text == "" {
		return nil
	}
	results, err := ix.Search(ctx, search.Query{Text: *text, Count: *count, Domains: only})
	if err != nil {
		return err
	}
	if len(results) == 0 {
		fmt.Fprintln(stdout, "no results")
	}
	for i, r := range results {
		fmt.Fprintf(stdout, "%d. %s\n   %s\n   %s\n", i+1, r.Title, r.URL, r.Content)
	}
	return nil
}
