package chat

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

// Chat defaults of the spec.
const (
	defaultMaxTokens   = 2048
	defaultEffort      = "high"
	defaultSummary     = "none"
	defaultTemperature = 0.1
	defaultTopP        = 1.0
)

// Request is the body of POST /v1/chat/completions (and
// /v1/web/chat/completions). Beside the spec's fields it accepts what the
// OpenAI SDKs send: max_tokens and max_completion_tokens for
// max_new_tokens, reasoning_effort, verbosity, stop, seed, top_k,
// penalties, n, user (logged as the end user), parallel_tool_calls, and
// store and metadata only to refuse them (store false and no metadata
// pass). Each field is applied or refused with a 400 that names it (see
// the table of package formats); unknown fields are ignored.
type Request struct {
	Model         string         `json:"model"`
	Messages      []Message      `json:"messages"`
	Stream        bool           `json:"stream,omitzero"`
	StreamOptions *StreamOptions `json:"stream_options,omitzero"`

	Tools             []Tool      `json:"tools,omitzero"`
	ToolChoice        *ToolChoice `json:"tool_choice,omitzero"`
	ParallelToolCalls *bool       `json:"parallel_tool_calls,omitzero"`

	// MaxNewTokens is the spec's name of the output limit; MaxTokens and
	// MaxCompletionTokens are the OpenAI names. The first set of the three,
	// in this order, applies; the default is 2048.
	MaxNewTokens        *int `json:"max_new_tokens,omitzero"`
	MaxCompletionTokens *int `json:"max_completion_tokens,omitzero"`
	MaxTokens           *int `json:"max_tokens,omitzero"`

	Reasoning       *Reasoning      `json:"reasoning,omitzero"`
	ReasoningEffort string          `json:"reasoning_effort,omitzero"`
	ResponseFormat  *ResponseFormat `json:"response_format,omitzero"`
	// Verbosity is low, medium or high, as the OpenAI SDKs send it; see
	// formats.VerbosityInstruction.
	Verbosity string `json:"verbosity,omitzero"`

	Temperature       *float64     `json:"temperature,omitzero"`
	TopP              *float64     `json:"top_p,omitzero"`
	TopK              *int         `json:"top_k,omitzero"`
	MinP              *float64     `json:"min_p,omitzero"`
	Seed              *int64       `json:"seed,omitzero"`
	Stop              formats.Stop `json:"stop,omitzero"`
	FrequencyPenalty  *float64     `json:"frequency_penalty,omitzero"`
	PresencePenalty   *float64     `json:"presence_penalty,omitzero"`
	RepetitionPenalty *float64     `json:"repetition_penalty,omitzero"`
	N                 *int         `json:"n,omitzero"`
	// WebSearchOptions makes the model search the web before it answers,
	// as OpenAI's search models do (see inference.SearchOptions).
	WebSearchOptions *WebSearchOptions `json:"web_search_options,omitzero"`
	Logprobs         *bool             `json:"logprobs,omitzero"`
	TopLogprobs      *int              `json:"top_logprobs,omitzero"`

	User     string            `json:"user,omitzero"`
	Metadata map[string]string `json:"metadata,omitzero"`
	Store    *bool             `json:"store,omitzero"`
}

// names names the engine's fields as this style does (see
// formats.ParamNames).
var names = formats.ParamNames{
	"Tools[].Parameters": "tools[].function.parameters",
	"Messages":           "messages",
	"Prompt":             "prompt",
	"MaxTokens":          "max_tokens",
	"Format":             "response_format",
	"Format.Schema":      "response_format.json_schema.schema",
	"Format.Grammar":     "response_format",
	"Tools":              "tools",
	"ToolChoice":         "tool_choice",
	"ThinkingBudget":     "reasoning.effort",
	"Effort":             "reasoning_effort",
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
	"Logprobs":           "logprobs",
	"TopLogprobs":        "top_logprobs",
	"PromptLogprobs":     "echo",
	"Choices":            "n",
	// The search options come from web_search_options.
	"Search":              "web_search_options",
	"Search.MaxSearches":  "web_search_options",
	"Search.Results":      "web_search_options.search_context_size",
	"Search.ContentChars": "web_search_options.search_context_size",
}

// Error returns err as this style reports it (formats.ErrorOf), an
// engine's error about one field naming this style's parameter, such as
// tools[2].function.parameters for Tools[2].Parameters. Write it with formats.WriteError in formats.StyleChat.
func Error(err error) *formats.Error {
	return names.Error(err)
}

// StreamOptions are the options of a chat stream.
type StreamOptions struct {
	// IncludeUsage adds a last chunk with empty choices and the usage.
	IncludeUsage bool `json:"include_usage,omitzero"`
}

// Reasoning is the spec's reasoning object of a chat request.
type Reasoning struct {
	// Effort is none, low, medium or high; default high.
	Effort string `json:"effort,omitzero"`
	// Summary is none or auto; default none. With auto, the reasoning text
	// is returned as message.reasoning_content.
	Summary string `json:"summary,omitzero"`
}

// ResponseFormat is the output format of a chat request: type text,
// json (the spec's name), json_object or json_schema (the OpenAI names).
type ResponseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *JSONSchema `json:"json_schema,omitzero"`
}

// JSONSchema is the schema of a json_schema response format.
type JSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitzero"`
	Schema      json.RawMessage `json:"schema,omitzero"`
	Strict      *bool           `json:"strict,omitzero"`
}

// Message is one message of a chat request.
type Message struct {
	// Role is system, user or assistant (the spec's roles), or developer
	// and tool as the OpenAI SDKs send them.
	Role    string  `json:"role"`
	Content Content `json:"content"`
	Name    string  `json:"name,omitzero"`
	// ToolCalls are the calls of an assistant message.
	ToolCalls []ToolCall `json:"tool_calls,omitzero"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitzero"`
	// ReasoningContent is an assistant message's reasoning.
	ReasoningContent string `json:"reasoning_content,omitzero"`
}

// Content is a message's content: a string, or an array of parts when
// Parts is not nil.
type Content struct {
	Text  string
	Parts []ContentPart

	set bool  // present and not null
	err error // a decoding error, reported with its path by validation
}

// Text returns the content holding the text s.
func Text(s string) Content { return Content{Text: s, set: true} }

// MarshalJSON writes the parts, or the text as a string.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Parts != nil {
		return formats.Marshal(c.Parts)
	}
	return formats.Marshal(c.Text)
}

// UnmarshalJSON accepts a string, an array of parts or null.
func (c *Content) UnmarshalJSON(data []byte) error {
	*c = Content{}
	return wire.DecodeTextOrList(data, "string or array of content parts", &c.Text, &c.Parts, &c.set, &c.err)
}

// ContentPart is one part of an array content: type text (field
// text) or image_url (field image_url, a data: URL).
type ContentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitzero"`
	ImageURL *ImageURL `json:"image_url,omitzero"`
}

// ImageURL is the image of an image_url part.
type ImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitzero"`
}

// Tool is a tool definition: only type function.
type Tool struct {
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function is the function of a tool definition.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitzero"`
	Parameters  json.RawMessage `json:"parameters,omitzero"`
	Strict      *bool           `json:"strict,omitzero"`
}

// ToolCall is a call of a function by the model.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is the function and JSON arguments of a tool call.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// WebSearchOptions is a chat request's web_search_options.
type WebSearchOptions struct {
	// SearchContextSize is low, medium (the default) or high: how much
	// of each search the model reads.
	SearchContextSize string `json:"search_context_size,omitzero"`
	// UserLocation is {type: approximate, approximate: {city, country,
	// region, timezone}}.
	UserLocation *UserLocation `json:"user_location,omitzero"`
}

// UserLocation is web_search_options.user_location.
type UserLocation struct {
	Type        string                     `json:"type,omitzero"` // approximate
	Approximate *formats.WebSearchLocation `json:"approximate,omitzero"`
}

// ToolChoice is the string none, auto or required, or the object
// {type:"function", function:{name}} when Mode is "function".
type ToolChoice struct {
	Mode string
	Name string
}

// MarshalJSON writes the string or the object.
func (c ToolChoice) MarshalJSON() ([]byte, error) {
	if c.Mode == "function" {
		return formats.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": c.Name}})
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
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		// Decode, not json.Unmarshal: a type error's offset in data
		// would name a parameter elsewhere in the body.
		if err := formats.Decode(data, &o); err != nil {
			return wire.Prefixed("tool_choice", err)
		}
		*c = ToolChoice{Mode: o.Type, Name: o.Function.Name}
		return nil
	}
	return &json.UnmarshalTypeError{Value: formats.JSONKind(data), Type: reflect.TypeFor[string]()}
}

// Parse decodes, validates and converts a chat completion
// request body, with the spec's defaults filled in.
func Parse(body []byte) (formats.Request, error) {
	return wire.Parse[Request](body)
}

// Canonical validates r and returns the hub's formats.Request with the chat
// defaults: 2048 new tokens, effort high, summary none, temperature 0.1,
// top_p 1, format text, tool choice auto.
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
	for i, m := range r.Messages {
		msg, err := m.canonical(fmt.Sprintf("messages[%d]", i))
		if err != nil {
			return formats.Request{}, err
		}
		out.Messages = append(out.Messages, msg)
	}
	formats.NameToolResults(out.Messages)
	tools, err := tools(r.Tools)
	if err != nil {
		return formats.Request{}, err
	}
	out.Tools = tools
	if out.ToolChoice, err = toolChoice(r.ToolChoice, tools); err != nil {
		return formats.Request{}, err
	}
	out.OneToolCall = r.ParallelToolCalls != nil && !*r.ParallelToolCalls

	out.MaxTokens, out.ClampMaxTokens = defaultMaxTokens, true
	for _, lim := range []struct {
		name string
		v    *int
	}{{"max_new_tokens", r.MaxNewTokens}, {"max_completion_tokens", r.MaxCompletionTokens}, {"max_tokens", r.MaxTokens}} {
		if lim.v != nil {
			if err := wire.CheckMin(lim.name, lim.v, 1); err != nil {
				return formats.Request{}, err
			}
			out.MaxTokens, out.ClampMaxTokens = *lim.v, false
			break
		}
	}

	out.Reasoning = formats.Reasoning{Effort: defaultEffort, Summary: defaultSummary}
	if r.ReasoningEffort != "" {
		if out.Reasoning.Effort, err = wire.NormEffort("reasoning_effort", r.ReasoningEffort); err != nil {
			return formats.Request{}, err
		}
		out.Reasoning.Asked, out.Reasoning.EffortAsked = true, true
	}
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
		if r.Reasoning.Summary != "" {
			out.Reasoning.Summary = r.Reasoning.Summary
		}
	}

	if out.Verbosity, err = wire.CheckVerbosity("verbosity", r.Verbosity); err != nil {
		return formats.Request{}, err
	}
	out.Format = formats.Format{Type: "text"}
	if f := r.ResponseFormat; f != nil {
		switch f.Type {
		case "text":
		case "json", "json_object":
			out.Format.Type = "json"
		case "json_schema":
			if f.JSONSchema == nil {
				return formats.Request{}, formats.Missing("response_format.json_schema")
			}
			if err := wire.CheckToolName("response_format.json_schema.name", f.JSONSchema.Name); err != nil {
				return formats.Request{}, err
			}
			if err := wire.CheckSchema("response_format.json_schema.schema", f.JSONSchema.Schema); err != nil {
				return formats.Request{}, err
			}
			out.Format = formats.Format{Type: "json_schema", Name: f.JSONSchema.Name, Schema: f.JSONSchema.Schema,
				Strict: f.JSONSchema.Strict != nil && *f.JSONSchema.Strict}
		default:
			return formats.Request{}, formats.Invalid("response_format.type", "response_format.type must be text or json, got %q", f.Type)
		}
	}

	if err := (wire.Sampling{
		Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK, MinP: r.MinP, Seed: r.Seed,
		Frequency: r.FrequencyPenalty, Presence: r.PresencePenalty, Repetition: r.RepetitionPenalty,
		Stop: r.Stop, StopParam: "stop",
	}).Set(&out, defaultTemperature, defaultTopP); err != nil {
		return formats.Request{}, err
	}
	if r.N != nil {
		if *r.N < 1 || *r.N > inference.MaxChoices {
			return formats.Request{}, formats.Invalid("n", "n must be 1 to %d, got %d", inference.MaxChoices, *r.N)
		}
		if *r.N > 1 {
			out.Choices = *r.N
		}
	}
	if err := out.SetLogprobs(r.Logprobs, r.TopLogprobs, "top_logprobs"); err != nil {
		return formats.Request{}, err
	}
	if o := r.WebSearchOptions; o != nil {
		if out.Search, err = wire.SearchContextSize("web_search_options.search_context_size", o.SearchContextSize); err != nil {
			return formats.Request{}, err
		}
		// A search model searches before it answers.
		out.Search.Force = true
		if l := o.UserLocation; l != nil {
			if l.Type != "" && l.Type != "approximate" {
				return formats.Request{}, formats.Invalid("web_search_options.user_location.type", "web_search_options.user_location.type must be approximate, got %q", l.Type)
			}
			if out.Search.Location, err = wire.Location(l.Approximate, "web_search_options.user_location.approximate"); err != nil {
				return formats.Request{}, err
			}
		}
		if err := wire.CheckSearch("web_search_options", out.Search, strings.NewReplacer("location", "user_location.approximate")); err != nil {
			return formats.Request{}, err
		}
	}
	// OpenAI keeps a chat completion, and its metadata, only when store
	// asks; completions are not stored here, so both are refused rather
	// than accepted and dropped.
	if r.Store != nil && *r.Store {
		return formats.Request{}, formats.Invalid("store", "store true is not supported: chat completions are not stored; use the responses API (store) to keep a conversation")
	}
	if len(r.Metadata) > 0 {
		return formats.Request{}, formats.Invalid("metadata", "metadata is not supported: it is kept only with a stored completion, and chat completions are not stored")
	}
	out.Stream = r.Stream
	out.IncludeUsage = r.StreamOptions != nil && r.StreamOptions.IncludeUsage
	out.User = r.User
	return out, nil
}

// canonical checks one message and converts it.
func (m Message) canonical(path string) (inference.Message, error) {
	var out inference.Message
	switch m.Role {
	case "system", "developer":
		out.Role = inference.RoleSystem
	case "user":
		out.Role = inference.RoleUser
	case "assistant":
		out.Role = inference.RoleAssistant
	case "tool":
		out.Role = inference.RoleTool
		if m.ToolCallID == "" {
			return out, formats.Missing(path + ".tool_call_id")
		}
		out.ToolCallID = m.ToolCallID
	case "":
		return out, formats.Missing(path + ".role")
	default:
		return out, formats.Invalid(path+".role", "%s.role must be one of system, user, assistant (or developer, tool), got %q", path, m.Role)
	}
	if m.Content.err != nil {
		return out, wire.Prefixed(path+".content", m.Content.err)
	}
	if !m.Content.set && (out.Role != inference.RoleAssistant || len(m.ToolCalls) == 0) {
		return out, formats.Missing(path + ".content")
	}
	if m.Content.Parts == nil {
		if m.Content.set {
			out.Content = []inference.Part{{Text: m.Content.Text}}
		}
	}
	for j, p := range m.Content.Parts {
		pp := fmt.Sprintf("%s.content[%d]", path, j)
		switch p.Type {
		case "text":
			out.Content = append(out.Content, inference.Part{Text: p.Text})
		case "image_url":
			if p.ImageURL == nil {
				return out, formats.Missing(pp + ".image_url")
			}
			part, err := wire.ImagePart(pp+".image_url.url", p.ImageURL.URL)
			if err != nil {
				return out, err
			}
			out.Content = append(out.Content, part)
		case "":
			return out, formats.Missing(pp + ".type")
		default:
			return out, formats.Invalid(pp+".type", "%s.type must be text or image_url, got %q", pp, p.Type)
		}
	}
	if len(m.ToolCalls) > 0 && out.Role != inference.RoleAssistant {
		return out, formats.Invalid(path+".tool_calls", "%s.tool_calls: only assistant messages carry tool_calls", path)
	}
	for j, c := range m.ToolCalls {
		cp := fmt.Sprintf("%s.tool_calls[%d]", path, j)
		if c.Type != "" && c.Type != "function" {
			return out, formats.Invalid(cp+".type", "%s.type must be function", cp)
		}
		if err := wire.CheckToolName(cp+".function.name", c.Function.Name); err != nil {
			return out, err
		}
		out.ToolCalls = append(out.ToolCalls, inference.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	out.Name = m.Name
	if out.Role == inference.RoleAssistant {
		out.Reasoning = m.ReasoningContent
	}
	return out, nil
}

// tools checks and converts the tool definitions.
func tools(tools []Tool) ([]inference.Tool, error) {
	var out []inference.Tool
	for i, t := range tools {
		p := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return nil, formats.Invalid(p+".type", "%s.type must be function, got %q", p, t.Type)
		}
		if err := wire.CheckToolName(p+".function.name", t.Function.Name); err != nil {
			return nil, err
		}
		if err := wire.CheckSchema(p+".function.parameters", t.Function.Parameters); err != nil {
			return nil, err
		}
		out = append(out, inference.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: bytes.Clone(t.Function.Parameters)})
	}
	return out, nil
}

// toolChoice checks a tool choice against the tools.
func toolChoice(c *ToolChoice, tools []inference.Tool) (formats.ToolChoice, error) {
	if c == nil {
		return formats.ToolChoice{Mode: "auto"}, nil
	}
	return wire.CheckToolChoice("tool_choice", formats.ToolChoice(*c), tools)
}

// NewRequest returns the chat request of r. Instructions become the
// first system message; every value is written, defaults included, so the
// request means the same to a server with other defaults.
func NewRequest(r formats.Request) Request {
	out := Request{
		Model:        r.Model,
		Stream:       r.Stream,
		MaxNewTokens: wire.ExplicitMaxTokens(r),
		Temperature:  r.Temperature,
		TopP:         r.TopP,
		TopK:         r.TopK,
		MinP:         r.MinP,
		Seed:         r.Seed,
		Stop:         formats.Stop(slices.Clone(r.Stop)),
		User:         r.User,
		Verbosity:    r.Verbosity,
	}
	if r.IncludeUsage {
		out.StreamOptions = &StreamOptions{IncludeUsage: true}
	}
	if r.Choices > 1 {
		out.N = ptr(r.Choices)
	}
	if r.Logprobs {
		out.Logprobs = ptr(true)
		out.TopLogprobs = wire.NonZero(r.TopLogprobs)
	}
	if r.FrequencyPenalty != 0 {
		out.FrequencyPenalty = ptr(r.FrequencyPenalty)
	}
	if r.PresencePenalty != 0 {
		out.PresencePenalty = ptr(r.PresencePenalty)
	}
	if r.RepetitionPenalty != 0 {
		out.RepetitionPenalty = ptr(r.RepetitionPenalty)
	}
	if r.Reasoning != (formats.Reasoning{}) {
		out.Reasoning = &Reasoning{Effort: r.Reasoning.Effort, Summary: r.Reasoning.Summary}
	}
	switch r.Format.Type {
	case "json":
		out.ResponseFormat = &ResponseFormat{Type: "json"}
	case "json_schema":
		out.ResponseFormat = &ResponseFormat{Type: "json_schema", JSONSchema: &JSONSchema{
			Name: wire.OrName(r.Format.Name), Schema: r.Format.Schema, Strict: ptr(r.Format.Strict)}}
	case "text":
		out.ResponseFormat = &ResponseFormat{Type: "text"}
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, Tool{Type: "function", Function: Function{
			Name: t.Name, Description: t.Description, Parameters: json.RawMessage(t.Parameters)}})
	}
	if r.ToolChoice.Mode != "" {
		out.ToolChoice = &ToolChoice{Mode: r.ToolChoice.Mode, Name: r.ToolChoice.Name}
	}
	if r.OneToolCall {
		out.ParallelToolCalls = ptr(false)
	}
	if o := r.Search; o != nil {
		out.WebSearchOptions = &WebSearchOptions{SearchContextSize: wire.ContextSizeOf(o)}
		if l := wire.LocationOf(o.Location); l != nil {
			l.Type = ""
			out.WebSearchOptions.UserLocation = &UserLocation{Type: "approximate", Approximate: l}
		}
	}
	if r.Instructions != "" {
		out.Messages = append(out.Messages, Message{Role: "system", Content: Text(r.Instructions)})
	}
	for _, m := range r.Messages {
		out.Messages = append(out.Messages, newMessage(m))
	}
	return out
}

// newMessage converts one canonical message.
func newMessage(m inference.Message) Message {
	out := Message{Role: string(m.Role), Name: m.Name, ToolCallID: m.ToolCallID, ReasoningContent: m.Reasoning}
	if wire.HasImage(m.Content) {
		out.Content.set = true
		out.Content.Parts = []ContentPart{}
		for _, p := range m.Content {
			if p.Image != nil || p.URL != "" {
				out.Content.Parts = append(out.Content.Parts, ContentPart{Type: "image_url", ImageURL: &ImageURL{URL: wire.ImageURL(p)}})
			} else {
				out.Content.Parts = append(out.Content.Parts, ContentPart{Type: "text", Text: p.Text})
			}
		}
	} else {
		out.Content = Text(wire.JoinText(m.Content))
	}
	for _, c := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: c.ID, Type: "function", Function: FunctionCall{Name: c.Name, Arguments: c.Arguments}})
	}
	return out
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }
