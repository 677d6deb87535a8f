package upstream

import "encoding/json"

// The OpenAI-compatible chat completions API as a client sends it and
// reads it back: the subset that vLLM, SGLang, llama.cpp's server, Ollama
// and inferkit share. Extensions (top_k, min_p, repetition_penalty) are
// sent only when a request sets them.

// ChatRequest is the body of POST {base}/chat/completions.
type ChatRequest struct {
	Model             string          `json:"model"`
	Messages          []Message       `json:"messages"`
	Tools             []Tool          `json:"tools,omitzero"`
	ToolChoice        any             `json:"tool_choice,omitzero"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls,omitzero"`
	Stream            bool            `json:"stream"`
	StreamOptions     *StreamOptions  `json:"stream_options,omitzero"`
	MaxTokens         *int            `json:"max_tokens,omitzero"`
	Temperature       *float64        `json:"temperature,omitzero"`
	TopP              *float64        `json:"top_p,omitzero"`
	TopK              *int            `json:"top_k,omitzero"`
	MinP              *float64        `json:"min_p,omitzero"`
	Seed              *int64          `json:"seed,omitzero"`
	Stop              []string        `json:"stop,omitzero"`
	FrequencyPenalty  *float64        `json:"frequency_penalty,omitzero"`
	PresencePenalty   *float64        `json:"presence_penalty,omitzero"`
	RepetitionPenalty *float64        `json:"repetition_penalty,omitzero"`
	Logprobs          bool            `json:"logprobs,omitzero"`
	TopLogprobs       *int            `json:"top_logprobs,omitzero"`
	ResponseFormat    *ResponseFormat `json:"response_format,omitzero"`
	ReasoningEffort   string          `json:"reasoning_effort,omitzero"`
}

// StreamOptions asks for the usage chunk at the end of a stream.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Message is one message of a conversation. Content is a string, or a
// list of parts for a message with images.
type Message struct {
	Role             string     `json:"role"`
	Content          any        `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitzero"`
	ToolCalls        []ToolCall `json:"tool_calls,omitzero"`
	ToolCallID       string     `json:"tool_call_id,omitzero"`
	Name             string     `json:"name,omitzero"`
}

// Part is one part of a message's content list.
type Part struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitzero"`
	ImageURL *ImageURL `json:"image_url,omitzero"`
}

// ImageURL is an image part's image, a data: URL.
type ImageURL struct {
	URL string `json:"url"`
}

// Tool is a function the model may call.
type Tool struct {
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function describes a tool.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitzero"`
	Parameters  json.RawMessage `json:"parameters,omitzero"`
}

// ToolCall is a call an assistant message made.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is a tool call's function and its JSON arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ResponseFormat constrains the answer: json_object, or json_schema.
type ResponseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *JSONSchema `json:"json_schema,omitzero"`
}

// JSONSchema is a response_format's schema.
type JSONSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

// Chunk is one event of a streamed chat completion.
type Chunk struct {
	Choices []ChunkChoice `json:"choices"`
	Usage   *Usage        `json:"usage"`
	// Error is an in-stream error, as servers send it after a 200.
	Error *ErrorBody `json:"error"`
}

// ChunkChoice is one choice's part of a chunk.
type ChunkChoice struct {
	Index        int       `json:"index"`
	Delta        Delta     `json:"delta"`
	FinishReason string    `json:"finish_reason"`
	Logprobs     *Logprobs `json:"logprobs"`
	// StopReason is vLLM's: the stop string matched, when one was.
	StopReason any `json:"stop_reason"`
}

// Delta is what a chunk adds to a choice. Reasoning comes as
// reasoning_content (vLLM, llama.cpp, inferkit) or reasoning (Ollama).
type Delta struct {
	Content          string          `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
	ToolCalls        []ToolCallDelta `json:"tool_calls"`
}

// ToolCallDelta is a piece of a tool call: its id and name on the first,
// then pieces of its arguments, matched by Index.
type ToolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Logprobs are a chunk's answer tokens with their log-probabilities.
type Logprobs struct {
	Content []TokenLogprob `json:"content"`
}

// TokenLogprob is one token and its most likely alternatives.
type TokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []TopLogprob `json:"top_logprobs"`
}

// TopLogprob is one alternative at a position.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// Usage is the token counts of a completion.
type Usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// ErrorBody is an error as OpenAI-compatible servers write it: an object
// with a message, or (Ollama) a bare string.
type ErrorBody struct {
	Message string `json:"message"`
	Type    string `json:"type"`
}

// UnmarshalJSON reads an error object or a bare string.
func (e *ErrorBody) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		e.Message = s
		return nil
	}
	type plain ErrorBody
	return json.Unmarshal(b, (*plain)(e))
}
