package responses

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
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
// background (false) and top_logprobs (0); conversation and prompt are
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
	MaxToolCalls      *int        `json:"max_tool_calls,omitzero"`
	PromptCacheKey    string      `json:"prompt_cache_key,omitzero"`
	SafetyIdentifier  string      `json:"safety_identifier,omitzero"`
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
}

// MarshalJSON writes the string or the object.
func (c ToolChoice) MarshalJSON() ([]byte, error) {
	switch {
	case c.Mode == "function":
		return formats.Marshal(map[string]string{"type": "function", "name": c.Name})
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
			Type string `json:"type"`
			Name string `json:"name"`
		}
		// Decode, not json.Unmarshal: a type error's offset in data
		// would name a parameter elsewhere in the body.
		if err := formats.Decode(data, &o); err != nil {
			return wire.Prefixed("tool_choice", err)
		}
		*c = ToolChoice{Mode: o.Type, Name: o.Name}
		return nil
	}
	return &json.UnmarshalTypeError{Value: formats.JSONKind(data), Type: reflect.TypeFor[string]()}
}

// Input is the input: a string when Items is nil, else items.
type Input struct {
	Text  string
	Items []InputItem

	set bool
}

// IsZero reports whether the input is absent.
func (in Input) IsZero() bool { return !in.set && in.Text == "" && in.Items == nil }

// MarshalJSON writes the items, or the string.
func (in Input) MarshalJSON() ([]byte, error) {
	if in.Items != nil {
		return formats.Marshal(in.Items)
	}
	return formats.Marshal(in.Text)
}

// UnmarshalJSON accepts a string or an array of items.
func (in *Input) UnmarshalJSON(data []byte) error {
	*in = Input{}
	switch formats.JSONKind(data) {
	case "null":
		return nil
	case "string":
		in.set = true
		return json.Unmarshal(data, &in.Text)
	case "array":
		in.set = true
		in.Items = []InputItem{}
		if err := formats.Decode(data, &in.Items); err != nil {
			return wire.Prefixed("input", err)
		}
		for i, it := range in.Items {
			if it.Content.err != nil {
				return wire.Prefixed(fmt.Sprintf("input[%d].content", i), it.Content.err)
			}
			if it.Output.err != nil {
				return wire.Prefixed(fmt.Sprintf("input[%d].output", i), it.Output.err)
			}
		}
		return nil
	}
	return &json.UnmarshalTypeError{Value: formats.JSONKind(data), Type: reflect.TypeFor[string]()}
}

// InputItem is an input item: a message (type "message" or absent,
// with role and content), a function_call (call_id, name, arguments), a
// function_call_output (call_id, output), a reasoning item given back
// (its reasoning_text content joins the next assistant message), or a
// web_search_call given back (id, status, action), which becomes a call
// of the search tool whose results are not kept.
type InputItem struct {
	Type    string       `json:"type,omitzero"`
	ID      string       `json:"id,omitzero"`
	Role    string       `json:"role,omitzero"`
	Content InputContent `json:"content,omitzero"`
	Status  string       `json:"status,omitzero"`

	CallID    string `json:"call_id,omitzero"`
	Name      string `json:"name,omitzero"`
	Arguments string `json:"arguments,omitzero"`
	// Output is a function_call_output's result: a string, or parts
	// (input_text, input_image).
	Output InputContent `json:"output,omitzero"`
	// Summary is a reasoning item's summary (summary_text parts).
	Summary []Part `json:"summary,omitzero"`
	// Action is what a web_search_call did.
	Action *SearchAction `json:"action,omitzero"`
}

// InputContent is an item's content: a string when Parts is nil, else
// parts.
type InputContent struct {
	Text  string
	Parts []InputPart

	set bool
	err error
}

// IsZero reports whether the content is absent.
func (c InputContent) IsZero() bool { return !c.set && c.Text == "" && c.Parts == nil }

// MarshalJSON writes the parts, or the string.
func (c InputContent) MarshalJSON() ([]byte, error) {
	if c.Parts != nil {
		return formats.Marshal(c.Parts)
	}
	return formats.Marshal(c.Text)
}

// UnmarshalJSON accepts a string, an array of parts or null.
func (c *InputContent) UnmarshalJSON(data []byte) error {
	*c = InputContent{}
	return wire.DecodeTextOrList(data, "string or array of content parts", &c.Text, &c.Parts, &c.set, &c.err)
}

// InputPart is a content part of an input item: input_text (text),
// input_image (image_url, a data: URL), or output_text and reasoning_text
// of earlier output given back.
type InputPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitzero"`
	ImageURL string `json:"image_url,omitzero"`
	Detail   string `json:"detail,omitzero"`
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
func (r *Request) Canonical() (formats.Request, error) {
	out := formats.Request{Request: inference.Request{Model: r.Model}, Instructions: r.Instructions,
		PreviousResponseID: r.PreviousResponseID, Stream: r.Stream, User: r.User,
		SafetyIdentifier: r.SafetyIdentifier, PromptCacheKey: r.PromptCacheKey}
	if r.Model == "" {
		return formats.Request{}, formats.Missing("model")
	}
	if !r.Input.set {
		return formats.Request{}, formats.Missing("input")
	}
	msgs, err := inputMessages(r.Input)
	if err != nil {
		return formats.Request{}, err
	}
	out.Messages = msgs

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
				if err := wire.CheckToolName("text.format.name", f.Name); err != nil {
					return formats.Request{}, err
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
	if err := (wire.Sampling{Temperature: r.Temperature, TopP: r.TopP, Presence: r.PresencePenalty, Frequency: r.FrequencyPenalty}).Set(&out,
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
	if r.Background != nil && *r.Background {
		return formats.Request{}, formats.Invalid("background", "background responses are not supported")
	}
	// Log-probabilities come with the output text when include asks for
	// them, or when top_logprobs asks for alternatives.
	on := slices.Contains(r.Include, "message.output_text.logprobs") || r.TopLogprobs != nil && *r.TopLogprobs > 0
	if err := out.SetLogprobs(&on, r.TopLogprobs, "top_logprobs"); err != nil {
		return formats.Request{}, err
	}
	out.Store = r.Store == nil || *r.Store
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
		if t.Type != "function" {
			return formats.Invalid(p+".type", "%s.type %q is not supported; only function tools and web_search", p, t.Type)
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
	case c.Mode == "required" && len(out.Tools) == 0 && out.Search != nil:
		out.Search.Force = true
		out.Sent = sentSearch{tool: sentOf(*out).tool, choice: c.Mode}
	default:
		var err error
		if out.ToolChoice, err = wire.CheckToolChoice("tool_choice", formats.ToolChoice(*c), out.Tools); err != nil {
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

// inputMessages converts the input into messages.
func inputMessages(in Input) ([]inference.Message, error) {
	if in.Items == nil {
		return []inference.Message{inference.Text(inference.RoleUser, in.Text)}, nil
	}
	if len(in.Items) == 0 {
		return nil, formats.Invalid("input", "input must hold at least one item")
	}
	var out []inference.Message
	// reasoning is the text of the reasoning items since the last
	// assistant message, built up in one buffer: += would copy the text so
	// far at every part, quadratic time for many parts.
	var reasoning strings.Builder
	// assistant returns the last message if it is an assistant's, to which
	// function calls attach.
	lastAssistant := func() *inference.Message {
		if n := len(out); n > 0 && out[n-1].Role == inference.RoleAssistant {
			return &out[n-1]
		}
		out = append(out, inference.Message{Role: inference.RoleAssistant, Reasoning: reasoning.String()})
		reasoning.Reset()
		return &out[len(out)-1]
	}
	for i, it := range in.Items {
		p := fmt.Sprintf("input[%d]", i)
		switch it.Type {
		case "", "message":
			m, err := it.message(p)
			if err != nil {
				return nil, err
			}
			if m.Role == inference.RoleAssistant {
				m.Reasoning = reasoning.String()
				reasoning.Reset()
			}
			out = append(out, m)
		case "function_call":
			if it.CallID == "" {
				return nil, formats.Missing(p + ".call_id")
			}
			if err := wire.CheckToolName(p+".name", it.Name); err != nil {
				return nil, err
			}
			a := lastAssistant()
			a.ToolCalls = append(a.ToolCalls, inference.ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		case "function_call_output":
			if it.CallID == "" {
				return nil, formats.Missing(p + ".call_id")
			}
			parts, err := it.Output.parts(p + ".output")
			if err != nil {
				return nil, err
			}
			out = append(out, inference.Message{Role: inference.RoleTool, ToolCallID: it.CallID, Name: it.Name, Content: parts})
		case "reasoning":
			// The thinking, or, when a client sends back the item as it
			// got it, its summary.
			for _, part := range it.Content.Parts {
				reasoning.WriteString(part.Text)
			}
			if len(it.Content.Parts) == 0 {
				for _, part := range it.Summary {
					reasoning.WriteString(part.Text)
				}
			}
		case "web_search_call":
			// A search of an earlier response: a call of the search tool
			// and its result, whose text is not kept.
			call := it.searchCall(i)
			a := lastAssistant()
			a.ToolCalls = append(a.ToolCalls, call)
			out = append(out, inference.Message{Role: inference.RoleTool, ToolCallID: call.ID, Name: call.Name,
				Content: []inference.Part{{Text: it.searchResult()}}})
		default:
			return nil, formats.Invalid(p+".type", "%s.type must be message, function_call, function_call_output, reasoning or web_search_call, got %q", p, it.Type)
		}
	}
	if len(out) == 0 {
		// Only reasoning items: nothing for the model to answer, and the
		// engine needs a message.
		return nil, formats.Invalid("input", "input must hold a message, function_call or function_call_output item, not only reasoning")
	}
	formats.NameToolResults(out)
	return out, nil
}

// searchCall returns the call of the search tool that web_search_call
// item i made: its id (or one of its index), and its query, or what an
// open_page or find_in_page action read.
func (it InputItem) searchCall(i int) inference.ToolCall {
	id := cmp.Or(it.ID, fmt.Sprintf("ws_input_%d", i))
	var query string
	if a := it.Action; a != nil {
		query = cmp.Or(a.Query, strings.Join(a.Queries, "; "), a.URL, a.Pattern)
	}
	args := formats.SearchArguments(query)
	return inference.ToolCall{ID: id, Name: inference.SearchToolName, Arguments: string(args)}
}

// searchResult is what a web_search_call item given back tells the model
// of the search's results: that they are not kept, and which pages they
// were, when the item lists its sources.
func (it InputItem) searchResult() string {
	if it.Status == "failed" {
		return inference.SearchCall{Status: inference.SearchFailed}.Text(0)
	}
	text := "The results of this search are not kept."
	if a := it.Action; a != nil && len(a.Sources) > 0 {
		urls := make([]string, len(a.Sources))
		for i, s := range a.Sources {
			urls[i] = s.URL
		}
		text += " They came from: " + strings.Join(urls, ", ")
	}
	return text
}

// message converts a message item.
func (it InputItem) message(p string) (inference.Message, error) {
	var m inference.Message
	switch it.Role {
	case "user":
		m.Role = inference.RoleUser
	case "assistant":
		m.Role = inference.RoleAssistant
	case "system", "developer":
		m.Role = inference.RoleSystem
	case "":
		return m, formats.Missing(p + ".role")
	default:
		return m, formats.Invalid(p+".role", "%s.role must be user, assistant, system or developer, got %q", p, it.Role)
	}
	if !it.Content.set {
		return m, formats.Missing(p + ".content")
	}
	parts, err := it.Content.parts(p + ".content")
	m.Content = parts
	return m, err
}

// parts converts content at path p into the engine's parts.
func (c InputContent) parts(p string) ([]inference.Part, error) {
	if c.Parts == nil {
		return []inference.Part{{Text: c.Text}}, nil
	}
	var out []inference.Part
	for j, part := range c.Parts {
		pp := fmt.Sprintf("%s[%d]", p, j)
		switch part.Type {
		case "input_text", "output_text", "text":
			out = append(out, inference.Part{Text: part.Text})
		case "input_image":
			img, err := wire.ImagePart(pp+".image_url", part.ImageURL)
			if err != nil {
				return nil, err
			}
			out = append(out, img)
		case "refusal":
		case "":
			return nil, formats.Missing(pp + ".type")
		default:
			return nil, formats.Invalid(pp+".type", "%s.type must be input_text or input_image, got %q", pp, part.Type)
		}
	}
	return out, nil
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
	if r.Logprobs {
		out.Include = []string{"message.output_text.logprobs"}
		out.TopLogprobs = wire.NonZero(r.TopLogprobs)
	}
	if r.MaxToolCalls != nil {
		out.MaxToolCalls = ptr(*r.MaxToolCalls)
	}
	if r.PresencePenalty != 0 {
		out.PresencePenalty = ptr(r.PresencePenalty)
	}
	if r.FrequencyPenalty != 0 {
		out.FrequencyPenalty = ptr(r.FrequencyPenalty)
	}
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

// newInputItems converts one canonical message into items.
func newInputItems(m inference.Message) []InputItem {
	if m.Role == inference.RoleTool {
		out := InputItem{Type: "function_call_output", CallID: m.ToolCallID, Output: InputContent{Text: wire.JoinText(m.Content), set: true}}
		if wire.HasImage(m.Content) { // output as parts, so that the images stay
			out.Output = InputContent{Parts: inputParts(m.Content, "input_text"), set: true}
		}
		return []InputItem{out}
	}
	var out []InputItem
	if m.Reasoning != "" {
		out = append(out, InputItem{Type: "reasoning", Content: InputContent{Parts: []InputPart{{Type: "reasoning_text", Text: m.Reasoning}}, set: true}})
	}
	textType := "input_text"
	if m.Role == inference.RoleAssistant {
		textType = "output_text"
	}
	if len(m.Content) > 0 || len(m.ToolCalls) == 0 {
		out = append(out, InputItem{Type: "message", Role: string(m.Role), Content: InputContent{Parts: inputParts(m.Content, textType), set: true}})
	}
	for _, c := range m.ToolCalls {
		out = append(out, InputItem{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return out
}

// inputParts converts content into parts, its text as parts of
// textType.
func inputParts(content []inference.Part, textType string) []InputPart {
	parts := []InputPart{}
	for _, p := range content {
		if p.Image != nil || p.URL != "" {
			parts = append(parts, InputPart{Type: "input_image", ImageURL: wire.ImageURL(p)})
		} else {
			parts = append(parts, InputPart{Type: textType, Text: p.Text})
		}
	}
	return parts
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

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
