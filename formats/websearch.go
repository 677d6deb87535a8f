package formats

import (
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
		return nil, invalid(param, "%s must be low, medium or high, got %q", param, size)
	}
	return &o, nil
}

// WebSearchLocation is an approximate user location of a search request,
// as every style writes it: type approximate, and each field optional.
type WebSearchLocation struct {
	Type     string `json:"type,omitzero"`
	City     string `json:"city,omitzero"`
	Region   string `json:"region,omitzero"`
	Country  string `json:"country,omitzero"`
	Timezone string `json:"timezone,omitzero"`
}

// location checks l and returns the engine's, or an error naming param.
func (l *WebSearchLocation) location(param string) (*search.Location, error) {
	if l == nil {
		return nil, nil
	}
	if l.Type != "" && l.Type != "approximate" {
		return nil, invalid(param+".type", "%s.type must be approximate, got %q", param, l.Type)
	}
	loc := &search.Location{City: l.City, Region: l.Region, Country: l.Country, Timezone: l.Timezone}
	if err := (search.Query{Text: "x", Location: loc}).Validate(); err != nil {
		return nil, invalid(param, "%s: %v", param, err)
	}
	return loc, nil
}

// contextSizeOf is the search_context_size whose options o has: the
// size with o's number of results, else medium.
func contextSizeOf(o *inference.SearchOptions) string {
	for size, c := range searchContext {
		if c.Results == o.Results {
			return size
		}
	}
	return "medium"
}

// webSearchLocation is the wire form of the engine's location.
func webSearchLocation(l *search.Location) *WebSearchLocation {
	if l == nil {
		return nil
	}
	return &WebSearchLocation{Type: "approximate", City: l.City, Region: l.Region, Country: l.Country, Timezone: l.Timezone}
}
