// Package search finds web pages and local documents for a model to read:
// the Searcher interface that a web-search tool calls, and two
// implementations of it.
//
// A Query holds the text to search for, how many results are wanted
// (Count, DefaultCount when 0, at most MaxCount), an optional language
// (Locale), user Location and allowed Domains. Validate checks one and
// names the offending field in a *QueryError; every Searcher refuses an
// invalid query the same way. A Result is a URL, a title and plain-text
// Content (a snippet of at most MaxSnippetRunes characters), with the
// date it was published when known.
//
// Allowed domains match a host and its subdomains, label by label:
// "example.com" allows example.com and docs.example.com, never
// badexample.com nor example.com.evil.net. Both implementations filter
// by the same rule.
//
// # SearXNG
//
// NewSearXNG returns a client for a SearXNG instance's JSON API. It is
// bounded in time (SearXNGConfig.Timeout and ctx) and in the size of the
// answer (SearXNGConfig.MaxBytes), follows redirects only within the
// instance's host, returns only http and https results, with HTML removed
// from titles and snippets, and reports a non-2xx status as a
// *StatusError.
//
// # Local index
//
// OpenIndex opens or creates a full-text index (bleve) in a directory;
// AddFolder indexes the text, Markdown and HTML files under a folder, and
// Search ranks them, with a snippet around the matched words. The files'
// URLs are file URLs, or URLs under a FolderOptions.BaseURL that says
// where the same files are served.
//
// The package is pure Go and builds with CGO_ENABLED=0.
package search
