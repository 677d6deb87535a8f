// Package search finds web pages and documents for a model to read: the
// Searcher interface that a web-search tool calls, the Query and Result
// it takes and returns, and a SearXNG client that implements it.
//
// A Query holds the text to search for, how many results are wanted
// (Count, DefaultCount when 0, at most MaxCount), an optional language
// (Locale), user Location and allowed Domains. Validate checks one and
// names the offending field in a *QueryError; Normalize also returns the
// copy a backend searches with, so that every Searcher refuses an invalid
// query the same way. A Result is a URL, a title and plain-text Content
// (a snippet of at most MaxSnippetRunes characters), with the date it was
// published when known.
//
// Allowed domains match a host and its subdomains, label by label:
// "example.com" allows example.com and docs.example.com, never
// badexample.com nor example.com.evil.net. AllowedURL applies the rule,
// and every implementation filters by it. HTMLText and Truncate turn
// HTML into plain text and bound it, for implementations that build a
// Result from a page.
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
// # Other implementations
//
// Package [github.com/inferkit/inferkit/search/localindex] is a
// Searcher over a full-text index of local folders, for a server without
// internet access. It lives apart so that a program that only needs the
// interface, or SearXNG, does not link the index engine.
//
// The package is pure Go, depends only on the standard library and
// golang.org/x/net/html, and builds with CGO_ENABLED=0.
package search
