package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
)

// Messages defaults of the spec.
const (
	defaultMaxTokens   = 512
	defaultBudget      = 8192
	defaultTemperature = 0.1
	defaultTopP        = 1.0
)

// Request is the body of POST /v1/messages. Beside the spec's
// fields it accepts what the Anthropic SDKs send: system as a string,
// content as a string, stop_sequences, top_k, tools (the web search tool
// among them), tool_choice, metadata.user_id, cache_control breakpoints
// and output_config; and the sampling parameters that /v1/models lists
// (seed and the penalties). Each field is applied or refused with a 400
// that names it (see the table of package formats); unknown fields are
// ignored, as the Anthropic API's forward-compatible clients expect.
type Request struct {
	Model    string         `json:"model"`
	Messages []InputMessage `json:"messages"`
	// System is a string or an array of text blocks.
	System    System    `json:"system,omitzero"`
	MaxTokens *int      `json:"max_tokens,omitzero"`
	Stream    bool      `json:"stream,omitzero"`
	Thinking  *Thinking `json:"thinking,omitzero"`

	Temperature   *float64 `json:"temperature,omitzero"`
	TopP          *float64 `json:"top_p,omitzero"`
	TopK          *int     `json:"top_k,omitzero"`
	StopSequences []string `json:"stop_sequences,omitzero"`
	// Seed, FrequencyPenalty, PresencePenalty and RepetitionPenalty are
	// the sampling parameters that /v1/models lists beyond Anthropic's
	// own, applied by the sampler as in the other styles.
	Seed              *int64   `json:"seed,omitzero"`
	FrequencyPenalty  *float64 `json:"frequency_penalty,omitzero"`
	PresencePenalty   *float64 `json:"presence_penalty,omitzero"`
	RepetitionPenalty *float64 `json:"repetition_penalty,omitzero"`

	Tools      []Tool      `json:"tools,omitzero"`
	ToolChoice *ToolChoice `json:"tool_choice,omitzero"`
	Metadata   *Metadata   `json:"metadata,omitzero"`
	// OutputConfig is the Anthropic structured-output and effort option.
	OutputConfig *OutputConfig `json:"output_config,omitzero"`

	// MCPServers are the MCP connector's servers, whose tools the model
	// may call: see MCPServer.
	MCPServers []MCPServer `json:"mcp_servers,omitzero"`
}

// MCPServer is a server of mcp_servers: type url, its url and name, a
// bearer authorization_token, and tool_configuration (enabled, false
// to leave the server out; allowed_tools, the tools the model may
// call). Calls run without approval, as Anthropic's connector runs them.
type MCPServer struct {
	Type               string                `json:"type"`
	URL                string                `json:"url"`
	Name               string                `json:"name"`
	AuthorizationToken string                `json:"authorization_token,omitzero"`
	ToolConfiguration  *MCPToolConfiguration `json:"tool_configuration,omitzero"`
}

// MCPToolConfiguration is an MCP server's tool_configuration.
type MCPToolConfiguration struct {
	Enabled      *bool    `json:"enabled,omitzero"`
	AllowedTools []string `json:"allowed_tools,omitzero"`
}

// mcpOptions converts mcp_servers.
func (r *Request) mcpOptions() (*inference.MCPOptions, error) {
	if len(r.MCPServers) == 0 {
		return nil, nil
	}
	opts := &inference.MCPOptions{}
	for i, s := range r.MCPServers {
		p := fmt.Sprintf("mcp_servers[%d]", i)
		switch {
		case s.Type != "url":
			return nil, formats.Invalid(p+".type", "%s.type must be url, got %q", p, s.Type)
		case s.URL == "":
			return nil, formats.Missing(p + ".url")
		case s.Name == "":
			return nil, formats.Missing(p + ".name")
		}
		srv := inference.MCPServer{Label: s.Name, URL: s.URL}
		if s.AuthorizationToken != "" {
			srv.Headers = map[string]string{"Authorization": "Bearer " + s.AuthorizationToken}
		}
		if c := s.ToolConfiguration; c != nil {
			if c.Enabled != nil && !*c.Enabled {
				continue
			}
			if c.AllowedTools != nil {
				srv.AllowedTools = append([]string{}, c.AllowedTools...)
			}
		}
		opts.Servers = append(opts.Servers, srv)
	}
	if len(opts.Servers) == 0 {
		return nil, nil
	}
	return opts, nil
}

// names names the engine's fields as this style does (see
// formats.ParamNames).
var names = formats.ParamNames{
	"Tools[].Parameters": "tools[].input_schema",
	"Messages":           "messages",
	"Prompt":             "prompt",
	"MaxTokens":          "max_tokens",
	"Format":             "output_config.format",
	"Format.Schema":      "output_config.format.schema",
	"Format.Grammar":     "output_config.format",
	"Tools":              "tools",
	"ToolChoice":         "tool_choice",
	// The MCP servers come from mcp_servers.
	"MCP":                   "mcp_servers",
	"MCP.Servers[].URL":     "mcp_servers[].url",
	"MCP.Servers[].Label":   "mcp_servers[].name",
	"MCP.Servers[].Headers": "mcp_servers[].authorization_token",
	"ThinkingBudget":        "thinking.budget_tokens",
	"Effort":                "output_config.effort",
	"Temperature":           "temperature",
	"TopP":                  "top_p",
	"TopK":                  "top_k",
	"MinP":                  "min_p",
	"Seed":                  "seed",
	"Stop":                  "stop_sequences",
	"RepetitionPenalty":     "repetition_penalty",
	"FrequencyPenalty":      "frequency_penalty",
	"PresencePenalty":       "presence_penalty",
	"IgnoreEOS":             "ignore_eos",
	"Logprobs":              "logprobs",
	"TopLogprobs":           "top_logprobs",
	"PromptLogprobs":        "echo",
	"Choices":               "n",
	// The search options come from the web_search tool.
	"Search":              "tools",
	"Search.MaxSearches":  "tools.max_uses",
	"Search.Results":      "tools",
	"Search.ContentChars": "tools",
}

// Error returns err as this style reports it (formats.ErrorOf), an
// engine's error about one field naming this style's parameter, such as
// tools[2].input_schema for Tools[2].Parameters. Write it with formats.WriteError in formats.StyleMessages.
func Error(err error) *formats.Error {
	return names.Error(err)
}

// OutputConfig sets the thinking effort (low, medium, high; the
// SDKs' xhigh and max are high) and a JSON Schema the output must follow.
type OutputConfig struct {
	Effort string        `json:"effort,omitzero"`
	Format *OutputFormat `json:"format,omitzero"`
}

// OutputFormat is {type:"json_schema", schema}.
type OutputFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema"`
}

// Thinking turns thinking on (type enabled, the default, or
// adaptive) or off (type disabled) and bounds it.
type Thinking struct {
	Type         string `json:"type"`
	BudgetTokens *int   `json:"budget_tokens,omitzero"`
}

// Metadata is the metadata of a messages request.
type Metadata struct {
	UserID string `json:"user_id,omitzero"`
}

// Tool is a tool definition of the messages style: a custom tool
// (type custom or absent), or the web search tool (type
// web_search_20250305 or a newer dated web_search type, name web_search),
// which lets the model search through the engine's search backend
// (inference.SearchOptions) with the options below.
type Tool struct {
	Type        string          `json:"type,omitzero"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitzero"`
	InputSchema json.RawMessage `json:"input_schema,omitzero"`

	// MaxUses bounds the searches of the request, 1 to
	// inference.MaxSearchesPerRequest; absent means the engine's 3.
	MaxUses *int `json:"max_uses,omitzero"`
	// AllowedDomains restricts the results to these hosts and their
	// subdomains.
	AllowedDomains []string `json:"allowed_domains,omitzero"`
	// BlockedDomains is refused: the search backends filter by allowed
	// domains only.
	BlockedDomains []string                   `json:"blocked_domains,omitzero"`
	UserLocation   *formats.WebSearchLocation `json:"user_location,omitzero"`
	// CacheControl marks the tools up to this one as a prefix to cache:
	// see CacheControl.
	CacheControl *CacheControl `json:"cache_control,omitzero"`
}

// webSearchTypes are the web search tool's types, as the Anthropic SDKs
// name them.
var webSearchTypes = []string{"web_search_20250305", "web_search_20260209", "web_search_20260318"}

// isWebSearch reports whether t is the web search tool.
func (t Tool) isWebSearch() bool { return slices.Contains(webSearchTypes, t.Type) }

// searchOptions checks the web search tool at path p and returns its
// options: 5 results of up to 1,000 characters each.
func (t Tool) searchOptions(p string) (*inference.SearchOptions, error) {
	if t.Name != inference.SearchToolName {
		return nil, formats.Invalid(p+".name", "%s.name must be %q for the web search tool, got %q", p, inference.SearchToolName, t.Name)
	}
	if len(t.BlockedDomains) > 0 {
		return nil, formats.Invalid(p+".blocked_domains", "%s.blocked_domains is not supported: the search backends filter by allowed domains only (allowed_domains)", p)
	}
	opts := wire.SearchContext["medium"]
	opts.Domains = slices.Clone(t.AllowedDomains)
	if t.MaxUses != nil {
		if n := *t.MaxUses; n < 1 || n > inference.MaxSearchesPerRequest {
			return nil, formats.Invalid(p+".max_uses", "%s.max_uses must be 1 to %d, got %d", p, inference.MaxSearchesPerRequest, n)
		}
		opts.MaxSearches = *t.MaxUses
	}
	if l := t.UserLocation; l != nil && l.Type != "approximate" {
		return nil, formats.Invalid(p+".user_location.type", "%s.user_location.type must be approximate, got %q", p, l.Type)
	}
	var err error
	if opts.Location, err = wire.Location(t.UserLocation, p+".user_location"); err != nil {
		return nil, err
	}
	return &opts, wire.CheckSearch(p, &opts, strings.NewReplacer("domains", "allowed_domains", "location", "user_location"))
}

// ToolChoice is {type: auto|any|tool|none, name}.
type ToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitzero"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitzero"`
}

// System is the system prompt: a string, or text blocks.
type System struct {
	Blocks []Block
}

// MarshalJSON writes the blocks.
func (s System) MarshalJSON() ([]byte, error) { return formats.Marshal(s.Blocks) }

// IsZero reports whether there is no system prompt.
func (s System) IsZero() bool { return s.Blocks == nil }

// UnmarshalJSON accepts a string, an array of text blocks or null.
func (s *System) UnmarshalJSON(data []byte) error {
	switch formats.JSONKind(data) {
	case "null":
		s.Blocks = nil
		return nil
	case "string":
		var t string
		if err := json.Unmarshal(data, &t); err != nil {
			return err
		}
		s.Blocks = []Block{{Type: "text", Text: t}}
		return nil
	case "array":
		if err := formats.Decode(data, &s.Blocks); err != nil {
			return wire.Prefixed("system", err)
		}
		return nil
	}
	return &json.UnmarshalTypeError{Value: formats.JSONKind(data), Type: reflect.TypeFor[[]Block]()}
}

// Parse decodes, validates and converts a messages request
// body, with the spec's defaults filled in.
func Parse(body []byte) (formats.Request, error) {
	return wire.Parse[Request](body)
}

// Canonical validates r and returns the hub's formats.Request with the
// messages defaults: 512 max tokens, thinking enabled with 8192 budget
// tokens (effort high, its text returned), temperature 0.1, top_p 1.
// The default budget is fitted under max_tokens: at most three quarters
// of it (formats.Reasoning.Budget), 384 tokens under the default 512. A
// budget_tokens given is kept whole, and refused when it is not less
// than max_tokens, as the Anthropic API does. The
// web search tool becomes Search (see Tool); a tool_choice that
// names it, or any with no other tool, makes the model search first
// (Search.Force).
func (r *Request) Canonical() (formats.Request, error) {
	out := formats.Request{Request: inference.Request{Model: r.Model}}
	if r.Model == "" {
		return formats.Request{}, formats.Missing("model")
	}
	if r.Messages == nil {
		return formats.Request{}, formats.Missing("messages")
	}
	if len(r.Messages) == 0 {
		return formats.Request{}, formats.Invalid("messages", "messages must hold at least one message")
	}
	var system []string
	for i, b := range r.System.Blocks {
		if b.Type != "text" {
			return formats.Request{}, formats.Invalid(fmt.Sprintf("system[%d].type", i), "system[%d].type must be text, got %q", i, b.Type)
		}
		system = append(system, b.Text)
	}
	out.Instructions = wire.JoinLines(system)
	for i, m := range r.Messages {
		msgs, err := m.canonical(fmt.Sprintf("messages[%d]", i))
		if err != nil {
			return formats.Request{}, err
		}
		out.Messages = append(out.Messages, msgs...)
	}
	formats.NameToolResults(out.Messages)

	out.MaxTokens, out.ClampMaxTokens = defaultMaxTokens, true
	if r.MaxTokens != nil {
		if err := wire.CheckMin("max_tokens", r.MaxTokens, 1); err != nil {
			return formats.Request{}, err
		}
		out.MaxTokens, out.ClampMaxTokens = *r.MaxTokens, false
	}
	out.Reasoning = formats.Reasoning{Effort: "high", BudgetTokens: defaultBudget} // thinking blocks carry the thinking itself: no summary
	if t := r.Thinking; t != nil {
		switch t.Type {
		case "enabled", "adaptive": // adaptive: the model's own budget, the default here
		case "disabled":
			out.Reasoning = formats.Reasoning{Effort: "none"}
		default:
			return formats.Request{}, formats.Invalid("thinking.type", "thinking.type must be enabled, adaptive or disabled, got %q", t.Type)
		}
		if err := wire.CheckMin("thinking.budget_tokens", t.BudgetTokens, 1); err != nil {
			return formats.Request{}, err
		}
		if t.BudgetTokens != nil && t.Type != "disabled" {
			// Anthropic's rule: the thinking leaves the answer room.
			if *t.BudgetTokens >= out.MaxTokens {
				limit := fmt.Sprint(out.MaxTokens)
				if r.MaxTokens == nil {
					limit += ", the default"
				}
				return formats.Request{}, formats.Invalid("thinking.budget_tokens", "thinking.budget_tokens must be less than max_tokens (%s), got %d", limit, *t.BudgetTokens)
			}
			out.Reasoning.BudgetTokens, out.Reasoning.BudgetAsked = *t.BudgetTokens, true
		}
		out.Reasoning.Asked = t.Type == "enabled"
	}

	out.Format = formats.Format{Type: "text"}
	if oc := r.OutputConfig; oc != nil {
		if oc.Effort != "" && out.Reasoning.Thinking() {
			effort := oc.Effort
			if effort == "xhigh" || effort == "max" { // the Anthropic SDKs' levels above high
				effort = "high"
			}
			e, err := wire.NormEffort("output_config.effort", effort)
			if err != nil || e == "none" {
				return formats.Request{}, formats.Invalid("output_config.effort", "output_config.effort must be low, medium, high, xhigh or max, got %q", oc.Effort)
			}
			out.Reasoning.Effort, out.Reasoning.Asked, out.Reasoning.EffortAsked = e, true, true
		}
		if f := oc.Format; f != nil {
			if f.Type != "json_schema" {
				return formats.Request{}, formats.Invalid("output_config.format.type", "output_config.format.type must be json_schema, got %q", f.Type)
			}
			if len(f.Schema) == 0 {
				return formats.Request{}, formats.Missing("output_config.format.schema")
			}
			if err := wire.CheckSchema("output_config.format.schema", f.Schema); err != nil {
				return formats.Request{}, err
			}
			out.Format = formats.Format{Type: "json_schema", Schema: f.Schema, Strict: true}
		}
	}

	var err error
	searches := slices.ContainsFunc(r.Tools, Tool.isWebSearch)
	for i, t := range r.Tools {
		p := fmt.Sprintf("tools[%d]", i)
		if t.isWebSearch() {
			if out.Search != nil {
				return formats.Request{}, formats.Invalid(p+".type", "%s.type: a request has at most one web search tool", p)
			}
			if out.Search, err = t.searchOptions(p); err != nil {
				return formats.Request{}, err
			}
			continue
		}
		if t.Type != "" && t.Type != "custom" {
			return formats.Request{}, formats.Invalid(p+".type", "%s.type %q is not supported; only custom tools and %s", p, t.Type, strings.Join(webSearchTypes, ", "))
		}
		if err := wire.CheckToolName(p+".name", t.Name); err != nil {
			return formats.Request{}, err
		}
		if err := wire.CheckSchema(p+".input_schema", t.InputSchema); err != nil {
			return formats.Request{}, err
		}
		if t.Name == inference.SearchToolName && searches {
			return formats.Request{}, formats.Invalid(p+".name", "%s.name %q is the web search tool's name", p, t.Name)
		}
		out.Tools = append(out.Tools, inference.Tool{Name: t.Name, Description: t.Description, Parameters: bytes.Clone(t.InputSchema)})
	}
	if out.MCP, err = r.mcpOptions(); err != nil {
		return formats.Request{}, err
	}
	if out.MCP != nil && out.Search != nil {
		return formats.Request{}, formats.Invalid("mcp_servers", "mcp_servers with the web search tool is not supported on this style; the responses style runs both")
	}
	out.ToolChoice = formats.ToolChoice{Mode: "auto"}
	if c := r.ToolChoice; c != nil {
		mode := map[string]string{"auto": "auto", "any": "required", "tool": "function", "none": "none"}[c.Type]
		switch {
		case mode == "":
			return formats.Request{}, formats.Invalid("tool_choice.type", "tool_choice.type must be auto, any, tool or none, got %q", c.Type)
		case out.MCP != nil && (mode == "function" && !slices.ContainsFunc(out.Tools, func(t inference.Tool) bool { return t.Name == c.Name }) || mode == "required"):
			// A tool of the MCP servers, which are listed when the
			// request runs: the engine checks the name then.
			if mode == "function" {
				if err := wire.CheckToolName("tool_choice.name", c.Name); err != nil {
					return formats.Request{}, err
				}
			}
			out.ToolChoice = formats.ToolChoice{Mode: mode, Name: c.Name}
		case out.Search != nil && (mode == "function" && c.Name == inference.SearchToolName || mode == "required" && len(out.Tools) == 0):
			// The search is the tool the model must call: it searches
			// first, then answers as it likes.
			out.Search.Force = true
		default:
			if out.ToolChoice, err = wire.CheckToolChoice("tool_choice", formats.ToolChoice{Mode: mode, Name: c.Name}, out.Tools); err != nil {
				return formats.Request{}, err
			}
		}
		out.OneToolCall = c.DisableParallelToolUse
	}
	if err := (wire.Sampling{
		Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK, Seed: r.Seed,
		Frequency: r.FrequencyPenalty, Presence: r.PresencePenalty, Repetition: r.RepetitionPenalty,
		Stop: r.StopSequences, StopParam: "stop_sequences",
	}).Set(&out, defaultTemperature, defaultTopP); err != nil {
		return formats.Request{}, err
	}
	out.Stream = r.Stream
	if r.Metadata != nil {
		out.User = r.Metadata.UserID
	}
	if out.Cache, err = r.cachePoint(out); err != nil {
		return formats.Request{}, err
	}
	return out, nil
}

// NewRequest returns the messages request of r. Instructions and
// system messages become the system blocks; tool messages become
// tool_result blocks of a user message; Search becomes the web search
// tool; every value is written, defaults included.
func NewRequest(r formats.Request) Request {
	out := Request{
		Model:         r.Model,
		Stream:        r.Stream,
		MaxTokens:     wire.ExplicitMaxTokens(r),
		Temperature:   r.Temperature,
		TopP:          r.TopP,
		TopK:          r.TopK,
		StopSequences: slices.Clone(r.Stop),
		Seed:          r.Seed,
	}
	out.FrequencyPenalty, out.PresencePenalty, out.RepetitionPenalty = wire.Penalties(r.Request)
	if r.User != "" {
		out.Metadata = &Metadata{UserID: r.User}
	}
	switch {
	case !r.Reasoning.Thinking():
		out.Thinking = &Thinking{Type: "disabled"}
	case r.Reasoning.BudgetAsked:
		out.Thinking = &Thinking{Type: "enabled", BudgetTokens: ptr(r.Reasoning.BudgetTokens)}
	case r.Reasoning.Effort != "":
		out.Thinking = &Thinking{Type: "enabled"}
	}
	switch r.Format.Type {
	case "json":
		out.OutputConfig = &OutputConfig{Format: &OutputFormat{Type: "json_schema", Schema: json.RawMessage(`{"type":"object"}`)}}
	case "json_schema":
		out.OutputConfig = &OutputConfig{Format: &OutputFormat{Type: "json_schema", Schema: r.Format.Schema}}
	}
	if e := r.Reasoning.Effort; e != "" && e != "none" && e != "high" {
		if out.OutputConfig == nil {
			out.OutputConfig = &OutputConfig{}
		}
		out.OutputConfig.Effort = e
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(t.Parameters)})
	}
	if mode := map[string]string{"auto": "auto", "required": "any", "function": "tool", "none": "none"}[r.ToolChoice.Mode]; mode != "" {
		out.ToolChoice = &ToolChoice{Type: mode, Name: r.ToolChoice.Name, DisableParallelToolUse: r.OneToolCall}
	}
	if o := r.Search; o != nil {
		t := Tool{Type: webSearchTypes[0], Name: inference.SearchToolName, AllowedDomains: slices.Clone(o.Domains)}
		if o.MaxSearches > 0 {
			t.MaxUses = ptr(o.MaxSearches)
		}
		t.UserLocation = wire.LocationOf(o.Location)
		out.Tools = append(out.Tools, t)
		if o.Force {
			out.ToolChoice = &ToolChoice{Type: "tool", Name: inference.SearchToolName, DisableParallelToolUse: r.OneToolCall}
		}
	}
	if r.Instructions != "" {
		out.System.Blocks = append(out.System.Blocks, Block{Type: "text", Text: r.Instructions})
	}
	for _, m := range r.Messages {
		switch m.Role {
		case inference.RoleSystem:
			out.System.Blocks = append(out.System.Blocks, Block{Type: "text", Text: wire.JoinText(m.Content)})
		case inference.RoleTool:
			block := Block{Type: "tool_result", ToolUseID: m.ToolCallID, Content: &Content{Text: wire.JoinText(m.Content), set: true}}
			if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == "user" && isToolResults(out.Messages[n-1].Content.Blocks) {
				out.Messages[n-1].Content.Blocks = append(out.Messages[n-1].Content.Blocks, block)
				continue
			}
			out.Messages = append(out.Messages, InputMessage{Role: "user", Content: Content{Blocks: []Block{block}, set: true}})
		default:
			out.Messages = append(out.Messages, newInputMessage(m))
		}
	}
	return out
}

// TokenCount is the body of POST /v1/messages/count_tokens.
type TokenCount struct {
	InputTokens int `json:"input_tokens"`
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }
