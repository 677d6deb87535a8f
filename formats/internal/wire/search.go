package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/search"
)

// SearchContext is what a search_context_size gives the model of each
// search (the OpenAI styles): low 3 results of up to 500 characters,
// medium (the default) 5 of 1,000, high 8 of 2,000.
var SearchContext = map[string]inference.SearchOptions{
	"low":    {Results: 3, ContentChars: 500},
	"medium": {Results: 5, ContentChars: 1000},
	"high":   {Results: 8, ContentChars: 2000},
}

// SearchContextSize returns the search options of a search_context_size
// ("" is medium), or an error naming param.
func SearchContextSize(param, size string) (*inference.SearchOptions, error) {
	if size == "" {
		size = "medium"
	}
	o, ok := SearchContext[size]
	if !ok {
		return nil, formats.Invalid(param, "%s must be low, medium or high, got %q", param, size)
	}
	return &o, nil
}

// ContextSizeOf is the search_context_size nearest o's number of results.
func ContextSizeOf(o *inference.SearchOptions) string {
	switch {
	case o.Results != 0 && o.Results <= SearchContext["low"].Results:
		return "low"
	case o.Results >= SearchContext["high"].Results:
		return "high"
	}
	return "medium"
}

// Location checks l, given at param, and returns the engine's: nil for no
// location or one that says nothing. Its fields are checked with the rest
// of the search options (CheckSearch).
func Location(l *formats.WebSearchLocation, param string) (*search.Location, error) {
	if l == nil {
		return nil, nil
	}
	if l.Type != "" && l.Type != "approximate" {
		return nil, formats.Invalid(param+".type", "%s.type must be approximate, got %q", param, l.Type)
	}
	loc := &search.Location{City: l.City, Region: l.Region, Country: l.Country, Timezone: l.Timezone}
	if *loc == (search.Location{}) {
		return nil, nil
	}
	return loc, nil
}

// LocationOf is the wire form of the engine's location.
func LocationOf(l *search.Location) *formats.WebSearchLocation {
	if l == nil {
		return nil
	}
	return &formats.WebSearchLocation{Type: "approximate", City: l.City, Region: l.Region, Country: l.Country, Timezone: l.Timezone}
}

// CheckSearch checks the options that every query of a request will
// carry, once, so that an error names the parameter at fault: p and the
// query's field, renamed to the style's parameter ("location" to
// "user_location", "domains" to the style's allowed domains).
func CheckSearch(p string, o *inference.SearchOptions, names *strings.Replacer) error {
	q := search.Query{Text: "x", Count: o.Results, Locale: o.Locale, Location: o.Location, Domains: o.Domains}
	var qe *search.QueryError
	if err := q.Validate(); errors.As(err, &qe) {
		param := p + "." + names.Replace(qe.Field)
		return formats.Invalid(param, "%s %s", param, qe.Message)
	} else if err != nil {
		return formats.Invalid(p, "%s: %v", p, err)
	}
	return nil
}

// SearchQuery reads the query of a search call's input; ok is false
// when the input is no JSON object.
func SearchQuery(input []byte) (query string, ok bool) {
	var in struct {
		Query string `json:"query"`
	}
	s := bytes.TrimSpace(input)
	if len(s) == 0 || s[0] != '{' || json.Unmarshal(s, &in) != nil {
		return "", false
	}
	return in.Query, true
}

// CharIndex converts a byte offset in text, as inference.Citation and
// inference.SearchCall.At give them, into the character (code point)
// index that the OpenAI styles' start_index and end_index count.
func CharIndex(text string, off int) int {
	off = min(max(off, 0), len(text))
	return utf8.RuneCountInString(text[:off])
}

// CitedSpan returns the span of a citation in a part whose text starts
// at byte off of the answer, in characters, as a url_citation's
// start_index and end_index count them. A citation of no text (a marker
// with nothing before it) has none: ok is false.
func CitedSpan(c inference.Citation, text string, off int) (start, end int, ok bool) {
	if c.Start >= c.End {
		return 0, 0, false
	}
	return CharIndex(text, c.Start-off), CharIndex(text, c.End-off), true
}
