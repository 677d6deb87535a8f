package inference

// Role is the author of a message.
type Role string

// The roles a conversation may hold.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Part is one piece of a message's content: text, or an image for models
// that read images.
type Part struct {
	Text string
	// Image is an encoded image (PNG, JPEG) for multimodal models.
	Image []byte
	// URL is where an image is, as a request named it (http or https),
	// for a server to fetch into Image: the engine reads Image only, and
	// refuses a part with a URL and no Image.
	URL string
}

// Message is one turn of a conversation.
type Message struct {
	Role    Role
	Content []Part
	// Reasoning is an assistant turn's thinking, for templates that render
	// it.
	Reasoning string
	// ToolCalls are the calls an assistant turn made.
	ToolCalls []ToolCall
	// ToolCallID names the call a tool message answers.
	ToolCallID string
	// Name is the tool's name on a tool message.
	Name string
}

// Text returns a message of role r holding the text s.
func Text(r Role, s string) Message { return Message{Role: r, Content: []Part{{Text: s}}} }

// ToolCall is a call of a tool by the model.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is a JSON object.
	Arguments string
}

// Tool is a function the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is a JSON Schema object, as JSON.
	Parameters []byte
}

// Request asks a model for a completion. Either Messages, rendered with the
// model's chat template, or Prompt, tokenized as it is, must be set.
//
// The zero values of the sampling fields follow llama.cpp: temperature 0.8,
// top_k 40, top_p 0.95, min_p 0.05, no penalties, a random seed.
type Request struct {
	// Model is a model id or alias of the engine's configuration.
	Model string
	// Messages is the conversation, rendered with the chat template.
	Messages []Message
	// Tools are rendered into the prompt through the chat template, and
	// the model's calls of them come back as ToolCalls.
	Tools []Tool
	// ToolChoice says whether and which tools the model must call.
	ToolChoice ToolChoice
	// Prompt is raw text, used when Messages is empty. Special-token text in
	// it (such as <|im_start|>) becomes those tokens, except inside the
	// marks of Literal: wrap text from elsewhere in Literal.
	Prompt string

	// MaxTokens bounds the tokens generated; 0 means up to the end of the
	// sequence's context. A prompt and MaxTokens that do not fit in the
	// context fail with ErrContextLength before any work, unless
	// ClampMaxTokens is set.
	MaxTokens int
	// ClampMaxTokens lowers MaxTokens to what the context has room for
	// after the prompt, for limits that are a default rather than the
	// caller's request.
	ClampMaxTokens bool
	// Stop ends generation at the first of these strings, which is not
	// part of the output.
	Stop []string

	Temperature *float64 // 0 is greedy
	TopP        *float64
	TopK        *int
	MinP        *float64
	Seed        *int64

	// Speculative says whether the engine may draft tokens for the model
	// to verify (speculative decoding, Config.Draft): nil drafts where
	// the model has a drafter, false never, and true is nil's, failing
	// with a FieldError naming it on a model without a drafter. Drafting
	// changes no output, only the time it takes.
	Speculative *bool

	RepetitionPenalty float64 // 0 or 1: off
	FrequencyPenalty  float64
	PresencePenalty   float64

	// Format constrains the answer; nil is free text. With a model that
	// thinks, it applies after the thinking section.
	Format *Format
	// NoThinking switches a thinking model's thinking off: through the
	// chat template's switch (its family's, such as enable_thinking),
	// and by closing a thinking section as soon as it opens. On a model
	// that does not think (ModelInfo.Family says none or a family
	// without thinking) there is nothing to switch off.
	NoThinking bool
	// ThinkingBudget bounds the tokens spent thinking: when they are
	// spent, the engine closes the thinking section and the model
	// answers. 0 is no bound. It must be below the output limit, so that
	// the answer has room (a FieldError naming it otherwise); a default a
	// wire format filled in (ThinkingDefaults) is cut to three quarters
	// of the output limit instead. A budget on a model that does not
	// think fails with a FieldError naming it, unless ThinkingDefaults.
	ThinkingBudget int
	// Effort is how much the model is asked to think: "low", "medium"
	// or "high", passed to the chat template through its family's
	// switch (gpt-oss's reasoning_effort); "" is the family's default. A
	// family without such a switch ignores it: ThinkingBudget bounds the
	// thinking of every family. Another value fails with a FieldError
	// naming it, and so does an effort on a model that does not think,
	// unless ThinkingDefaults.
	Effort string
	// ThinkingDefaults says that NoThinking, ThinkingBudget and Effort
	// are the defaults a wire format filled in, not what the caller
	// asked for: on a model that does not think, the budget and the
	// effort are dropped rather than refused.
	ThinkingDefaults bool

	// Logprobs returns, with every token of the answer (not the thinking,
	// not the end-of-turn token), its log-probability and the
	// TopLogprobs most likely tokens at its position: Event.Logprobs as
	// the tokens are generated, Result.Logprobs all of them.
	Logprobs bool
	// TopLogprobs is how many of the most likely tokens each entry lists,
	// 0 to MaxTopLogprobs. It needs Logprobs.
	TopLogprobs int
	// Summary asks for a summary of the model's thinking: once the
	// thinking ends, a short greedy generation over it, at most
	// MaxSummaryTokens(Summary) tokens, whose pieces come as
	// Event.Summary before the answer's and whole in Result.Summary. Its
	// tokens count in the result's usage (prompt and generated, the
	// generated as reasoning). No thinking, no summary.
	Summary SummaryLevel
	// PromptLogprobs returns, in Result.PromptLogprobs, every prompt
	// token with its log-probability given the tokens before it, and
	// TopLogprobs alternatives: how evaluation harnesses score a text.
	// The prompt is then decoded whole, none of it from the cache, and
	// it may not hold images.
	PromptLogprobs bool
	// PromptOnly decodes the prompt and generates nothing: for
	// PromptLogprobs. The result's FinishReason is FinishLength.
	PromptOnly bool
	// Choices is the number of independent completions of the prompt, 1
	// to MaxChoices; 0 means 1. They run as sequences that share the
	// prompt's KV cells, each with its own sampler: with a Seed, choice i
	// samples with Seed+i. Stream yields the events of every choice,
	// each with its Choice index, and ends after the last choice's
	// Final; Generate takes one choice only.
	Choices int

	// Search lets the model search the web through the engine's
	// Config.Search while it answers, and cite what it read: see
	// SearchOptions. nil: no search.
	Search *SearchOptions
	// MCP lets the model call the tools of MCP servers, which the
	// engine runs between turns: see MCPOptions. nil: none.
	MCP *MCPOptions

	// IgnoreEOS never samples the model's end-of-turn tokens, so that
	// generation runs to MaxTokens: for benchmarks and tests.
	IgnoreEOS bool
}

// Format constrains what a model may write. Set one field.
type Format struct {
	// JSON asks for a JSON object.
	JSON bool
	// Schema asks for JSON that validates against this JSON Schema.
	Schema []byte
	// Grammar asks for text of this GBNF grammar, whose start rule is
	// root.
	Grammar string
}

// hasImages reports whether a message of the request holds an image.
func (r Request) hasImages() bool {
	for _, m := range r.Messages {
		for _, p := range m.Content {
			if p.Image != nil || p.URL != "" {
				return true
			}
		}
	}
	return false
}
