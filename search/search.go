package search

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds on a Query, checked by Validate.
const (
	// DefaultCount is the number of results a Query with Count 0 asks for.
	DefaultCount = 5
	// MaxCount is the most results a Query may ask for.
	MaxCount = 20
	// MaxTextBytes is the longest query text, in bytes.
	MaxTextBytes = 1000
	// MaxDomains is the most allowed domains a Query may name.
	MaxDomains = 50
	// maxLocationBytes bounds each field of a Location.
	maxLocationBytes = 100
)

// Searcher runs a web or document search. SearXNG and localindex.Index
// implement it; an application may plug in its own. Implementations must
// be safe for concurrent use, honour ctx, search with q.Normalize's copy
// of q (refusing what it refuses with its *QueryError) and return at most
// its Count of results, best first, only from URLs that AllowedURL allows
// for its Domains.
type Searcher interface {
	Search(ctx context.Context, q Query) ([]Result, error)
}

// Query is one search. The zero value is not valid: Text is required.
// Validate says what is wrong with one; every backend calls it.
type Query struct {
	// Text is what to search for, at most MaxTextBytes bytes of UTF-8.
	Text string
	// Count is how many results are wanted, 1 to MaxCount; 0 means
	// DefaultCount. A backend may return fewer.
	Count int
	// Locale is the preferred language of the results, a BCP 47 tag such
	// as "en" or "en-US"; empty means the backend's default.
	Locale string
	// Location is where the user is, when known; nil means unknown.
	// Backends that cannot use it ignore it (SearXNG and localindex.Index
	// do).
	Location *Location
	// Domains, when not empty, restricts results to these hosts and their
	// subdomains: "example.com" allows example.com and docs.example.com,
	// never badexample.com nor example.com.evil.net. Each is a host name
	// (no scheme, port or path), matched without regard to case; at most
	// MaxDomains of them.
	Domains []string
}

// Location is the approximate location of the user. Every field is
// optional; the zero value says nothing.
type Location struct {
	City   string
	Region string
	// Country is an ISO 3166-1 alpha-2 code such as "US" or "de".
	Country string
	// Timezone is an IANA time zone name such as "America/New_York".
	Timezone string
}

// Result is one search hit, a plain value that Searchers return and
// callers own.
type Result struct {
	// URL is the address of the page or document, always http or https
	// for SearXNG; a file URL or one under the caller's base URL for
	// localindex.Index.
	URL string
	// Title is the page's title, as plain text.
	Title string
	// Content is plain text from the page: a snippet around the matched
	// terms, at most MaxSnippetRunes characters.
	Content string
	// Published is when the page was published or last modified; zero
	// when unknown.
	Published time.Time
}

// QueryError says which field of a Query is wrong and why. Validate and
// every backend's Search return it for a query they refuse, so that a
// server can answer 400 naming the field. It is a plain value.
type QueryError struct {
	// Field is the offending field, such as "text", "count", "locale",
	// "location.country" or "domains[2]".
	Field string
	// Message says what is wrong with it.
	Message string
}

// Error returns the message, prefixed with the package name and the field.
func (e *QueryError) Error() string {
	return "search: query." + e.Field + ": " + e.Message
}

func queryErr(field, format string, args ...any) *QueryError {
	return &QueryError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Validate reports the first thing wrong with q as a *QueryError, or nil.
func (q Query) Validate() error {
	_, err := q.Normalize()
	return err
}

// Normalize validates q as Validate does and returns the copy of it that a
// backend searches with: Count is DefaultCount when it was 0, and Domains
// are in canonical form (lower case, without a trailing dot) in a new
// slice, so q's own are left as they were. On error it returns the zero
// Query and a *QueryError.
func (q Query) Normalize() (Query, error) {
	switch {
	case strings.TrimSpace(q.Text) == "":
		return Query{}, queryErr("text", "must not be empty")
	case len(q.Text) > MaxTextBytes:
		return Query{}, queryErr("text", "is %d bytes, more than the %d allowed", len(q.Text), MaxTextBytes)
	case !utf8.ValidString(q.Text):
		return Query{}, queryErr("text", "is not valid UTF-8")
	case strings.ContainsFunc(q.Text, func(r rune) bool { return isControl(r) && r != '\t' && r != '\n' && r != '\r' }):
		return Query{}, queryErr("text", "holds a control character")
	}
	switch {
	case q.Count == 0:
		q.Count = DefaultCount
	case q.Count < 0 || q.Count > MaxCount:
		return Query{}, queryErr("count", "is %d; it must be 1 to %d, or 0 for %d", q.Count, MaxCount, DefaultCount)
	}
	if q.Locale != "" && !validLocale(q.Locale) {
		return Query{}, queryErr("locale", "%q is not a BCP 47 language tag such as \"en\" or \"en-US\"", q.Locale)
	}
	if l := q.Location; l != nil {
		for _, f := range []struct{ name, v string }{
			{"city", l.City}, {"region", l.Region}, {"country", l.Country}, {"timezone", l.Timezone},
		} {
			if len(f.v) > maxLocationBytes || !utf8.ValidString(f.v) || strings.ContainsFunc(f.v, isControl) {
				return Query{}, queryErr("location."+f.name, "must be UTF-8 text of at most %d bytes without control characters", maxLocationBytes)
			}
		}
		if l.Country != "" && !(len(l.Country) == 2 && isASCIILetter(l.Country[0]) && isASCIILetter(l.Country[1])) {
			return Query{}, queryErr("location.country", "%q is not an ISO 3166-1 alpha-2 code such as \"US\"", l.Country)
		}
	}
	if len(q.Domains) > MaxDomains {
		return Query{}, queryErr("domains", "names %d domains, more than the %d allowed", len(q.Domains), MaxDomains)
	}
	if len(q.Domains) > 0 {
		domains := make([]string, len(q.Domains))
		for i, d := range q.Domains {
			n, err := normalizeDomain(d)
			if err != nil {
				return Query{}, queryErr(fmt.Sprintf("domains[%d]", i), "%q %s", d, err.Error())
			}
			domains[i] = n
		}
		q.Domains = domains
	}
	return q, nil
}

// validLocale checks the shape of a BCP 47 tag: a language of 2 to 8
// letters, then subtags of 1 to 8 letters or digits. It does not check
// the registry; a backend passes the tag on as it is.
func validLocale(s string) bool {
	if len(s) > 35 {
		return false
	}
	for i, sub := range strings.Split(s, "-") {
		if len(sub) == 0 || len(sub) > 8 || (i == 0 && len(sub) < 2) {
			return false
		}
		for j := 0; j < len(sub); j++ {
			c := sub[j]
			if !isASCIILetter(c) && (i == 0 || c < '0' || c > '9') {
				return false
			}
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }
