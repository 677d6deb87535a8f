package responses

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
)

// Tool is a tool of the responses style: a function tool (type
// function, with name, description, parameters and strict), or the web
// search tool (type web_search, web_search_preview or one of their dated
// versions, see isSearchTool), which lets the model search through the
// engine's search backend (inference.SearchOptions) with the results and
// characters of SearchContextSize, UserLocation and
// Filters.AllowedDomains.
type Tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitzero"`
	Parameters  json.RawMessage `json:"parameters,omitzero"`
	Strict      *bool           `json:"strict,omitzero"`

	// SearchContextSize is low (3 results of up to 500 characters each),
	// medium (the default: 5 of 1,000) or high (8 of 2,000).
	SearchContextSize string                     `json:"search_context_size,omitzero"`
	UserLocation      *formats.WebSearchLocation `json:"user_location,omitzero"`
	Filters           *SearchFilters             `json:"filters,omitzero"`

	// MCPTool is what a tool of type mcp carries.
	MCPTool
}

// SearchFilters restricts a web search to allowed domains and
// their subdomains.
type SearchFilters struct {
	AllowedDomains []string `json:"allowed_domains"`
}

// MarshalJSON writes the fields of the tool's type: a web search tool's
// user_location and filters are null when not set.
func (t Tool) MarshalJSON() ([]byte, error) {
	if isSearchTool(t.Type) {
		return formats.Marshal(struct {
			Type              string                     `json:"type"`
			SearchContextSize string                     `json:"search_context_size,omitzero"`
			UserLocation      *formats.WebSearchLocation `json:"user_location"`
			Filters           *SearchFilters             `json:"filters"`
		}{t.Type, t.SearchContextSize, t.UserLocation, t.Filters})
	}
	if t.Type == "mcp" {
		return formats.Marshal(struct {
			Type string `json:"type"`
			MCPTool
		}{t.Type, t.MCPTool})
	}
	type plain Tool
	return formats.Marshal(plain(t))
}

// isSearchTool reports whether a tool type (or a tool_choice's) is the
// web search tool's.
func isSearchTool(typ string) bool {
	switch typ {
	case "web_search", "web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11":
		return true
	}
	return false
}

// searchOptions converts the web search tool at path p.
func (t Tool) searchOptions(p string) (*inference.SearchOptions, error) {
	opts, err := wire.SearchContextSize(p+".search_context_size", t.SearchContextSize)
	if err != nil {
		return nil, err
	}
	if opts.Location, err = wire.Location(t.UserLocation, p+".user_location"); err != nil {
		return nil, err
	}
	if t.Filters != nil && len(t.Filters.AllowedDomains) > 0 {
		opts.Domains = slices.Clone(t.Filters.AllowedDomains)
	}
	return opts, wire.CheckSearch(p, opts, strings.NewReplacer("location", "user_location", "domains", "filters.allowed_domains"))
}

// searchTool returns the web search tool of opts, as a response echoes it
// and NewRequest writes it: type web_search, the context size
// whose number of results is nearest opts', the location and the allowed
// domains.
func searchTool(opts *inference.SearchOptions) Tool {
	t := Tool{Type: "web_search", SearchContextSize: wire.ContextSizeOf(opts), UserLocation: wire.LocationOf(opts.Location)}
	if len(opts.Domains) > 0 {
		t.Filters = &SearchFilters{AllowedDomains: slices.Clone(opts.Domains)}
	}
	return t
}

// ToolChoice is the string none, auto or required, or the object
// {type:"function", name} when Mode is "function", or {type} when Mode is
// a web search tool's type.
type ToolChoice struct {
	Mode string
	Name string
	// ServerLabel is the server of a tool_choice of type mcp, whose
	// Name is one of its tools (or empty: any of them).
	ServerLabel string
}

// MarshalJSON writes the string or the object.
func (c ToolChoice) MarshalJSON() ([]byte, error) {
	switch {
	case c.Mode == "function":
		return formats.Marshal(map[string]string{"type": "function", "name": c.Name})
	case c.Mode == "mcp":
		return formats.Marshal(map[string]string{"type": "mcp", "server_label": c.ServerLabel, "name": c.Name})
	case isSearchTool(c.Mode):
		return formats.Marshal(map[string]string{"type": c.Mode})
	}
	return formats.Marshal(c.Mode)
}

// UnmarshalJSON reads the string or the object.
func (c *ToolChoice) UnmarshalJSON(data []byte) error {
	switch formats.JSONKind(data) {
	case "string":
		return json.Unmarshal(data, &c.Mode)
	case "object":
		var o struct {
			Type        string `json:"type"`
			Name        string `json:"name"`
			ServerLabel string `json:"server_label"`
		}
		// Decode, not json.Unmarshal: a type error's offset in data
		// would name a parameter elsewhere in the body.
		if err := formats.Decode(data, &o); err != nil {
			return wire.Prefixed("tool_choice", err)
		}
		*c = ToolChoice{Mode: o.Type, Name: o.Name, ServerLabel: o.ServerLabel}
		return nil
	}
	return &json.UnmarshalTypeError{Value: formats.JSONKind(data), Type: reflect.TypeFor[string]()}
}

// sentSearch is what a responses request keeps of its web search tool as
// it was sent, in formats.Request.Sent, for the response to echo (see
// Response.Tools): the tool, type and options, also where tool_choice
// none or max_tool_calls 0 offers no search, and the tool_choice that
// forced the search (its type, or required).
type sentSearch struct {
	tool   *Tool
	choice string
}

// sentOf returns what r keeps of its web search tool as sent: none for a
// request of another style or without one.
func sentOf(r formats.Request) sentSearch {
	s, _ := r.Sent.(sentSearch)
	return s
}
