package localindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
	blevesearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bolt "go.etcd.io/bbolt"

	"github.com/inferkit/inferkit/search"
)

// DefaultMaxFileBytes is the largest file AddFolder indexes when
// FolderOptions.MaxFileBytes is 0.
const DefaultMaxFileBytes = 8 << 20

// ErrClosed is returned by the methods of an Index after Close.
var ErrClosed = errors.New("localindex: index is closed")

// Index is a search.Searcher.
var _ search.Searcher = (*Index)(nil)

// Fields of an indexed document, and the version of their mapping, kept
// in the index so that an index made with another mapping is refused.
// versionKey keeps the name it had when the index was part of package
// search, so that indexes made then still open.
const (
	fieldURL       = "url"
	fieldTitle     = "title"
	fieldContent   = "content"
	fieldPublished = "published"
	fieldHosts     = "hosts"

	versionKey = "inferkit.search.mapping"
	version    = "1"
)

// openTimeout bounds how long Open waits for an index that another
// process holds.
const openTimeout = time.Second

// batchDocs and batchBytes bound what AddFolder holds before writing.
const (
	batchDocs  = 200
	batchBytes = 32 << 20
)

// Index is a full-text index of local documents kept in a directory, a
// search.Searcher (bleve, English stemming, titles weigh twice the text).
// It is safe for concurrent use: searches run in parallel with each other
// and with AddFolder. The zero Index is not usable: Open makes one, and
// whoever opens it must Close it; after Close every method returns
// ErrClosed. One Index at a time may hold a directory: opening one that
// another process or Index holds fails.
//
// Search ignores the Locale and Location of a [search.Query]; its Domains
// match the host of each document's URL, so they never match file URLs.
type Index struct {
	mu  sync.RWMutex
	idx bleve.Index // nil once closed
}

// FolderOptions says how AddFolder maps files to documents. The zero
// value gives each document the file URL of its absolute path and skips
// files over DefaultMaxFileBytes.
type FolderOptions struct {
	// BaseURL, when set, is the http or https URL of the folder's root:
	// a file at "guide/intro.md" under the root gets BaseURL +
	// "guide/intro.md" (a missing trailing slash is added). Empty means
	// file URLs.
	BaseURL string
	// MaxFileBytes skips larger files; 0 means DefaultMaxFileBytes.
	MaxFileBytes int64
}

// Open opens the index in dir, or creates one there when dir does not
// exist or is empty. The caller must Close it.
func Open(dir string) (*Index, error) {
	if dir == "" {
		return nil, errors.New("localindex: Open needs a directory")
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) == 0 {
		// bleve creates its directory itself and refuses one that exists.
		if err := os.Remove(dir); err != nil {
			return nil, fmt.Errorf("localindex: preparing %s: %w", dir, err)
		}
	}
	// Another process holding the index makes the open fail, not wait.
	idx, err := bleve.OpenUsing(dir, map[string]any{"bolt_timeout": openTimeout.String()})
	switch {
	case errors.Is(err, bleve.ErrorIndexPathDoesNotExist):
		idx, err = bleve.New(dir, indexMapping())
		if err != nil {
			return nil, fmt.Errorf("localindex: creating an index in %s: %w", dir, err)
		}
		if err := idx.SetInternal([]byte(versionKey), []byte(version)); err != nil {
			idx.Close()
			return nil, fmt.Errorf("localindex: creating an index in %s: %w", dir, err)
		}
	case errors.Is(err, bleve.ErrorIndexMetaMissing):
		return nil, fmt.Errorf("localindex: %s is not a search index (and not empty)", dir)
	case errors.Is(err, bolt.ErrTimeout):
		return nil, fmt.Errorf("localindex: the index in %s is open in another process or Index: %w", dir, err)
	case err != nil:
		return nil, fmt.Errorf("localindex: opening the index in %s: %w", dir, err)
	default:
		v, err := idx.GetInternal([]byte(versionKey))
		if err != nil || string(v) != version {
			idx.Close()
			return nil, fmt.Errorf("localindex: %s holds an index of another layout (%q, want %q); delete it and index again", dir, v, version)
		}
	}
	return &Index{idx: idx}, nil
}

// indexMapping maps the fields of a document: text analysed in English
// with positions for snippets, the URL and date stored only, the URL's
// host and parent domains as exact terms for search.Query.Domains.
func indexMapping() mapping.IndexMapping {
	text := func() *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = en.AnalyzerName
		f.Store = true
		f.IncludeTermVectors = true
		f.IncludeInAll = false
		return f
	}
	stored := bleve.NewTextFieldMapping()
	stored.Index = false
	stored.Store = true
	stored.IncludeInAll = false
	hosts := bleve.NewKeywordFieldMapping()
	hosts.Analyzer = keyword.Name
	hosts.Store = false
	hosts.IncludeInAll = false

	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt(fieldTitle, text())
	doc.AddFieldMappingsAt(fieldContent, text())
	doc.AddFieldMappingsAt(fieldURL, stored)
	doc.AddFieldMappingsAt(fieldPublished, stored)
	doc.AddFieldMappingsAt(fieldHosts, hosts)

	m := bleve.NewIndexMapping()
	m.DefaultAnalyzer = en.AnalyzerName
	m.DefaultMapping = doc
	return m
}

// Close closes the index, waiting for calls in progress. Closing twice
// returns ErrClosed.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.idx == nil {
		return ErrClosed
	}
	err := ix.idx.Close()
	ix.idx = nil
	if err != nil {
		return fmt.Errorf("localindex: closing the index: %w", err)
	}
	return nil
}

// use runs f on the open index, holding it open meanwhile.
func (ix *Index) use(f func(bleve.Index) error) error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.idx == nil {
		return ErrClosed
	}
	return f(ix.idx)
}

// AddFolder indexes every .txt, .md, .markdown, .html and .htm file under
// root, skipping hidden files and directories, files that are not regular
// (symbolic links included) and files over opts.MaxFileBytes. A document
// is its file's text (HTML without markup), titled by its first Markdown
// heading or HTML <title>, else its file name, and published at its
// modification time. Its ID is its URL, which opts derives from its path
// under root, so indexing the same folder again replaces its documents;
// documents of files since deleted stay. A file or directory that cannot
// be read stops the walk with an error, as does ctx; n counts the
// documents written, also when the walk stopped part way.
func (ix *Index) AddFolder(ctx context.Context, root string, opts FolderOptions) (n int, err error) {
	if opts.MaxFileBytes < 0 {
		return 0, fmt.Errorf("localindex: FolderOptions.MaxFileBytes %d is negative", opts.MaxFileBytes)
	}
	if opts.MaxFileBytes == 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	var base *url.URL
	if opts.BaseURL != "" {
		base, err = url.Parse(opts.BaseURL)
		if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" || base.RawQuery != "" || base.Fragment != "" {
			return 0, fmt.Errorf("localindex: FolderOptions.BaseURL %q must be an http or https URL without query or fragment", opts.BaseURL)
		}
		if !strings.HasSuffix(base.Path, "/") {
			base.Path += "/"
		}
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return 0, fmt.Errorf("localindex: AddFolder: %w", err)
	}
	if info, err := os.Stat(root); err != nil {
		return 0, fmt.Errorf("localindex: AddFolder: %w", err)
	} else if !info.IsDir() {
		return 0, fmt.Errorf("localindex: AddFolder: %s is not a directory", root)
	}

	// Every document's URL has the base's host (file URLs have none).
	var hosts []string
	if base != nil {
		hosts = hostSuffixes(base.Hostname())
	}

	var batch *bleve.Batch
	pending := 0
	flush := func() error {
		if pending == 0 {
			return nil
		}
		err := ix.use(func(idx bleve.Index) error { return idx.Batch(batch) })
		if err != nil {
			return fmt.Errorf("localindex: writing to the index: %w", err)
		}
		n += pending
		pending = 0
		batch.Reset()
		return nil
	}
	if err := ix.use(func(idx bleve.Index) error { batch = idx.NewBatch(); return nil }); err != nil {
		return 0, err
	}

	walkErr := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && strings.HasPrefix(name, ".") {
				return filepath.SkipDir
			}
			return nil
		}
		kind := docKind(name)
		if kind == kindNone || strings.HasPrefix(name, ".") || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > opts.MaxFileBytes {
			return nil
		}
		data, ok, err := readBounded(path, opts.MaxFileBytes)
		if err != nil || !ok {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		doc := makeDocument(kind, name, string(data))
		doc[fieldURL] = documentURL(base, root, rel)
		doc[fieldPublished] = info.ModTime().UTC().Format(time.RFC3339Nano)
		doc[fieldHosts] = hosts
		if err := batch.Index(doc[fieldURL].(string), doc); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		pending++
		if pending >= batchDocs || batch.TotalDocsSize() >= batchBytes {
			return flush()
		}
		return nil
	})
	if walkErr != nil {
		walkErr = fmt.Errorf("localindex: AddFolder %s: %w", root, walkErr)
		// What was read before the error is still worth keeping.
		if err := flush(); err != nil {
			return n, errors.Join(walkErr, err)
		}
		return n, walkErr
	}
	return n, flush()
}

type documentKind int

const (
	kindNone documentKind = iota
	kindText
	kindMarkdown
	kindHTML
)

// docKind says how to read a file by its extension.
func docKind(name string) documentKind {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".txt":
		return kindText
	case ".md", ".markdown":
		return kindMarkdown
	case ".html", ".htm":
		return kindHTML
	}
	return kindNone
}

// readBounded reads the file at path, reporting ok false when it holds
// more than max bytes (it may have grown since it was listed).
func readBounded(path string, max int64) (data []byte, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, false, err
	}
	return data, int64(len(data)) <= max, nil
}

// makeDocument returns the title and content fields of a file's document.
func makeDocument(kind documentKind, name, src string) map[string]any {
	src = strings.ToValidUTF8(src, "\uFFFD")
	var title, content string
	switch kind {
	case kindHTML:
		title, content = search.HTMLText(src)
	case kindMarkdown:
		title, content = markdownTitle(src), src
	default:
		content = src
	}
	if title == "" {
		title = name
	}
	return map[string]any{fieldTitle: title, fieldContent: content}
}

// documentURL is the URL of the file at rel under root: under base when
// there is one, else the file URL of its absolute path.
func documentURL(base *url.URL, root, rel string) string {
	if base != nil {
		return base.JoinPath(strings.Split(filepath.ToSlash(rel), "/")...).String()
	}
	p := filepath.ToSlash(filepath.Join(root, rel))
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows path such as C:/docs
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// hostSuffixes returns host and each of its parent domains, such as
// "docs.example.com", "example.com" and "com": the terms the index stores
// so that a query for any allowed domain finds its subdomains too, by the
// same rule as search.AllowedURL.
func hostSuffixes(host string) []string {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return nil
	}
	out := []string{host}
	for i := 0; i < len(host); i++ {
		if host[i] == '.' {
			out = append(out, host[i+1:])
		}
	}
	return out
}

// Search returns up to q.Count documents that match q's words, best
// first, each with a snippet of its text around the words it matched.
func (ix *Index) Search(ctx context.Context, q search.Query) ([]search.Result, error) {
	q, err := q.Normalize()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	title := bleve.NewMatchQuery(q.Text)
	title.SetField(fieldTitle)
	title.SetBoost(2)
	content := bleve.NewMatchQuery(q.Text)
	content.SetField(fieldContent)
	var bq query.Query = bleve.NewDisjunctionQuery(title, content)
	if len(q.Domains) > 0 {
		hosts := make([]query.Query, len(q.Domains))
		for i, d := range q.Domains {
			t := bleve.NewTermQuery(d)
			t.SetField(fieldHosts)
			hosts[i] = t
		}
		bq = bleve.NewConjunctionQuery(bq, bleve.NewDisjunctionQuery(hosts...))
	}
	// Two passes: ranking every match with term locations costs several
	// times as much as ranking alone, so the first pass ranks and the
	// second fetches the locations and stored fields of the best only.
	var top, res *bleve.SearchResult
	err = ix.use(func(idx bleve.Index) error {
		var err error
		top, err = idx.SearchInContext(ctx, bleve.NewSearchRequestOptions(bq, q.Count, 0, false))
		if err != nil || len(top.Hits) == 0 {
			return err
		}
		ids := make([]string, len(top.Hits))
		for i, h := range top.Hits {
			ids[i] = h.ID
		}
		req := bleve.NewSearchRequestOptions(bleve.NewConjunctionQuery(bq, bleve.NewDocIDQuery(ids)), len(ids), 0, false)
		req.Fields = []string{fieldURL, fieldTitle, fieldContent, fieldPublished}
		req.IncludeLocations = true
		res, err = idx.SearchInContext(ctx, req)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return nil, err
		}
		return nil, fmt.Errorf("localindex: searching the index: %w", err)
	}
	if len(top.Hits) == 0 {
		return nil, nil
	}
	byID := make(map[string]*blevesearch.DocumentMatch, len(res.Hits))
	for _, h := range res.Hits {
		byID[h.ID] = h
	}
	out := make([]search.Result, 0, len(top.Hits))
	for _, ranked := range top.Hits {
		hit := byID[ranked.ID]
		if hit == nil {
			continue // replaced or deleted between the passes
		}
		link, _ := hit.Fields[fieldURL].(string)
		if link == "" || !search.AllowedURL(link, q.Domains) {
			continue
		}
		r := search.Result{URL: link}
		r.Title, _ = hit.Fields[fieldTitle].(string)
		text, _ := hit.Fields[fieldContent].(string)
		var offsets []int
		for _, locs := range hit.Locations[fieldContent] {
			for _, l := range locs {
				offsets = append(offsets, int(l.Start))
			}
		}
		r.Content = snippet(text, offsets, search.MaxSnippetRunes)
		if p, _ := hit.Fields[fieldPublished].(string); p != "" {
			r.Published, _ = time.Parse(time.RFC3339Nano, p)
		}
		out = append(out, r)
	}
	return out, nil
}
