package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
)

// Responses defaults of the spec.
const (
	defaultMaxTokens   = 512
	defaultEffort      = "medium"
	defaultTemperature = 0.1
	defaultTopP        = 1.0
)

// Request is the body of POST /v1/responses. Beside the spec's
// fields it accepts what the OpenAI SDKs send: tools (function tools and
// one web search tool, see Tool), tool_choice,
// parallel_tool_calls, presence_penalty and frequency_penalty (applied by
// the sampler), user, safety_identifier and prompt_cache_key (echoed),
// max_tool_calls (the searches' bound), truncation (disabled), include
// (see checkInclude),
// background (run after answering, stored: store false is refused with
// it) and top_logprobs (0); conversation and prompt are
// refused. Each field it accepts is applied or refused with a 400 that
// names it; unknown fields are ignored.
type Request struct {
	Model string `json:"model"`
	// Input is a string (one user message) or an array of items.
	Input              Input             `json:"input"`
	Instructions       string            `json:"instructions,omitzero"`
	PreviousResponseID string            `json:"previous_response_id,omitzero"`
	MaxOutputTokens    *int              `json:"max_output_tokens,omitzero"`
	Stream             bool              `json:"stream,omitzero"`
	Reasoning          *Reasoning        `json:"reasoning,omitzero"`
	Temperature        *float64          `json:"temperature,omitzero"`
	TopP               *float64          `json:"top_p,omitzero"`
	Text               *Text             `json:"text,omitzero"`
	Store              *bool             `json:"store,omitzero"`
	Metadata           map[string]string `json:"metadata,omitzero"`

	Tools             []Tool      `json:"tools,omitzero"`
	ToolChoice        *ToolChoice `json:"tool_choice,omitzero"`
	ParallelToolCalls *bool       `json:"parallel_tool_calls,omitzero"`
	User              string      `json:"user,omitzero"`
	Truncation        string      `json:"truncation,omitzero"`
	Include           []string    `json:"include,omitzero"`
	Background        *bool       `json:"background,omitzero"`
	TopLogprobs       *int        `json:"top_logprobs,omitzero"`
	PresencePenalty   *float64    `json:"presence_penalty,omitzero"`
	FrequencyPenalty  *float64    `json:"frequency_penalty,omitzero"`
	// TopK, Seed, Stop and RepetitionPenalty are the sampling parameters
	// that /v1/models lists beyond OpenAI's own for this style, applied
	// by the sampler as in the other styles; Stop is a string or up to 16
	// strings, as chat's stop.
	TopK              *int         `json:"top_k,omitzero"`
	Seed              *int64       `json:"seed,omitzero"`
	Stop              formats.Stop `json:"stop,omitzero"`
	RepetitionPenalty *float64     `json:"repetition_penalty,omitzero"`
	MaxToolCalls      *int         `json:"max_tool_calls,omitzero"`
	PromptCacheKey    string       `json:"prompt_cache_key,omitzero"`
	SafetyIdentifier  string       `json:"safety_identifier,omitzero"`
	// Conversation and Prompt are read only to refuse them: stored
	// conversations and prompt templates are not served.
	Conversation json.RawMessage `json:"conversation,omitzero"`
	Prompt       json.RawMessage `json:"prompt,omitzero"`
}

// names names the engine's fields as this style does (see
// formats.ParamNames).
var names = formats.ParamNames{
	"Tools[].Parameters": "tools[].parameters",
	"Messages":           "input",
	"Prompt":             "input",
	"MaxTokens":          "max_output_tokens",
	"Format":             "text.format",
	"Format.Schema":      "text.format.schema",
	"Format.Grammar":     "text.format",
	"Tools":              "tools",
	"ToolChoice":         "tool_choice",
	"ThinkingBudget":     "reasoning.effort",
	"Effort":             "reasoning.effort",
	"Temperature":        "temperature",
	"TopP":               "top_p",
	"TopK":               "top_k",
	"MinP":               "min_p",
	"Seed":               "seed",
	"Stop":               "stop",
	"RepetitionPenalty":  "repetition_penalty",
	"FrequencyPenalty":   "frequency_penalty",
	"PresencePenalty":    "presence_penalty",
	"IgnoreEOS":          "ignore_eos",
	"Logprobs":           "include",
	"TopLogprobs":        "top_logprobs",
	"PromptLogprobs":     "echo",
	"Choices":            "n",
	// The search options come from the web_search tool.
	"Search":              "tools",
	"Search.MaxSearches":  "max_tool_calls",
	"Search.Results":      "tools.search_context_size",
	"Search.ContentChars": "tools.search_context_size",
	// The MCP servers come from the mcp tools, approvals from input.
	"MCP":           "tools",
	"MCP.MaxCalls":  "max_tool_calls",
	"MCP.Approvals": "input",
}

// Error returns err as this style reports it (formats.ErrorOf), an
// engine's error about one field naming this style's parameter, such as
// tools[2].parameters for Tools[2].Parameters. Write it with formats.WriteError in formats.StyleResponses.
func Error(err error) *formats.Error {
	return names.Error(err)
}

// Reasoning is the reasoning of a responses request.
type Reasoning struct {
	// Effort is none, low, medium or high; default medium.
	Effort string `json:"effort,omitzero"`
	// Summary is auto, concise or detailed.
	Summary string `json:"summary,omitzero"`
}

// Text is the text output configuration.
type Text struct {
	Format    *Format `json:"format,omitzero"`
	Verbosity string  `json:"verbosity,omitzero"`
}

// Format is the output format: type text, json_object or
// json_schema (with name, schema and strict).
type Format struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitzero"`
	Description string          `json:"description,omitzero"`
	Schema      json.RawMessage `json:"schema,omitzero"`
	Strict      *bool           `json:"strict,omitzero"`
}

// Parse decodes, validates and converts a responses
// request body, with the spec's defaults filled in. The conversation of
// previous_response_id is not included: see formats.Continue.
func Parse(body []byte) (formats.Request, error) {
	return wire.Parse[Request](body)
}

// Canonical validates r and returns the hub's formats.Request with the
// responses defaults: 512 max output tokens (reasoning included), effort
// medium, temperature 0.1, top_p 1, format text, store true.
func (r *Request) Canonical() (res formats.Request, err error) {
	out := formats.Request{Request: inference.Request{Model: r.Model}, Instructions: r.Instructions,
		PreviousResponseID: r.PreviousResponseID, Stream: r.Stream, User: r.User,
		SafetyIdentifier: r.SafetyIdentifier, PromptCacheKey: r.PromptCacheKey}
	if r.Model == "" {
		return formats.Request{}, formats.Missing("model")
	}
	if !r.Input.set {
		return formats.Request{}, formats.Missing("input")
	}
	msgs, approvals, err := inputMessages(r.Input, r.PreviousResponseID != "")
	if err != nil {
		return formats.Request{}, err
	}
	out.Messages = msgs
	defer func() {
		// After tools, which makes out.MCP.
		if err == nil && len(approvals) > 0 {
			if out.MCP == nil {
				res, err = formats.Request{}, formats.Invalid("input", "an mcp_approval_response needs the mcp tool of its server in tools")
				return
			}
			out.MCP.Approvals = approvals
		}
	}()

	out.MaxTokens, out.ClampMaxTokens = defaultMaxTokens, true
	if r.MaxOutputTokens != nil {
		if err := wire.CheckMin("max_output_tokens", r.MaxOutputTokens, 1); err != nil {
			return formats.Request{}, err
		}
		out.MaxTokens, out.ClampMaxTokens = *r.MaxOutputTokens, false
	}
	out.Reasoning = formats.Reasoning{Effort: defaultEffort}
	if r.Reasoning != nil {
		if r.Reasoning.Effort != "" {
			if out.Reasoning.Effort, err = wire.NormEffort("reasoning.effort", r.Reasoning.Effort); err != nil {
				return formats.Request{}, err
			}
			out.Reasoning.Asked, out.Reasoning.EffortAsked = true, true
		}
		if err := wire.CheckSummary("reasoning.summary", r.Reasoning.Summary); err != nil {
			return formats.Request{}, err
		}
		if r.Reasoning.Summary != "none" { // none is the default, no summary
			out.Reasoning.Summary = r.Reasoning.Summary
		}
	}
	out.Format = formats.Format{Type: "text"}
	if r.Text != nil {
		if out.Verbosity, err = wire.CheckVerbosity("text.verbosity", r.Text.Verbosity); err != nil {
			return formats.Request{}, err
		}
		if f := r.Text.Format; f != nil {
			switch f.Type {
			case "text":
			case "json_object", "json":
				out.Format.Type = "json"
			case "json_schema":
				if f.Name != "" { // optional, as the spec has it
					if err := wire.CheckToolName("text.format.name", f.Name); err != nil {
						return formats.Request{}, err
					}
				}
				if len(f.Schema) == 0 {
					return formats.Request{}, formats.Missing("text.format.schema")
				}
				if err := wire.CheckSchema("text.format.schema", f.Schema); err != nil {
					return formats.Request{}, err
				}
				out.Format = formats.Format{Type: "json_schema", Name: f.Name, Schema: f.Schema, Strict: f.Strict != nil && *f.Strict}
			default:
				return formats.Request{}, formats.Invalid("text.format.type", "text.format.type must be text, json_schema or json_object, got %q", f.Type)
			}
		}
	}
	if err := r.tools(&out); err != nil {
		return formats.Request{}, err
	}
	out.OneToolCall = r.ParallelToolCalls != nil && !*r.ParallelToolCalls
	if err := (wire.Sampling{Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK, Seed: r.Seed,
		Presence: r.PresencePenalty, Frequency: r.FrequencyPenalty, Repetition: r.RepetitionPenalty,
		Stop: r.Stop, StopParam: "stop"}).Set(&out,
		defaultTemperature, defaultTopP); err != nil {
		return formats.Request{}, err
	}
	if err := wire.CheckMetadata("metadata", r.Metadata); err != nil {
		return formats.Request{}, err
	}
	switch r.Truncation {
	case "", "disabled":
	case "auto":
		// auto would drop input items that do not fit the context; the
		// engine fails such a request instead, so auto is refused rather
		// than echoed and not done.
		return formats.Request{}, formats.Invalid("truncation", "truncation auto is not supported: an input longer than the model's context fails with context_length_exceeded; send disabled")
	default:
		return formats.Request{}, formats.Invalid("truncation", "truncation must be disabled, got %q", r.Truncation)
	}
	if err := checkInclude(r.Include); err != nil {
		return formats.Request{}, err
	}
	if err := wire.CheckMin("max_tool_calls", r.MaxToolCalls, 0); err != nil {
		return formats.Request{}, err
	}
	if r.MaxToolCalls != nil {
		out.MaxToolCalls = ptr(*r.MaxToolCalls)
		// The searches are the only built-in tool calls; none allowed
		// means that the search tool is not offered.
		switch s := out.Search; {
		case s == nil:
		case *r.MaxToolCalls == 0 && s.Force:
			return formats.Request{}, formats.Invalid("max_tool_calls", "max_tool_calls 0 allows no search, and tool_choice forces one")
		case *r.MaxToolCalls == 0:
			out.Search = nil
		default:
			s.MaxSearches = min(*r.MaxToolCalls, inference.MaxSearchesPerRequest)
		}
		if m := out.MCP; m != nil {
			if *r.MaxToolCalls == 0 {
				return formats.Request{}, formats.Invalid("max_tool_calls", "max_tool_calls 0 allows no call of the mcp tools")
			}
			m.MaxCalls = min(*r.MaxToolCalls, inference.MaxMCPCallsPerRequest)
		}
	}
	if n := utf8.RuneCountInString(r.SafetyIdentifier); n > maxSafetyIdentifier {
		return formats.Request{}, formats.Invalid("safety_identifier", "safety_identifier may be at most %d characters, got %d", maxSafetyIdentifier, n)
	}
	if k := formats.JSONKind(r.Conversation); k != "nothing" && k != "null" {
		return formats.Request{}, formats.Invalid("conversation", "conversation is not supported; continue a conversation with previous_response_id")
	}
	if k := formats.JSONKind(r.Prompt); k != "nothing" && k != "null" {
		return formats.Request{}, formats.Invalid("prompt", "prompt templates are not supported; send input and instructions")
	}
	// Log-probabilities come with the output text when include asks for
	// them, or when top_logprobs asks for alternatives.
	on := slices.Contains(r.Include, "message.output_text.logprobs") || r.TopLogprobs != nil && *r.TopLogprobs > 0
	if err := out.SetLogprobs(&on, r.TopLogprobs, "top_logprobs"); err != nil {
		return formats.Request{}, err
	}
	out.Store = r.Store == nil || *r.Store
	out.Background = r.Background != nil && *r.Background
	if out.Background && !out.Store {
		return formats.Request{}, formats.Invalid("background", "background responses must be stored: send store true (the default) with background true")
	}
	out.Metadata = r.Metadata
	return out, nil
}

// tools converts the tools and the tool choice into out's: function tools
// into Tools, the web search tool into Search, and a tool_choice of the
// search tool's type, or required with no function tool, into
// Search.Force. tool_choice none offers no search.
func (r *Request) tools(out *formats.Request) error {
	for i, t := range r.Tools {
		p := fmt.Sprintf("tools[%d]", i)
		if isSearchTool(t.Type) {
			if out.Search != nil {
				return formats.Invalid(p+".type", "%s.type %q: a request may have one web search tool", p, t.Type)
			}
			opts, err := t.searchOptions(p)
			if err != nil {
				return err
			}
			out.Search, out.Sent = opts, sentSearch{tool: &t}
			continue
		}
		if t.Type == "mcp" {
			s, err := t.mcpServer(p)
			if err != nil {
				return err
			}
			if out.MCP == nil {
				out.MCP = &inference.MCPOptions{}
			}
			out.MCP.Servers = append(out.MCP.Servers, s)
			continue
		}
		if t.Type != "function" {
			return formats.Invalid(p+".type", "%s.type %q is not supported; only function tools, web_search and mcp", p, t.Type)
		}
		if err := wire.CheckToolName(p+".name", t.Name); err != nil {
			return err
		}
		if err := wire.CheckSchema(p+".parameters", t.Parameters); err != nil {
			return err
		}
		out.Tools = append(out.Tools, inference.Tool{Name: t.Name, Description: t.Description, Parameters: bytes.Clone(t.Parameters)})
	}
	if out.Search != nil {
		for i, t := range r.Tools {
			if t.Type == "function" && t.Name == inference.SearchToolName {
				p := fmt.Sprintf("tools[%d].name", i)
				return formats.Invalid(p, "%s %q is the web search tool's name", p, t.Name)
			}
		}
	}
	out.ToolChoice = formats.ToolChoice{Mode: "auto"}
	c := r.ToolChoice
	switch {
	case c == nil:
	case isSearchTool(c.Mode):
		if out.Search == nil {
			return formats.Invalid("tool_choice", "tool_choice %q needs a web search tool in tools", c.Mode)
		}
		out.Search.Force = true
		out.Sent = sentSearch{tool: sentOf(*out).tool, choice: c.Mode}
	case c.Mode == "mcp":
		if out.MCP == nil || !slices.ContainsFunc(out.MCP.Servers, func(s inference.MCPServer) bool { return s.Label == c.ServerLabel }) {
			return formats.Invalid("tool_choice.server_label", "tool_choice names MCP server %q, which no mcp tool in tools is", c.ServerLabel)
		}
		// The server's tools are listed when the request runs: a call
		// of the named one, or of any tool.
		out.ToolChoice = formats.ToolChoice{Mode: "required"}
		if c.Name != "" {
			if err := wire.CheckToolName("tool_choice.name", c.Name); err != nil {
				return err
			}
			out.ToolChoice = formats.ToolChoice{Mode: "function", Name: c.Name}
		}
	case c.Mode == "required" && len(out.Tools) == 0 && out.MCP != nil && out.Search == nil:
		out.ToolChoice = formats.ToolChoice{Mode: "required"}
	case c.Mode == "required" && len(out.Tools) == 0 && out.Search != nil:
		out.Search.Force = true
		out.Sent = sentSearch{tool: sentOf(*out).tool, choice: c.Mode}
	default:
		var err error
		if out.ToolChoice, err = wire.CheckToolChoice("tool_choice", formats.ToolChoice{Mode: c.Mode, Name: c.Name}, out.Tools); err != nil {
			return err
		}
		if out.ToolChoice.Mode == "none" {
			out.Search = nil
		}
	}
	return nil
}

// maxSafetyIdentifier is the longest safety_identifier, in characters, as
// the OpenAI API documents it.
const maxSafetyIdentifier = 128

// checkInclude reports an include value whose content the response
// cannot carry. Accepted: reasoning.encrypted_content, since a reasoning
// item carries its text in content, which the input reads back when the
// item is given back (nothing is encrypted, so there is no
// encrypted_content); web_search_call.action.sources, which a
// web_search_call item always has, and web_search_call.results, which
// the item's shape has no field for (their URLs are its sources); the
// outputs of the other built-in tools (file_search_call.results,
// code_interpreter_call.outputs, computer_call_output.output.image_url),
// which never run, since only function tools and web search are
// accepted; and message.output_text.logprobs, which puts the answer's
// log-probabilities in its output_text. Refused:
// message.input_image.image_url (input items are not returned) and
// unknown values.
func checkInclude(include []string) error {
	for i, v := range include {
		switch v {
		case "reasoning.encrypted_content",
			"file_search_call.results", "web_search_call.results", "web_search_call.action.sources",
			"code_interpreter_call.outputs", "computer_call_output.output.image_url":
		case "message.output_text.logprobs":
		case "message.input_image.image_url":
			return formats.Invalid(fmt.Sprintf("include[%d]", i), "include %q is not supported: input items are not returned", v)
		default:
			return formats.Invalid(fmt.Sprintf("include[%d]", i), "include[%d] %q is not a supported value", i, v)
		}
	}
	return nil
}

// NewRequest returns the responses request of r. System messages
// become system items; tool calls and results become function_call and
// function_call_output items (searches given back too); Search becomes
// the web_search tool; every value is written, defaults included.
func NewRequest(r formats.Request) Request {
	out := Request{
		Model: r.Model, Instructions: r.Instructions, PreviousResponseID: r.PreviousResponseID,
		MaxOutputTokens: wire.ExplicitMaxTokens(r), Stream: r.Stream,
		Temperature: r.Temperature, TopP: r.TopP, Store: ptr(r.Store), Metadata: r.Metadata, User: r.User,
		SafetyIdentifier: r.SafetyIdentifier, PromptCacheKey: r.PromptCacheKey,
		Input: Input{Items: []InputItem{}, set: true},
	}
	if r.Background {
		out.Background = ptr(true)
	}
	if r.Logprobs {
		out.Include = []string{"message.output_text.logprobs"}
		out.TopLogprobs = wire.NonZero(r.TopLogprobs)
	}
	if r.MaxToolCalls != nil {
		out.MaxToolCalls = ptr(*r.MaxToolCalls)
	}
	out.FrequencyPenalty, out.PresencePenalty, out.RepetitionPenalty = wire.Penalties(r.Request)
	out.TopK, out.Seed, out.Stop = r.TopK, r.Seed, slices.Clone(r.Stop)
	if r.Reasoning != (formats.Reasoning{}) {
		summary := r.Reasoning.Summary
		if summary == "none" {
			summary = ""
		}
		out.Reasoning = &Reasoning{Effort: r.Reasoning.Effort, Summary: summary}
	}
	switch r.Format.Type {
	case "json":
		out.Text = &Text{Format: &Format{Type: "json_object"}}
	case "json_schema":
		out.Text = &Text{Format: &Format{Type: "json_schema", Name: wire.OrName(r.Format.Name), Schema: r.Format.Schema, Strict: ptr(r.Format.Strict)}}
	case "text":
		out.Text = &Text{Format: &Format{Type: "text"}}
	}
	if r.Verbosity != "" {
		if out.Text == nil {
			out.Text = &Text{}
		}
		out.Text.Verbosity = r.Verbosity
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, Tool{Type: "function", Name: t.Name, Description: t.Description, Parameters: json.RawMessage(t.Parameters)})
	}
	if r.ToolChoice.Mode != "" {
		out.ToolChoice = &ToolChoice{Mode: r.ToolChoice.Mode, Name: r.ToolChoice.Name}
	}
	if s := r.Search; s != nil {
		out.Tools = append(out.Tools, searchTool(s))
		if s.Force {
			out.ToolChoice = &ToolChoice{Mode: "web_search"}
		}
		if out.MaxToolCalls == nil && s.MaxSearches != 0 {
			out.MaxToolCalls = ptr(s.MaxSearches)
		}
	}
	if r.OneToolCall {
		out.ParallelToolCalls = ptr(false)
	}
	for _, m := range r.Messages {
		out.Input.Items = append(out.Input.Items, newInputItems(m)...)
	}
	return out
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }
