package localindex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/inferkit/inferkit/search"
)

// writeFiles writes files (path under dir → content) and returns dir.
func writeFiles(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func openTestIndex(t testing.TB) *Index {
	t.Helper()
	ix, err := Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func urls(rs []search.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.URL)
	}
	return out
}

var docsFiles = map[string]string{
	"guide/install.md": "Some intro.\n\n```sh\n# not the title\n```\n\n# Installing inferkit\n\nRun make setup to build llama.cpp, then make run.\n",
	"notes.txt":        "Bananas are yellow. Bananas grow in bunches.\n",
	"page.html": `<html><head><title>Kitchen &amp; Recipes</title><style>.tomato { color: red }</style></head>
<body><h1>Soup</h1><p>A <b>tomato</b> soup recipe.</p><script>var secret = "zebra";</script></body></html>`,
	"other.htm":                   "<p>Zebra crossings are striped.</p>",
	"main.go":                     "package main // bananas\n",
	"README":                      "bananas without an extension\n",
	".hidden/secret.md":           "# Secret\n\nbananas hidden away\n",
	"dir/.also-hidden.md":         "# Also hidden\n\nbananas\n",
	"big.md":                      "# Big\n\n" + strings.Repeat("bananas ", 300),
	"deep/er/path/words.markdown": "Setext Title\n============\n\nPenguins live in the south.\n",
}

func TestIndexAddFolderAndSearch(t *testing.T) {
	ix := openTestIndex(t)
	root := writeFiles(t, t.TempDir(), docsFiles)
	mtime := time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(root, "notes.txt"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	n, err := ix.AddFolder(t.Context(), root, FolderOptions{BaseURL: "https://docs.example.com/base", MaxFileBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Errorf("AddFolder indexed %d documents, want 5 (install.md, notes.txt, page.html, other.htm, words.markdown)", n)
	}
	const base = "https://docs.example.com/base/"
	tests := []struct {
		query     string
		wantURLs  []string
		wantTitle string // of the first result
		has, not  string // in the first result's content
	}{
		{"installing", []string{base + "guide/install.md"}, "Installing inferkit", "make setup", ""},
		{"how do I install it", []string{base + "guide/install.md"}, "Installing inferkit", "", ""},
		{"tomato soup", []string{base + "page.html"}, "Kitchen & Recipes", "tomato soup recipe", "color"},
		{"recipes", []string{base + "page.html"}, "Kitchen & Recipes", "", ""},
		{"zebra", []string{base + "other.htm"}, "other.htm", "Zebra crossings", ""},
		{"bananas", []string{base + "notes.txt"}, "notes.txt", "Bananas are yellow", ""},
		{"penguins", []string{base + "deep/er/path/words.markdown"}, "Setext Title", "", ""},
		{"secret", nil, "", "", ""},
		{"the", nil, "", "", ""}, // a stop word matches nothing
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got, err := ix.Search(t.Context(), search.Query{Text: tt.query})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(urls(got), tt.wantURLs) {
				t.Fatalf("got %q, want %q", urls(got), tt.wantURLs)
			}
			if len(got) == 0 {
				return
			}
			r := got[0]
			if r.Title != tt.wantTitle {
				t.Errorf("title = %q, want %q", r.Title, tt.wantTitle)
			}
			if !strings.Contains(r.Content, tt.has) || tt.not != "" && strings.Contains(r.Content, tt.not) {
				t.Errorf("content = %q, want it to hold %q and not %q", r.Content, tt.has, tt.not)
			}
			if strings.ContainsAny(r.Content, "<>") {
				t.Errorf("content = %q holds markup", r.Content)
			}
			if r.Published.IsZero() {
				t.Error("Published is zero, want the file's modification time")
			}
		})
	}
	got, _ := ix.Search(t.Context(), search.Query{Text: "bananas"})
	if len(got) != 1 || !got[0].Published.Equal(mtime) {
		t.Errorf("Published = %v, want the file's modification time %v", got, mtime)
	}
}

func TestIndexRanking(t *testing.T) {
	ix := openTestIndex(t)
	root := writeFiles(t, t.TempDir(), map[string]string{
		"a.md": "# Cooking\n\nA page that mentions the kv cache once among many other words about pasta and sauce.\n",
		"b.md": "# The KV cache\n\nThe KV cache keeps keys and values; prompts that share a prefix reuse the KV cache.\n",
		"c.md": "# Gardening\n\nNothing about it here.\n",
	})
	if _, err := ix.AddFolder(t.Context(), root, FolderOptions{BaseURL: "https://example.com/"}); err != nil {
		t.Fatal(err)
	}
	got, err := ix.Search(t.Context(), search.Query{Text: "kv cache"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"https://example.com/b.md", "https://example.com/a.md"}; !reflect.DeepEqual(urls(got), want) {
		t.Errorf("got %q, want %q", urls(got), want)
	}
}

func TestIndexReindexReplaces(t *testing.T) {
	ix := openTestIndex(t)
	root := writeFiles(t, t.TempDir(), map[string]string{"notes.txt": "bananas\n", "keep.md": "# Keep\n\nbananas too\n"})
	for range 2 {
		if n, err := ix.AddFolder(t.Context(), root, FolderOptions{}); err != nil || n != 2 {
			t.Fatalf("AddFolder = %d, %v; want 2", n, err)
		}
	}
	writeFiles(t, root, map[string]string{"notes.txt": "cherries\n"})
	if _, err := ix.AddFolder(t.Context(), root, FolderOptions{}); err != nil {
		t.Fatal(err)
	}
	count, err := ix.idx.DocCount()
	if err != nil || count != 2 {
		t.Errorf("DocCount = %d, %v; want 2 after indexing the folder three times", count, err)
	}
	abs, _ := filepath.Abs(filepath.Join(root, "notes.txt"))
	wantURL := "file://" + filepath.ToSlash(abs)
	tests := []struct {
		query string
		want  []string
	}{
		{"cherries", []string{wantURL}},
		{"bananas", []string{"file://" + filepath.ToSlash(filepath.Join(filepath.Dir(abs), "keep.md"))}},
	}
	for _, tt := range tests {
		got, err := ix.Search(t.Context(), search.Query{Text: tt.query})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(urls(got), tt.want) {
			t.Errorf("%s: got %q, want %q", tt.query, urls(got), tt.want)
		}
	}
}

func TestIndexDomainsAndCount(t *testing.T) {
	ix := openTestIndex(t)
	files := map[string]string{}
	for i := range 6 {
		files[fmt.Sprintf("doc%d.md", i)] = fmt.Sprintf("# Doc %d\n\ncommon words here %s\n", i, strings.Repeat("common ", i))
	}
	for _, f := range []struct{ base string }{
		{"https://docs.example.com/"},
		{"https://badexample.com/"},
		{"https://example.com.evil.net/"},
		{""}, // file URLs
	} {
		if _, err := ix.AddFolder(t.Context(), writeFiles(t, t.TempDir(), files), FolderOptions{BaseURL: f.base}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name      string
		domains   []string
		count     int
		wantN     int
		wantHosts []string
	}{
		{"subdomain of allowed", []string{"example.com"}, 20, 6, []string{"docs.example.com"}},
		{"exact host", []string{"DOCS.example.com"}, 20, 6, []string{"docs.example.com"}},
		{"two domains", []string{"docs.example.com", "badexample.com"}, 20, 12, []string{"docs.example.com", "badexample.com"}},
		{"parent of evil", []string{"evil.net"}, 3, 3, []string{"example.com.evil.net"}},
		{"no match", []string{"other.org"}, 20, 0, nil},
		{"count", nil, 2, 2, nil},
		{"default count", nil, 0, search.DefaultCount, nil},
		{"all", nil, 20, 20, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ix.Search(t.Context(), search.Query{Text: "common", Count: tt.count, Domains: tt.domains})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.wantN {
				t.Fatalf("got %d results, want %d: %q", len(got), tt.wantN, urls(got))
			}
			for _, r := range got {
				if tt.wantHosts == nil {
					continue
				}
				ok := false
				for _, h := range tt.wantHosts {
					ok = ok || strings.HasPrefix(r.URL, "https://"+h+"/")
				}
				if !ok {
					t.Errorf("result %s is not from %q", r.URL, tt.wantHosts)
				}
			}
		})
	}
}

func TestIndexSnippet(t *testing.T) {
	ix := openTestIndex(t)
	words := strings.Repeat("lorem ipsum dolor sit amet ", 400)
	root := writeFiles(t, t.TempDir(), map[string]string{
		"long.txt": words + "the quokka smiles " + words,
	})
	if _, err := ix.AddFolder(t.Context(), root, FolderOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := ix.Search(t.Context(), search.Query{Text: "quokka"})
	if err != nil || len(got) != 1 {
		t.Fatalf("got %v, %v; want one result", got, err)
	}
	c := got[0].Content
	if n := utf8.RuneCountInString(c); n > search.MaxSnippetRunes || n < search.MaxSnippetRunes/2 {
		t.Errorf("snippet has %d characters, want up to %d", n, search.MaxSnippetRunes)
	}
	if !strings.HasPrefix(c, "…") || !strings.HasSuffix(c, "…") || !strings.Contains(c, "the quokka smiles") {
		t.Errorf("snippet = %q, want the middle of the text around the match", c)
	}
}

func TestIndexLifecycle(t *testing.T) {
	t.Parallel() // waits a second for a lock
	dir := filepath.Join(t.TempDir(), "index")
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	root := writeFiles(t, t.TempDir(), map[string]string{"a.md": "# A\n\nwombats\n"})
	if _, err := ix.AddFolder(t.Context(), root, FolderOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Search(t.Context(), search.Query{Text: "wombats"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Search after Close = %v, want ErrClosed", err)
	}
	if _, err := ix.AddFolder(t.Context(), root, FolderOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("AddFolder after Close = %v, want ErrClosed", err)
	}
	if err := ix.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}

	// Reopened, it still holds the document.
	ix, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if got, err := ix.Search(t.Context(), search.Query{Text: "wombats"}); err != nil || len(got) != 1 {
		t.Errorf("Search after reopening = %v, %v; want one result", got, err)
	}

	// A second Index on the same directory fails rather than waits.
	start := time.Now()
	if ix2, err := Open(dir); err == nil {
		ix2.Close()
		t.Error("Open of an index already open succeeded, want an error")
	} else if !strings.Contains(err.Error(), "open in another") || time.Since(start) > 10*time.Second {
		t.Errorf("Open of an index already open = %v after %v", err, time.Since(start))
	}

	// An empty directory becomes an index; one that holds other things
	// does not.
	empty := t.TempDir()
	if ix2, err := Open(empty); err != nil {
		t.Errorf("Open(empty dir) = %v", err)
	} else {
		ix2.Close()
	}
	if _, err := Open(root); err == nil || !strings.Contains(err.Error(), "not a search index") {
		t.Errorf("Open(folder of documents) = %v, want an error", err)
	}
}

func TestIndexErrors(t *testing.T) {
	ix := openTestIndex(t)
	root := writeFiles(t, t.TempDir(), map[string]string{"a.md": "x"})
	tests := []struct {
		name    string
		run     func() error
		wantErr string
	}{
		{"root missing", func() error {
			_, err := ix.AddFolder(t.Context(), filepath.Join(root, "nope"), FolderOptions{})
			return err
		}, "no such file"},
		{"root is a file", func() error {
			_, err := ix.AddFolder(t.Context(), filepath.Join(root, "a.md"), FolderOptions{})
			return err
		}, "not a directory"},
		{"bad base URL", func() error {
			_, err := ix.AddFolder(t.Context(), root, FolderOptions{BaseURL: "docs.example.com"})
			return err
		}, "BaseURL"},
		{"negative max", func() error {
			_, err := ix.AddFolder(t.Context(), root, FolderOptions{MaxFileBytes: -1})
			return err
		}, "negative"},
		{"cancelled add", func() error {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			_, err := ix.AddFolder(ctx, root, FolderOptions{})
			return err
		}, "context canceled"},
		{"cancelled search", func() error {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			_, err := ix.Search(ctx, search.Query{Text: "x"})
			return err
		}, "context canceled"},
		{"invalid query", func() error {
			_, err := ix.Search(t.Context(), search.Query{Text: "x", Domains: []string{"a/b"}})
			return err
		}, "query.domains[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want one that says %q", err, tt.wantErr)
			}
		})
	}
}

func TestIndexConcurrentSearch(t *testing.T) {
	ix := openTestIndex(t)
	root := writeFiles(t, t.TempDir(), docsFiles)
	if _, err := ix.AddFolder(t.Context(), root, FolderOptions{MaxFileBytes: 1024}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 8 {
		wg.Go(func() {
			for range 10 {
				got, err := ix.Search(t.Context(), search.Query{Text: "bananas"})
				if err != nil || len(got) != 1 {
					errs <- fmt.Errorf("searcher %d: %d results, %v", i, len(got), err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		if _, err := ix.AddFolder(t.Context(), root, FolderOptions{MaxFileBytes: 1024}); err != nil {
			errs <- err
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestHostSuffixes(t *testing.T) {
	got := strings.Join(hostSuffixes("Docs.Example.com."), ",")
	if want := "docs.example.com,example.com,com"; got != want {
		t.Errorf("hostSuffixes = %s, want %s", got, want)
	}
	if hostSuffixes("") != nil {
		t.Error("hostSuffixes(\"\") must be empty")
	}
}

// BenchmarkIndexSearch measures one Search over 200 Markdown documents.
func BenchmarkIndexSearch(b *testing.B) {
	topics := []string{"cache", "tokenizer", "sampling", "batching", "grammar", "embedding", "decision", "projector", "quota", "stream"}
	files := map[string]string{}
	for i := range 200 {
		var s strings.Builder
		fmt.Fprintf(&s, "# Note %d on %s\n\n", i, topics[i%len(topics)])
		for j := range 60 {
			fmt.Fprintf(&s, "Paragraph %d discusses the %s and the %s of model %d, with examples and caveats. ",
				j, topics[(i+j)%len(topics)], topics[(i*j+3)%len(topics)], i)
		}
		files[fmt.Sprintf("notes/%03d.md", i)] = s.String()
	}
	ix := openTestIndex(b)
	root := writeFiles(b, b.TempDir(), files)
	if n, err := ix.AddFolder(context.Background(), root, FolderOptions{BaseURL: "https://docs.example.com/"}); err != nil || n != 200 {
		b.Fatalf("AddFolder = %d, %v", n, err)
	}
	q := search.Query{Text: "grammar sampling caveats", Count: 5}
	b.ResetTimer()
	for b.Loop() {
		got, err := ix.Search(context.Background(), q)
		if err != nil || len(got) != 5 {
			b.Fatalf("Search = %d results, %v", len(got), err)
		}
	}
}
