package formats

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/inferkit/inferkit/inference"
)

// Responses defaults of the spec.
const (
	responsesMaxTokens   = 512
	responsesEffort      = "medium"
	responsesTemperature = 0.1
	responsesTopP        = 1.0
)

// ResponsesRequest is the body of POST /v1/responses. Beside the spec's
// fields it accepts what the OpenAI SDKs send: tools (function tools and
// one web search tool, see ResponsesTool), tool_choice,
// parallel_tool_calls, presence_penalty and frequency_penalty (applied by
// the sampler), user, safety_identifier and prompt_cache_key (echoed),
// max_tool_calls (the searches' bound), truncation (disabled), include
// (see checkInclude),
// background (false) and top_logprobs (0); conversation and prompt are
// refused. Each field it accepts is applied or refused with a 400 that
// names it; unknown fields are ignored.
type ResponsesRequest struct {
	Model string `json:"model"`
	// Input is a string (one user message) or an array of items.
	Input              ResponsesInput      `json:"input"`
	Instructions       string              `json:"instructions,omitzero"`
	PreviousResponseID string              `json:"previous_response_id,omitzero"`
	MaxOutputTokens    *int                `json:"max_output_tokens,omitzero"`
	Stream             bool                `json:"stream,omitzero"`
	Reasoning          *ResponsesReasoning `json:"reasoning,omitzero"`
	Temperature        *float64            `json:"temperature,omitzero"`
	TopP               *float64            `json:"top_p,omitzero"`
	Text               *ResponsesText      `json:"text,omitzero"`
	Store              *bool               `json:"store,omitzero"`
	Metadata           map[string]string   `json:"metadata,omitzero"`

	Tools             []ResponsesTool      `json:"tools,omitzero"`
	ToolChoice        *ResponsesToolChoice `json:"tool_choice,omitzero"`
	ParallelToolCalls *bool                `json:"parallel_tool_calls,omitzero"`
	User              string               `json:"user,omitzero"`
	Truncation        string               `json:"truncation,omitzero"`
	Include           []string             `json:"include,omitzero"`
	Background        *bool                `json:"background,omitzero"`
	TopLogprobs       *int                 `json:"top_logprobs,omitzero"`
	PresencePenalty   *float64             `json:"presence_penalty,omitzero"`
	FrequencyPenalty  *float64             `json:"frequency_penalty,omitzero"`
	MaxToolCalls      *int                 `json:"max_tool_calls,omitzero"`
	PromptCacheKey    string               `json:"prompt_cache_key,omitzero"`
	SafetyIdentifier  string               `json:"safety_identifier,omitzero"`
	// Conversation and Prompt are read only to refuse them: stored
	// conversations and prompt templates are not served.
	Conversation json.RawMessage `json:"conversation,omitzero"`
	Prompt       json.RawMessage `json:"prompt,omitzero"`
}

// responsesNames names the engine's fields as responses does (see ParamNames).
var responsesNames = ParamNames{
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

// ResponsesReasoning is the reasoning of a responses request.
type ResponsesReasoning struct {
	// Effort is none, low, medium or high; default medium.
	Effort string `json:"effort,omitzero"`
	// Summary is auto, concise or detailed.
	Summary string `json:"summary,omitzero"`
}

// ResponsesText is the text output configuration.
type ResponsesText struct {
	Format    *ResponsesFormat `json:"format,omitzero"`
	Verbosity string           `json:"verbosity,omitzero"`
}

// ResponsesFormat is the output format: type text, json_object or
// json_schema (with name, schema and strict).
type ResponsesFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitzero"`
	Description string          `json:"description,omitzero"`
	Schema      json.RawMessage `json:"schema,omitzero"`
	Strict      *bool           `json:"strict,omitzero"`
}

// ResponsesTool is a tool of the responses style: a function tool (type
// function, with name, description, parameters and strict), or the web
// search tool (type web_search, web_search_preview or one of their dated
// versions, see isSearchTool), which lets the model search through the
// engine's search backend (inference.SearchOptions) with the results and
// characters of SearchContextSize, UserLocation and
// Filters.AllowedDomains.
type ResponsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitzero"`
	Parameters  json.RawMessage `json:"parameters,omitzero"`
	Strict      *bool           `json:"strict,omitzero"`

	// SearchContextSize is low (3 results of up to 500 characters each),
	// medium (the default: 5 of 1,000) or high (8 of 2,000).
	SearchContextSize string                  `json:"search_context_size,omitzero"`
	UserLocation      *WebSearchLocation      `json:"user_location,omitzero"`
	Filters           *ResponsesSearchFilters `json:"filters,omitzero"`
}

// ResponsesSearchFilters restricts a web search to allowed domains and
// their subdomains.
type ResponsesSearchFilters struct {
	AllowedDomains []string `json:"allowed_domains"`
}

// MarshalJSON writes the fields of the tool's type: a web search tool's
// user_location and filters are null when not set.
func (t ResponsesTool) MarshalJSON() ([]byte, error) {
	if isSearchTool(t.Type) {
		return marshal(struct {
			Type              string                  `json:"type"`
			SearchContextSize string                  `json:"search_context_size,omitzero"`
			UserLocation      *WebSearchLocation      `json:"user_location"`
			Filters           *ResponsesSearchFilters `json:"filters"`
		}{t.Type, t.SearchContextSize, t.UserLocation, t.Filters})
	}
	type plain ResponsesTool
	return marshal(plain(t))
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
func (t ResponsesTool) searchOptions(p string) (*inference.SearchOptions, error) {
	opts, err := searchContextSize(p+".search_context_size", t.SearchContextSize)
	if err != nil {
		return nil, err
	}
	if opts.Location, err = t.UserLocation.location(p + ".user_location"); err != nil {
		return nil, err
	}
	if t.Filters != nil && len(t.Filters.AllowedDomains) > 0 {
		opts.Domains = slices.Clone(t.Filters.AllowedDomains)
	}
	return opts, checkSearch(p, opts, strings.NewReplacer("location", "user_location", "domains", "filters.allowed_domains"))
}

// searchTool returns the web search tool of opts, as a response echoes it
// and NewResponsesRequest writes it: type web_search, the context size
// whose number of results is nearest opts', the location and the allowed
// domains.
func searchTool(opts *inference.SearchOptions) ResponsesTool {
	t := ResponsesTool{Type: "web_search", SearchContextSize: contextSizeOf(opts), UserLocation: webSearchLocation(opts.Location)}
	if len(opts.Domains) > 0 {
		t.Filters = &ResponsesSearchFilters{AllowedDomains: slices.Clone(opts.Domains)}
	}
	return t
}

// ResponsesToolChoice is the string none, auto or required, or the object
// {type:"function", name} when Mode is "function", or {type} when Mode is
// a web search tool's type.
type ResponsesToolChoice struct {
	Mode string
	Name string
}

// MarshalJSON writes the string or the object.
func (c ResponsesToolChoice) MarshalJSON() ([]byte, error) {
	switch {
	case c.Mode == "function":
		return marshal(map[string]string{"type": "function", "name": c.Name})
	case isSearchTool(c.Mode):
		return marshal(map[string]string{"type": c.Mode})
	}
	return marshal(c.Mode)
}

// UnmarshalJSON reads the string or the object.
func (c *ResponsesToolChoice) UnmarshalJSON(data []byte) error {
	switch JSONKind(data) {
	case "string":
		return json.Unmarshal(data, &c.Mode)
	case "object":
		var o struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		// Decode, not json.Unmarshal: a type error's offset in data
		// would name a parameter elsewhere in the body.
		if err := Decode(data, &o); err != nil {
			return prefixed("tool_choice", err)
		}
		*c = ResponsesToolChoice{Mode: o.Type, Name: o.Name}
		return nil
	}
	return &json.UnmarshalTypeError{Value: JSONKind(data), Type: reflect.TypeFor[string]()}
}

// ResponsesInput is the input: a string when Items is nil, else items.
type ResponsesInput struct {
	Text  string
	Items []ResponsesItem

	set bool
}

// IsZero reports whether the input is absent.
func (in ResponsesInput) IsZero() bool { return !in.set && in.Text == "" && in.Items == nil }

// MarshalJSON writes the items, or the string.
func (in ResponsesInput) MarshalJSON() ([]byte, error) {
	if in.Items != nil {
		return marshal(in.Items)
	}
	return marshal(in.Text)
}

// UnmarshalJSON accepts a string or an array of items.
func (in *ResponsesInput) UnmarshalJSON(data []byte) error {
	*in = ResponsesInput{}
	switch JSONKind(data) {
	case "null":
		return nil
	case "string":
		in.set = true
		return json.Unmarshal(data, &in.Text)
	case "array":
		in.set = true
		in.Items = []ResponsesItem{}
		if err := Decode(data, &in.Items); err != nil {
			return prefixed("input", err)
		}
		for i, it := range in.Items {
			if it.Content.err != nil {
				return prefixed(fmt.Sprintf("input[%d].content", i), it.Content.err)
			}
			if it.Output.err != nil {
				return prefixed(fmt.Sprintf("input[%d].output", i), it.Output.err)
			}
		}
		return nil
	}
	return &json.UnmarshalTypeError{Value: JSONKind(data), Type: reflect.TypeFor[string]()}
}

// ResponsesItem is an input item: a message (type "message" or absent,
// with role and content), a function_call (call_id, name, arguments), a
// function_call_output (call_id, output), a reasoning item given back
// (its reasoning_text content joins the next assistant message), or a
// web_search_call given back (id, status, action), which becomes a call
// of the search tool whose results are not kept.
type ResponsesItem struct {
	Type    string           `json:"type,omitzero"`
	ID      string           `json:"id,omitzero"`
	Role    string           `json:"role,omitzero"`
	Content ResponsesContent `json:"content,omitzero"`
	Status  string           `json:"status,omitzero"`

	CallID    string `json:"call_id,omitzero"`
	Name      string `json:"name,omitzero"`
	Arguments string `json:"arguments,omitzero"`
	// Output is a function_call_output's result: a string, or parts
	// (input_text, input_image).
	Output ResponsesContent `json:"output,omitzero"`
	// Summary is a reasoning item's summary (summary_text parts).
	Summary []ResponsePart `json:"summary,omitzero"`
	// Action is what a web_search_call did.
	Action *ResponseSearchAction `json:"action,omitzero"`
}

// ResponsesContent is an item's content: a string when Parts is nil, else
// parts.
type ResponsesContent struct {
	Text  string
	Parts []ResponsesPart

	set bool
	err error
}

// IsZero reports whether the content is absent.
func (c ResponsesContent) IsZero() bool { return !c.set && c.Text == "" && c.Parts == nil }

// MarshalJSON writes the parts, or the string.
func (c ResponsesContent) MarshalJSON() ([]byte, error) {
	if c.Parts != nil {
		return marshal(c.Parts)
	}
	return marshal(c.Text)
}

// UnmarshalJSON accepts a string, an array of parts or null.
func (c *ResponsesContent) UnmarshalJSON(data []byte) error {
	*c = ResponsesContent{}
	return decodeTextOrList(data, "string or array of content parts", &c.Text, &c.Parts, &c.set, &c.err)
}

// ResponsesPart is a content part of an input item: input_text (text),
// input_image (image_url, a data: URL), or output_text and reasoning_text
// of earlier output given back.
type ResponsesPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitzero"`
	ImageURL string `json:"image_url,omitzero"`
	Detail   string `json:"detail,omitzero"`
}

// ParseResponsesRequest decodes, validates and converts a responses
// request body, with the spec's defaults filled in. The conversation of
// previous_response_id is not included: see Continue.
func ParseResponsesRequest(body []byte) (Request, error) {
	return parseRequest[ResponsesRequest](body)
}

// Canonical validates r and returns its canonical Request with the
// responses defaults: 512 max output tokens (reasoning included), effort
// medium, temperature 0.1, top_p 1, format text, store true.
func (r *ResponsesRequest) Canonical() (Request, error) {
	out := Request{Request: inference.Request{Model: r.Model}, Instructions: r.Instructions,
		PreviousResponseID: r.PreviousResponseID, Stream: r.Stream, User: r.User,
		SafetyIdentifier: r.SafetyIdentifier, PromptCacheKey: r.PromptCacheKey}
	if r.Model == "" {
		return Request{}, Missing("model")
	}
	if !r.Input.set {
		return Request{}, Missing("input")
	}
	msgs, err := responsesMessages(r.Input)
	if err != nil {
		return Request{}, err
	}
	out.Messages = msgs

	out.MaxTokens, out.ClampMaxTokens = responsesMaxTokens, true
	if r.MaxOutputTokens != nil {
		if err := checkMin("max_output_tokens", r.MaxOutputTokens, 1); err != nil {
			return Request{}, err
		}
		out.MaxTokens, out.ClampMaxTokens = *r.MaxOutputTokens, false
	}
	out.Reasoning = Reasoning{Effort: responsesEffort}
	if r.Reasoning != nil {
		if r.Reasoning.Effort != "" {
			if out.Reasoning.Effort, err = normEffort("reasoning.effort", r.Reasoning.Effort); err != nil {
				return Request{}, err
			}
			out.Reasoning.Asked, out.Reasoning.EffortAsked = true, true
		}
		if err := checkSummary("reasoning.summary", r.Reasoning.Summary); err != nil {
			return Request{}, err
		}
		if r.Reasoning.Summary != "none" { // none is the default, no summary
			out.Reasoning.Summary = r.Reasoning.Summary
		}
	}
	out.Format = Format{Type: "text"}
	if r.Text != nil {
		if out.Verbosity, err = checkVerbosity("text.verbosity", r.Text.Verbosity); err != nil {
			return Request{}, err
		}
		if f := r.Text.Format; f != nil {
			switch f.Type {
			case "text":
			case "json_object", "json":
				out.Format.Type = "json"
			case "json_schema":
				if err := checkToolName("text.format.name", f.Name); err != nil {
					return Request{}, err
				}
				if len(f.Schema) == 0 {
					return Request{}, Missing("text.format.schema")
				}
				if err := checkSchema("text.format.schema", f.Schema); err != nil {
					return Request{}, err
				}
				out.Format = Format{Type: "json_schema", Name: f.Name, Schema: f.Schema, Strict: f.Strict != nil && *f.Strict}
			default:
				return Request{}, Invalid("text.format.type", "text.format.type must be text, json_schema or json_object, got %q", f.Type)
			}
		}
	}
	if err := r.tools(&out); err != nil {
		return Request{}, err
	}
	out.OneToolCall = r.ParallelToolCalls != nil && !*r.ParallelToolCalls
	if err := (Sampling{Temperature: r.Temperature, TopP: r.TopP, Presence: r.PresencePenalty, Frequency: r.FrequencyPenalty}).Set(&out,
		responsesTemperature, responsesTopP); err != nil {
		return Request{}, err
	}
	if err := checkMetadata("metadata", r.Metadata); err != nil {
		return Request{}, err
	}
	switch r.Truncation {
	case "", "disabled":
	case "auto":
		// auto would drop input items that do not fit the context; the
		// engine fails such a request instead, so auto is refused rather
		// than echoed and not done.
		return Request{}, Invalid("truncation", "truncation auto is not supported: an input longer than the model's context fails with context_length_exceeded; send disabled")
	default:
		return Request{}, Invalid("truncation", "truncation must be disabled, got %q", r.Truncation)
	}
	if err := checkInclude(r.Include); err != nil {
		return Request{}, err
	}
	if err := checkMin("max_tool_calls", r.MaxToolCalls, 0); err != nil {
		return Request{}, err
	}
	if r.MaxToolCalls != nil {
		out.MaxToolCalls = ptr(*r.MaxToolCalls)
		// The searches are the only built-in tool calls; none allowed
		// means that the search tool is not offered.
		switch s := out.Search; {
		case s == nil:
		case *r.MaxToolCalls == 0 && s.Force:
			return Request{}, Invalid("max_tool_calls", "max_tool_calls 0 allows no search, and tool_choice forces one")
		case *r.MaxToolCalls == 0:
			out.Search = nil
		default:
			s.MaxSearches = min(*r.MaxToolCalls, inference.MaxSearchesPerRequest)
		}
	}
	if n := utf8.RuneCountInString(r.SafetyIdentifier); n > maxSafetyIdentifier {
		return Request{}, Invalid("safety_identifier", "safety_identifier may be at most %d characters, got %d", maxSafetyIdentifier, n)
	}
	if k := JSONKind(r.Conversation); k != "nothing" && k != "null" {
		return Request{}, Invalid("conversation", "conversation is not supported; continue a conversation with previous_response_id")
	}
	if k := JSONKind(r.Prompt); k != "nothing" && k != "null" {
		return Request{}, Invalid("prompt", "prompt templates are not supported; send input and instructions")
	}
	if r.Background != nil && *r.Background {
		return Request{}, Invalid("background", "background responses are not supported")
	}
	// Log-probabilities come with the output text when include asks for
	// them, or when top_logprobs asks for alternatives.
	on := slices.Contains(r.Include, "message.output_text.logprobs") || r.TopLogprobs != nil && *r.TopLogprobs > 0
	if err := out.SetLogprobs(&on, r.TopLogprobs, "top_logprobs"); err != nil {
		return Request{}, err
	}
	out.Store = r.Store == nil || *r.Store
	out.Metadata = r.Metadata
	return out, nil
}

// tools converts the tools and the tool choice into out's: function tools
// into Tools, the web search tool into Search, and a tool_choice of the
// search tool's type, or required with no function tool, into
// Search.Force. tool_choice none offers no search.
func (r *ResponsesRequest) tools(out *Request) error {
	for i, t := range r.Tools {
		p := fmt.Sprintf("tools[%d]", i)
		if isSearchTool(t.Type) {
			if out.Search != nil {
				return Invalid(p+".type", "%s.type %q: a request may have one web search tool", p, t.Type)
			}
			opts, err := t.searchOptions(p)
			if err != nil {
				return err
			}
			out.Search, out.searchTool = opts, &t
			continue
		}
		if t.Type != "function" {
			return Invalid(p+".type", "%s.type %q is not supported; only function tools and web_search", p, t.Type)
		}
		if err := checkToolName(p+".name", t.Name); err != nil {
			return err
		}
		if err := checkSchema(p+".parameters", t.Parameters); err != nil {
			return err
		}
		out.Tools = append(out.Tools, inference.Tool{Name: t.Name, Description: t.Description, Parameters: bytes.Clone(t.Parameters)})
	}
	if out.Search != nil {
		for i, t := range r.Tools {
			if t.Type == "function" && t.Name == inference.SearchToolName {
				p := fmt.Sprintf("tools[%d].name", i)
				return Invalid(p, "%s %q is the web search tool's name", p, t.Name)
			}
		}
	}
	out.ToolChoice = ToolChoice{Mode: "auto"}
	c := r.ToolChoice
	switch {
	case c == nil:
	case isSearchTool(c.Mode):
		if out.Search == nil {
			return Invalid("tool_choice", "tool_choice %q needs a web search tool in tools", c.Mode)
		}
		out.Search.Force, out.searchChoice = true, c.Mode
	case c.Mode == "required" && len(out.Tools) == 0 && out.Search != nil:
		out.Search.Force, out.searchChoice = true, c.Mode
	default:
		var err error
		if out.ToolChoice, err = checkToolChoice("tool_choice", ToolChoice(*c), out.Tools); err != nil {
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
			return Invalid(fmt.Sprintf("include[%d]", i), "include %q is not supported: input items are not returned", v)
		default:
			return Invalid(fmt.Sprintf("include[%d]", i), "include[%d] %q is not a supported value", i, v)
		}
	}
	return nil
}

// responsesMessages converts the input into messages.
func responsesMessages(in ResponsesInput) ([]inference.Message, error) {
	if in.Items == nil {
		return []inference.Message{inference.Text(inference.RoleUser, in.Text)}, nil
	}
	if len(in.Items) == 0 {
		return nil, Invalid("input", "input must hold at least one item")
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
				return nil, Missing(p + ".call_id")
			}
			if err := checkToolName(p+".name", it.Name); err != nil {
				return nil, err
			}
			a := lastAssistant()
			a.ToolCalls = append(a.ToolCalls, inference.ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		case "function_call_output":
			if it.CallID == "" {
				return nil, Missing(p + ".call_id")
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
			return nil, Invalid(p+".type", "%s.type must be message, function_call, function_call_output, reasoning or web_search_call, got %q", p, it.Type)
		}
	}
	if len(out) == 0 {
		// Only reasoning items: nothing for the model to answer, and the
		// engine needs a message.
		return nil, Invalid("input", "input must hold a message, function_call or function_call_output item, not only reasoning")
	}
	nameToolResults(out)
	return out, nil
}

// searchCall returns the call of the search tool that web_search_call
// item i made: its id (or one of its index), and its query, or what an
// open_page or find_in_page action read.
func (it ResponsesItem) searchCall(i int) inference.ToolCall {
	id := cmp.Or(it.ID, fmt.Sprintf("ws_input_%d", i))
	var query string
	if a := it.Action; a != nil {
		query = cmp.Or(a.Query, strings.Join(a.Queries, "; "), a.URL, a.Pattern)
	}
	args := searchArguments(query)
	return inference.ToolCall{ID: id, Name: inference.SearchToolName, Arguments: string(args)}
}

// searchResult is what a web_search_call item given back tells the model
// of the search's results: that they are not kept, and which pages they
// were, when the item lists its sources.
func (it ResponsesItem) searchResult() string {
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
func (it ResponsesItem) message(p string) (inference.Message, error) {
	var m inference.Message
	switch it.Role {
	case "user":
		m.Role = inference.RoleUser
	case "assistant":
		m.Role = inference.RoleAssistant
	case "system", "developer":
		m.Role = inference.RoleSystem
	case "":
		return m, Missing(p + ".role")
	default:
		return m, Invalid(p+".role", "%s.role must be user, assistant, system or developer, got %q", p, it.Role)
	}
	if !it.Content.set {
		return m, Missing(p + ".content")
	}
	parts, err := it.Content.parts(p + ".content")
	m.Content = parts
	return m, err
}

// parts converts content at path p into the engine's parts.
func (c ResponsesContent) parts(p string) ([]inference.Part, error) {
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
			img, err := imagePart(pp+".image_url", part.ImageURL)
			if err != nil {
				return nil, err
			}
			out = append(out, img)
		case "refusal":
		case "":
			return nil, Missing(pp + ".type")
		default:
			return nil, Invalid(pp+".type", "%s.type must be input_text or input_image, got %q", pp, part.Type)
		}
	}
	return out, nil
}

// NewResponsesRequest returns the responses request of r. System messages
// become system items; tool calls and results become function_call and
// function_call_output items (searches given back too); Search becomes
// the web_search tool; every value is written, defaults included.
func NewResponsesRequest(r Request) ResponsesRequest {
	out := ResponsesRequest{
		Model: r.Model, Instructions: r.Instructions, PreviousResponseID: r.PreviousResponseID,
		MaxOutputTokens: r.explicitMaxTokens(), Stream: r.Stream,
		Temperature: r.Temperature, TopP: r.TopP, Store: ptr(r.Store), Metadata: r.Metadata, User: r.User,
		SafetyIdentifier: r.SafetyIdentifier, PromptCacheKey: r.PromptCacheKey,
		Input: ResponsesInput{Items: []ResponsesItem{}, set: true},
	}
	if r.Logprobs {
		out.Include = []string{"message.output_text.logprobs"}
		out.TopLogprobs = nonZero(r.TopLogprobs)
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
	if r.Reasoning != (Reasoning{}) {
		summary := r.Reasoning.Summary
		if summary == "none" {
			summary = ""
		}
		out.Reasoning = &ResponsesReasoning{Effort: r.Reasoning.Effort, Summary: summary}
	}
	switch r.Format.Type {
	case "json":
		out.Text = &ResponsesText{Format: &ResponsesFormat{Type: "json_object"}}
	case "json_schema":
		out.Text = &ResponsesText{Format: &ResponsesFormat{Type: "json_schema", Name: orName(r.Format.Name), Schema: r.Format.Schema, Strict: ptr(r.Format.Strict)}}
	case "text":
		out.Text = &ResponsesText{Format: &ResponsesFormat{Type: "text"}}
	}
	if r.Verbosity != "" {
		if out.Text == nil {
			out.Text = &ResponsesText{}
		}
		out.Text.Verbosity = r.Verbosity
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, ResponsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: json.RawMessage(t.Parameters)})
	}
	if r.ToolChoice.Mode != "" {
		out.ToolChoice = &ResponsesToolChoice{Mode: r.ToolChoice.Mode, Name: r.ToolChoice.Name}
	}
	if s := r.Search; s != nil {
		out.Tools = append(out.Tools, searchTool(s))
		if s.Force {
			out.ToolChoice = &ResponsesToolChoice{Mode: "web_search"}
		}
		if out.MaxToolCalls == nil && s.MaxSearches != 0 {
			out.MaxToolCalls = ptr(s.MaxSearches)
		}
	}
	if r.OneToolCall {
		out.ParallelToolCalls = ptr(false)
	}
	for _, m := range r.Messages {
		out.Input.Items = append(out.Input.Items, newResponsesItems(m)...)
	}
	return out
}

// newResponsesItems converts one canonical message into items.
func newResponsesItems(m inference.Message) []ResponsesItem {
	if m.Role == inference.RoleTool {
		out := ResponsesItem{Type: "function_call_output", CallID: m.ToolCallID, Output: ResponsesContent{Text: joinText(m.Content), set: true}}
		if hasImage(m.Content) { // output as parts, so that the images stay
			out.Output = ResponsesContent{Parts: responsesParts(m.Content, "input_text"), set: true}
		}
		return []ResponsesItem{out}
	}
	var out []ResponsesItem
	if m.Reasoning != "" {
		out = append(out, ResponsesItem{Type: "reasoning", Content: ResponsesContent{Parts: []ResponsesPart{{Type: "reasoning_text", Text: m.Reasoning}}, set: true}})
	}
	textType := "input_text"
	if m.Role == inference.RoleAssistant {
		textType = "output_text"
	}
	if len(m.Content) > 0 || len(m.ToolCalls) == 0 {
		out = append(out, ResponsesItem{Type: "message", Role: string(m.Role), Content: ResponsesContent{Parts: responsesParts(m.Content, textType), set: true}})
	}
	for _, c := range m.ToolCalls {
		out = append(out, ResponsesItem{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return out
}

// responsesParts converts content into parts, its text as parts of
// textType.
func responsesParts(content []inference.Part, textType string) []ResponsesPart {
	parts := []ResponsesPart{}
	for _, p := range content {
		if p.Image != nil || p.URL != "" {
			parts = append(parts, ResponsesPart{Type: "input_image", ImageURL: imageURL(p)})
		} else {
			parts = append(parts, ResponsesPart{Type: textType, Text: p.Text})
		}
	}
	return parts
}
