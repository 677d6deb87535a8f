package formats

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/search"
)

// searchContext is what a search_context_size gives the model of each
// search (the OpenAI styles): low 3 results of up to 500 characters,
// medium (the default) 5 of 1,000, high 8 of 2,000.
var searchContext = map[string]inference.SearchOptions{
	"low":    {Results: 3, ContentChars: 500},
	"medium": {Results: 5, ContentChars: 1000},
	"high":   {Results: 8, ContentChars: 2000},
}

// searchContextSize returns the search options of a search_context_size
// ("" is medium), or an error naming param.
func searchContextSize(param, size string) (*inference.SearchOptions, error) {
	if size == "" {
		size = "medium"
	}
	o, ok := searchContext[size]
	if !ok {
		return nil, Invalid(param, "%s must be low, medium or high, got %q", param, size)
	}
	return &o, nil
}

// contextSizeOf is the search_context_size nearest o's number of results.
func contextSizeOf(o *inference.SearchOptions) string {
	switch {
	case o.Results != 0 && o.Results <= searchContext["low"].Results:
		return "low"
	case o.Results >= searchContext["high"].Results:
		return "high"
	}
	return "medium"
}

// WebSearchLocation is an approximate user location of a search request,
// as every style writes it: type approximate (absent in chat's nested
// form), and each field optional.
type WebSearchLocation struct {
	Type     string `json:"type,omitzero"`
	City     string `json:"city,omitzero"`
	Region   string `json:"region,omitzero"`
	Country  string `json:"country,omitzero"`
	Timezone string `json:"timezone,omitzero"`
}

// location checks l, given at param, and returns the engine's: nil for no
// location or one that says nothing. Its fields are checked with the rest
// of the search options (checkSearch).
func (l *WebSearchLocation) location(param string) (*search.Location, error) {
	if l == nil {
		return nil, nil
	}
	if l.Type != "" && l.Type != "approximate" {
		return nil, Invalid(param+".type", "%s.type must be approximate, got %q", param, l.Type)
	}
	loc := &search.Location{City: l.City, Region: l.Region, Country: l.Country, Timezone: l.Timezone}
	if *loc == (search.Location{}) {
		return nil, nil
	}
	return loc, nil
}

// webSearchLocation is the wire form of the engine's location.
func webSearchLocation(l *search.Location) *WebSearchLocation {
	if l == nil {
		return nil
	}
	return &WebSearchLocation{Type: "approximate", City: l.City, Region: l.Region, Country: l.Country, Timezone: l.Timezone}
}

// checkSearch checks the options that every query of a request will
// carry, once, so that an error names the parameter at fault: p and the
// query's field, renamed to the style's parameter ("location" to
// "user_location", "domains" to the style's allowed domains).
func checkSearch(p string, o *inference.SearchOptions, names *strings.Replacer) error {
	q := search.Query{Text: "x", Count: o.Results, Locale: o.Locale, Location: o.Location, Domains: o.Domains}
	var qe *search.QueryError
	if err := q.Validate(); errors.As(err, &qe) {
		param := p + "." + names.Replace(qe.Field)
		return Invalid(param, "%s %s", param, qe.Message)
	} else if err != nil {
		return Invalid(p, "%s: %v", p, err)
	}
	return nil
}

// searchInput is the input of a call of the search tool.
type searchInput struct {
	Query string `json:"query"`
}

// searchArguments is the JSON input of a call of the search tool for
// query: {"query": …}, as the engine's search tool takes it.
func searchArguments(query string) json.RawMessage {
	b, _ := marshal(searchInput{query})
	return b
}

// searchQueryOf reads the query of a search call's input; ok is false
// when the input is no JSON object.
func searchQueryOf(input []byte) (query string, ok bool) {
	var in searchInput
	s := bytes.TrimSpace(input)
	if len(s) == 0 || s[0] != '{' || json.Unmarshal(s, &in) != nil {
		return "", false
	}
	return in.Query, true
}
