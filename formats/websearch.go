package formats

import (
	"encoding/json"
)

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

// searchInput is the input of a call of the search tool.
type searchInput struct {
	Query string `json:"query"`
}

// SearchArguments is the JSON input of a call of the search tool for
// query: {"query": …}, as the engine's search tool takes it.
func SearchArguments(query string) json.RawMessage {
	b, _ := Marshal(searchInput{query})
	return b
}
