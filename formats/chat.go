package formats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/inferkit/inferkit/inference"
)

// Chat defaults of the spec.
const (
	chatMaxTokens   = 2048
	chatEffort      = "high"
	chatSummary     = "none"
	chatTemperature = 0.1
	chatTopP        = 1.0
)

// ChatRequest is the body of POST /v1/chat/completions (and
// /v1/web/chat/completions). Beside the spec's fields it accepts what the
// OpenAI SDKs send: max_tokens and max_completion_tokens for
// max_new_tokens, reasoning_effort, verbosity, stop, seed, top_k,
// penalties, n (only 1), user, metadata, store and parallel_tool_calls.
// Unknown fields are ignored.
type ChatRequest struct {
	Model         string             `json:"model"`
	Messages      []ChatMessage      `json:"messages"`
	Stream        bool               `json:"stream,omitzero"`
	StreamOptions *ChatStreamOptions `json:"stream_options,omitzero"`

	Tools             []ChatTool      `json:"tools,omitzero"`
	ToolChoice        *ChatToolChoice `json:"tool_choice,omitzero"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls,omitzero"`

	// MaxNewTokens is the spec's name of the output limit; MaxTokens and
	// MaxCompletionTokens are the OpenAI names. The first set of the three,
	// in this order, applies; the default is 2048.
	MaxNewTokens        *int `json:"max_new_tokens,omitzero"`
	MaxCompletionTokens *int `json:"max_completion_tokens,omitzero"`
	MaxTokens           *int `json:"max_tokens,omitzero"`

	Reasoning       *ChatReasoning      `json:"reasoning,omitzero"`
	ReasoningEffort string              `json:"reasoning_effort,omitzero"`
	ResponseFormat  *ChatResponseFormat `json:"response_format,omitzero"`
	// Verbosity is low, medium or high, as the OpenAI SDKs send it; see
	// VerbosityInstruction.
	Verbosity string `json:"verbosity,omitzero"`

	Temperature       *float64 `json:"temperature,omitzero"`
	TopP              *float64 `json:"top_p,omitzero"`
	TopK              *int     `json:"top_k,omitzero"`
	MinP              *float64 `json:"min_p,omitzero"`
	Seed              *int64   `json:"seed,omitzero"`
	Stop              Stop     `json:"stop,omitzero"`
	FrequencyPenalty  *float64 `json:"frequency_penalty,omitzero"`
	PresencePenalty   *float64 `json:"presence_penalty,omitzero"`
	RepetitionPenalty *float64 `json:"repetition_penalty,omitzero"`
	N                 *int     `json:"n,omitzero"`
	// WebSearchOptions makes the model search the web before it answers,
	// as OpenAI's search models do (see inference.SearchOptions).
	WebSearchOptions *ChatWebSearchOptions `json:"web_search_options,omitzero"`
	Logprobs         *bool                 `json:"logprobs,omitzero"`
	TopLogprobs      *int                  `json:"top_logprobs,omitzero"`

	User     string            `json:"user,omitzero"`
	Metadata map[string]string `json:"metadata,omitzero"`
	Store    *bool             `json:"store,omitzero"`
}

// chatNames names the engine's fields as chat completions does (see ParamNames).
var chatNames = ParamNames{
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

// ChatStreamOptions are the options of a chat stream.
type ChatStreamOptions struct {
	// IncludeUsage adds a last chunk with empty choices and the usage.
	IncludeUsage bool `json:"include_usage,omitzero"`
}

// ChatReasoning is the spec's reasoning object of a chat request.
type ChatReasoning struct {
	// Effort is none, low, medium or high; default high.
	Effort string `json:"effort,omitzero"`
	// Summary is none or auto; default none. With auto, the reasoning text
	// is returned as message.reasoning_content.
	Summary string `json:"summary,omitzero"`
}

// ChatResponseFormat is the output format of a chat request: type text,
// json (the spec's name), json_object or json_schema (the OpenAI names).
type ChatResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *ChatJSONSchema `json:"json_schema,omitzero"`
}

// ChatJSONSchema is the schema of a json_schema response format.
type ChatJSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitzero"`
	Schema      json.RawMessage `json:"schema,omitzero"`
	Strict      *bool           `json:"strict,omitzero"`
}

// ChatMessage is one message of a chat request.
type ChatMessage struct {
	// Role is system, user or assistant (the spec's roles), or developer
	// and tool as the OpenAI SDKs send them.
	Role    string      `json:"role"`
	Content ChatContent `json:"content"`
	Name    string      `json:"name,omitzero"`
	// ToolCalls are the calls of an assistant message.
	ToolCalls []ChatToolCall `json:"tool_calls,omitzero"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitzero"`
	// ReasoningContent is an assistant message's reasoning.
	ReasoningContent string `json:"reasoning_content,omitzero"`
}

// ChatContent is a message's content: a string, or an array of parts when
// Parts is not nil.
type ChatContent struct {
	Text  string
	Parts []ChatContentPart

	set bool  // present and not null
	err error // a decoding error, reported with its path by validation
}

// ChatText returns the content holding the text s.
func ChatText(s string) ChatContent { return ChatContent{Text: s, set: true} }

// MarshalJSON writes the parts, or the text as a string.
func (c ChatContent) MarshalJSON() ([]byte, error) {
	if c.Parts != nil {
		return marshal(c.Parts)
	}
	return marshal(c.Text)
}

// UnmarshalJSON accepts a string, an array of parts or null.
func (c *ChatContent) UnmarshalJSON(data []byte) error {
	*c = ChatContent{}
	return decodeTextOrList(data, "string or array of content parts", &c.Text, &c.Parts, &c.set, &c.err)
}

// ChatContentPart is one part of an array content: type text (field
// text) or image_url (field image_url, a data: URL).
type ChatContentPart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitzero"`
	ImageURL *ChatImageURL `json:"image_url,omitzero"`
}

// ChatImageURL is the image of an image_url part.
type ChatImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitzero"`
}

// ChatTool is a tool definition: only type function.
type ChatTool struct {
	Type     string       `json:"type"`
	Function ChatFunction `json:"function"`
}

// ChatFunction is the function of a tool definition.
type ChatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitzero"`
	Parameters  json.RawMessage `json:"parameters,omitzero"`
	Strict      *bool           `json:"strict,omitzero"`
}

// ChatToolCall is a call of a function by the model.
type ChatToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function ChatFunctionCall `json:"function"`
}

// ChatFunctionCall is the function and JSON arguments of a tool call.
type ChatFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ChatWebSearchOptions is a chat request's web_search_options.
type ChatWebSearchOptions struct {
	// SearchContextSize is low, medium (the default) or high: how much
	// of each search the model reads.
	SearchContextSize string `json:"search_context_size,omitzero"`
	// UserLocation is {type: approximate, approximate: {city, country,
	// region, timezone}}.
	UserLocation *ChatUserLocation `json:"user_location,omitzero"`
}

// ChatUserLocation is web_search_options.user_location.
type ChatUserLocation struct {
	Type        string             `json:"type,omitzero"` // approximate
	Approximate *WebSearchLocation `json:"approximate,omitzero"`
}

// ChatToolChoice is the string none, auto or required, or the object
// {type:"function", function:{name}} when Mode is "function".
type ChatToolChoice struct {
	Mode string
	Name string
}

// MarshalJSON writes the string or the object.
func (c ChatToolChoice) MarshalJSON() ([]byte, error) {
	if c.Mode == "function" {
		return marshal(map[string]any{"type": "function", "function": map[string]string{"name": c.Name}})
	}
	return marshal(c.Mode)
}

// UnmarshalJSON reads the string or the object.
func (c *ChatToolChoice) UnmarshalJSON(data []byte) error {
	switch JSONKind(data) {
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
		if err := Decode(data, &o); err != nil {
			return prefixed("tool_choice", err)
		}
		*c = ChatToolChoice{Mode: o.Type, Name: o.Function.Name}
		return nil
	}
	return &json.UnmarshalTypeError{Value: JSONKind(data), Type: reflect.TypeFor[string]()}
}

// ParseChatRequest decodes, validates and converts a chat completion
// request body, with the spec's defaults filled in.
func ParseChatRequest(body []byte) (Request, error) {
	return parseRequest[ChatRequest](body)
}

// Canonical validates r and returns its canonical Request with the chat
// defaults: 2048 new tokens, effort high, summary none, temperature 0.1,
// top_p 1, format text, tool choice auto.
func (r *ChatRequest) Canonical() (Request, error) {
	out := Request{Request: inference.Request{Model: r.Model}}
	if r.Model == "" {
		return Request{}, Missing("model")
	}
	if r.Messages == nil {
		return Request{}, Missing("messages")
	}
	if len(r.Messages) == 0 {
		return Request{}, Invalid("messages", "messages must hold at least one message")
	}
	for i, m := range r.Messages {
		msg, err := m.canonical(fmt.Sprintf("messages[%d]", i))
		if err != nil {
			return Request{}, err
		}
		out.Messages = append(out.Messages, msg)
	}
	nameToolResults(out.Messages)
	tools, err := chatTools(r.Tools)
	if err != nil {
		return Request{}, err
	}
	out.Tools = tools
	if out.ToolChoice, err = chatToolChoice(r.ToolChoice, tools); err != nil {
		return Request{}, err
	}
	out.OneToolCall = r.ParallelToolCalls != nil && !*r.ParallelToolCalls

	out.MaxTokens, out.ClampMaxTokens = chatMaxTokens, true
	for _, lim := range []struct {
		name string
		v    *int
	}{{"max_new_tokens", r.MaxNewTokens}, {"max_completion_tokens", r.MaxCompletionTokens}, {"max_tokens", r.MaxTokens}} {
		if lim.v != nil {
			if err := checkMin(lim.name, lim.v, 1); err != nil {
				return Request{}, err
			}
			out.MaxTokens, out.ClampMaxTokens = *lim.v, false
			break
		}
	}

	out.Reasoning = Reasoning{Effort: chatEffort, Summary: chatSummary}
	if r.ReasoningEffort != "" {
		if out.Reasoning.Effort, err = normEffort("reasoning_effort", r.ReasoningEffort); err != nil {
			return Request{}, err
		}
		out.Reasoning.Asked, out.Reasoning.EffortAsked = true, true
	}
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
		if r.Reasoning.Summary != "" {
			out.Reasoning.Summary = r.Reasoning.Summary
		}
	}

	if out.Verbosity, err = checkVerbosity("verbosity", r.Verbosity); err != nil {
		return Request{}, err
	}
	out.Format = Format{Type: "text"}
	if f := r.ResponseFormat; f != nil {
		switch f.Type {
		case "text":
		case "json", "json_object":
			out.Format.Type = "json"
		case "json_schema":
			if f.JSONSchema == nil {
				return Request{}, Missing("response_format.json_schema")
			}
			if err := checkToolName("response_format.json_schema.name", f.JSONSchema.Name); err != nil {
				return Request{}, err
			}
			if err := checkSchema("response_format.json_schema.schema", f.JSONSchema.Schema); err != nil {
				return Request{}, err
			}
			out.Format = Format{Type: "json_schema", Name: f.JSONSchema.Name, Schema: f.JSONSchema.Schema,
				Strict: f.JSONSchema.Strict != nil && *f.JSONSchema.Strict}
		default:
			return Request{}, Invalid("response_format.type", "response_format.type must be text or json, got %q", f.Type)
		}
	}

	if err := (Sampling{
		Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK, MinP: r.MinP, Seed: r.Seed,
		Frequency: r.FrequencyPenalty, Presence: r.PresencePenalty, Repetition: r.RepetitionPenalty,
		Stop: r.Stop, StopParam: "stop",
	}).Set(&out, chatTemperature, chatTopP); err != nil {
		return Request{}, err
	}
	if r.N != nil {
		if *r.N < 1 || *r.N > inference.MaxChoices {
			return Request{}, Invalid("n", "n must be 1 to %d, got %d", inference.MaxChoices, *r.N)
		}
		if *r.N > 1 {
			out.Choices = *r.N
		}
	}
	if err := out.SetLogprobs(r.Logprobs, r.TopLogprobs, "top_logprobs"); err != nil {
		return Request{}, err
	}
	if o := r.WebSearchOptions; o != nil {
		if out.Search, err = searchContextSize("web_search_options.search_context_size", o.SearchContextSize); err != nil {
			return Request{}, err
		}
		// A search model searches before it answers.
		out.Search.Force = true
		if l := o.UserLocation; l != nil {
			if l.Type != "" && l.Type != "approximate" {
				return Request{}, Invalid("web_search_options.user_location.type", "web_search_options.user_location.type must be approximate, got %q", l.Type)
			}
			if out.Search.Location, err = l.Approximate.location("web_search_options.user_location.approximate"); err != nil {
				return Request{}, err
			}
		}
		if err := checkSearch("web_search_options", out.Search, strings.NewReplacer("location", "user_location.approximate")); err != nil {
			return Request{}, err
		}
	}
	if err := checkMetadata("metadata", r.Metadata); err != nil {
		return Request{}, err
	}
	out.Stream = r.Stream
	out.IncludeUsage = r.StreamOptions != nil && r.StreamOptions.IncludeUsage
	out.Metadata = r.Metadata
	out.User = r.User
	return out, nil
}

// Sampling holds the sampling parameters the styles share, as a request
// sent them (nil or empty when absent). Each style fills in those it
// has; the zero value sets only the defaults.
type Sampling struct {
	Temperature, TopP, MinP         *float64
	TopK                            *int
	Seed                            *int64
	Frequency, Presence, Repetition *float64
	Stop                            []string
	// StopParam is the style's name of Stop, such as "stop" or
	// "stop_sequences", for its errors.
	StopParam string
}

// Set validates p and sets the sampling fields of out, with the style's
// defaults of temperature and top_p. It fails with a *RequestError
// naming the parameter out of range.
func (p Sampling) Set(out *Request, temperature, topP float64) error {
	for _, c := range []error{
		checkRange("temperature", p.Temperature, 0, 2),
		checkRange("top_p", p.TopP, 0, 1),
		checkRange("min_p", p.MinP, 0, 1),
		checkMin("top_k", p.TopK, 0),
		checkRange("frequency_penalty", p.Frequency, -2, 2),
		checkRange("presence_penalty", p.Presence, -2, 2),
		checkRange("repetition_penalty", p.Repetition, 0, 2),
		checkStops(p.StopParam, p.Stop),
	} {
		if c != nil {
			return c
		}
	}
	out.Temperature = ptr(temperature)
	if p.Temperature != nil {
		out.Temperature = ptr(*p.Temperature)
	}
	out.TopP = ptr(topP)
	if p.TopP != nil {
		out.TopP = ptr(*p.TopP)
	}
	out.TopK, out.MinP, out.Seed = p.TopK, p.MinP, p.Seed
	if p.Frequency != nil {
		out.FrequencyPenalty = *p.Frequency
	}
	if p.Presence != nil {
		out.PresencePenalty = *p.Presence
	}
	if p.Repetition != nil {
		out.RepetitionPenalty = *p.Repetition
	}
	if len(p.Stop) > 0 {
		out.Stop = slices.Clone(p.Stop)
	}
	return nil
}

// canonical checks one message and converts it.
func (m ChatMessage) canonical(path string) (inference.Message, error) {
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
			return out, Missing(path + ".tool_call_id")
		}
		out.ToolCallID = m.ToolCallID
	case "":
		return out, Missing(path + ".role")
	default:
		return out, Invalid(path+".role", "%s.role must be one of system, user, assistant (or developer, tool), got %q", path, m.Role)
	}
	if m.Content.err != nil {
		return out, prefixed(path+".content", m.Content.err)
	}
	if !m.Content.set && (out.Role != inference.RoleAssistant || len(m.ToolCalls) == 0) {
		return out, Missing(path + ".content")
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
				return out, Missing(pp + ".image_url")
			}
			part, err := imagePart(pp+".image_url.url", p.ImageURL.URL)
			if err != nil {
				return out, err
			}
			out.Content = append(out.Content, part)
		case "":
			return out, Missing(pp + ".type")
		default:
			return out, Invalid(pp+".type", "%s.type must be text or image_url, got %q", pp, p.Type)
		}
	}
	if len(m.ToolCalls) > 0 && out.Role != inference.RoleAssistant {
		return out, Invalid(path+".tool_calls", "%s.tool_calls: only assistant messages carry tool_calls", path)
	}
	for j, c := range m.ToolCalls {
		cp := fmt.Sprintf("%s.tool_calls[%d]", path, j)
		if c.Type != "" && c.Type != "function" {
			return out, Invalid(cp+".type", "%s.type must be function", cp)
		}
		if err := checkToolName(cp+".function.name", c.Function.Name); err != nil {
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

// chatTools checks and converts the tool definitions.
func chatTools(tools []ChatTool) ([]inference.Tool, error) {
	var out []inference.Tool
	for i, t := range tools {
		p := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return nil, Invalid(p+".type", "%s.type must be function, got %q", p, t.Type)
		}
		if err := checkToolName(p+".function.name", t.Function.Name); err != nil {
			return nil, err
		}
		if err := checkSchema(p+".function.parameters", t.Function.Parameters); err != nil {
			return nil, err
		}
		out = append(out, inference.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: bytes.Clone(t.Function.Parameters)})
	}
	return out, nil
}

// chatToolChoice checks a tool choice against the tools.
func chatToolChoice(c *ChatToolChoice, tools []inference.Tool) (ToolChoice, error) {
	if c == nil {
		return ToolChoice{Mode: "auto"}, nil
	}
	return checkToolChoice("tool_choice", ToolChoice(*c), tools)
}

// checkToolChoice validates a canonical tool choice.
func checkToolChoice(param string, c ToolChoice, tools []inference.Tool) (ToolChoice, error) {
	switch c.Mode {
	case "none", "auto":
		return ToolChoice{Mode: c.Mode}, nil
	case "required":
		if len(tools) == 0 {
			return c, Invalid(param, "%s %q needs tools", param, c.Mode)
		}
		return ToolChoice{Mode: c.Mode}, nil
	case "function":
		if err := checkToolName(param+".name", c.Name); err != nil {
			return c, err
		}
		if !slices.ContainsFunc(tools, func(t inference.Tool) bool { return t.Name == c.Name }) {
			return c, Invalid(param, "%s names %q, which is not among the tools", param, c.Name)
		}
		return c, nil
	}
	return c, Invalid(param, "%s must be none, auto, required or a function, got %q", param, c.Mode)
}

// NewChatRequest returns the chat request of r. Instructions become the
// first system message; every value is written, defaults included, so the
// request means the same to a server with other defaults.
func NewChatRequest(r Request) ChatRequest {
	out := ChatRequest{
		Model:        r.Model,
		Stream:       r.Stream,
		MaxNewTokens: r.explicitMaxTokens(),
		Temperature:  r.Temperature,
		TopP:         r.TopP,
		TopK:         r.TopK,
		MinP:         r.MinP,
		Seed:         r.Seed,
		Stop:         Stop(slices.Clone(r.Stop)),
		User:         r.User,
		Metadata:     r.Metadata,
		Verbosity:    r.Verbosity,
	}
	if r.IncludeUsage {
		out.StreamOptions = &ChatStreamOptions{IncludeUsage: true}
	}
	if r.Choices > 1 {
		out.N = ptr(r.Choices)
	}
	if r.Logprobs {
		out.Logprobs = ptr(true)
		out.TopLogprobs = nonZero(r.TopLogprobs)
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
	if r.Reasoning != (Reasoning{}) {
		out.Reasoning = &ChatReasoning{Effort: r.Reasoning.Effort, Summary: r.Reasoning.Summary}
	}
	switch r.Format.Type {
	case "json":
		out.ResponseFormat = &ChatResponseFormat{Type: "json"}
	case "json_schema":
		out.ResponseFormat = &ChatResponseFormat{Type: "json_schema", JSONSchema: &ChatJSONSchema{
			Name: orName(r.Format.Name), Schema: r.Format.Schema, Strict: ptr(r.Format.Strict)}}
	case "text":
		out.ResponseFormat = &ChatResponseFormat{Type: "text"}
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, ChatTool{Type: "function", Function: ChatFunction{
			Name: t.Name, Description: t.Description, Parameters: json.RawMessage(t.Parameters)}})
	}
	if r.ToolChoice.Mode != "" {
		out.ToolChoice = &ChatToolChoice{Mode: r.ToolChoice.Mode, Name: r.ToolChoice.Name}
	}
	if r.OneToolCall {
		out.ParallelToolCalls = ptr(false)
	}
	if o := r.Search; o != nil {
		out.WebSearchOptions = &ChatWebSearchOptions{SearchContextSize: contextSizeOf(o)}
		if l := webSearchLocation(o.Location); l != nil {
			l.Type = ""
			out.WebSearchOptions.UserLocation = &ChatUserLocation{Type: "approximate", Approximate: l}
		}
	}
	if r.Instructions != "" {
		out.Messages = append(out.Messages, ChatMessage{Role: "system", Content: ChatText(r.Instructions)})
	}
	for _, m := range r.Messages {
		out.Messages = append(out.Messages, newChatMessage(m))
	}
	return out
}

// newChatMessage converts one canonical message.
func newChatMessage(m inference.Message) ChatMessage {
	out := ChatMessage{Role: string(m.Role), Name: m.Name, ToolCallID: m.ToolCallID, ReasoningContent: m.Reasoning}
	if hasImage(m.Content) {
		out.Content.set = true
		out.Content.Parts = []ChatContentPart{}
		for _, p := range m.Content {
			if p.Image != nil || p.URL != "" {
				out.Content.Parts = append(out.Content.Parts, ChatContentPart{Type: "image_url", ImageURL: &ChatImageURL{URL: imageURL(p)}})
			} else {
				out.Content.Parts = append(out.Content.Parts, ChatContentPart{Type: "text", Text: p.Text})
			}
		}
	} else {
		out.Content = ChatText(joinText(m.Content))
	}
	for _, c := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ChatToolCall{ID: c.ID, Type: "function", Function: ChatFunctionCall{Name: c.Name, Arguments: c.Arguments}})
	}
	return out
}

// hasImage reports whether any part is an image.
func hasImage(parts []inference.Part) bool {
	return slices.ContainsFunc(parts, func(p inference.Part) bool { return p.Image != nil || p.URL != "" })
}

// joinText joins the text of the parts.
func joinText(parts []inference.Part) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// nonZero returns a pointer to n, or nil for 0.
// explicitMaxTokens is the output limit to write on the wire: the
// caller's, or nil where the limit is the style's default.
func (r Request) explicitMaxTokens() *int {
	if r.ClampMaxTokens {
		return nil
	}
	return nonZero(r.MaxTokens)
}

func nonZero(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}
