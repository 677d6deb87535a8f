package chat

import (
	"encoding/json"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
)

// Completion is the response of a chat completion request.
type Completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"` // chat.completion
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   Usage    `json:"usage"`
}

// Choice is one choice of a completion.
type Choice struct {
	Index   int               `json:"index"`
	Message CompletionMessage `json:"message"`
	// Logprobs are the answer's tokens, when the request asked for them;
	// else null.
	Logprobs *Logprobs `json:"logprobs"`
	// FinishReason is stop, length (a stop sequence is stop) or
	// tool_calls.
	FinishReason string `json:"finish_reason"`
	// MatchedStop is what ended the output: the end-of-turn token's id, the
	// stop sequence, or null.
	MatchedStop MatchedStop `json:"matched_stop"`
}

// CompletionMessage is the assistant message of a choice.
type CompletionMessage struct {
	Role    string `json:"role"` // assistant
	Content string `json:"content"`
	// ReasoningContent is the summary of the reasoning, present when the
	// request's reasoning.summary is not none.
	ReasoningContent string `json:"reasoning_content,omitzero"`
	// Refusal is always null.
	Refusal *string `json:"refusal"`
	// ToolCalls is null when the model called no tool.
	ToolCalls []ToolCall `json:"tool_calls"`
	// Annotations are the url_citation annotations of the search
	// results the answer cites (web_search_options), else absent.
	Annotations []Annotation `json:"annotations,omitzero"`
}

// Annotation is a url_citation: the span of the content, in
// characters, that cites a search result.
type Annotation struct {
	Type        string      `json:"type"` // url_citation
	URLCitation URLCitation `json:"url_citation"`
}

// URLCitation is what a url_citation cites and where.
type URLCitation struct {
	StartIndex int    `json:"start_index"`
	EndIndex   int    `json:"end_index"`
	URL        string `json:"url"`
	Title      string `json:"title"`
}

// annotations returns the annotations of citations over text (the
// answer, or the part of it streamed so far).
func annotations(text string, cites []inference.Citation) []Annotation {
	var out []Annotation
	for _, c := range cites {
		if start, end, ok := wire.CitedSpan(c, text, 0); ok {
			out = append(out, Annotation{Type: "url_citation", URLCitation: URLCitation{
				StartIndex: start, EndIndex: end, URL: c.URL, Title: c.Title}})
		}
	}
	return out
}

// Usage counts the tokens of a completion. The details are always
// present, 0 when nothing was cached or no reasoning was done.
type Usage struct {
	PromptTokens            int               `json:"prompt_tokens"`
	CompletionTokens        int               `json:"completion_tokens"`
	TotalTokens             int               `json:"total_tokens"`
	PromptTokensDetails     PromptDetails     `json:"prompt_tokens_details"`
	CompletionTokensDetails CompletionDetails `json:"completion_tokens_details"`
}

// PromptDetails splits the prompt tokens.
type PromptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// CompletionDetails splits the completion tokens.
type CompletionDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// newUsage converts the engine's usage.
func newUsage(u inference.Usage) Usage {
	return Usage{
		PromptTokens:            u.PromptTokens,
		CompletionTokens:        u.CompletionTokens,
		TotalTokens:             u.PromptTokens + u.CompletionTokens,
		PromptTokensDetails:     PromptDetails{CachedTokens: u.CachedTokens},
		CompletionTokensDetails: CompletionDetails{ReasoningTokens: u.ReasoningTokens},
	}
}

// MatchedStop is what ended a choice, as SGLang-style servers report it
// (the spec observed an integer): the id of the end-of-turn token when the
// model ended its turn, the matched string when a stop sequence ended it,
// and null when the output ran out of tokens. The zero value is null.
type MatchedStop struct {
	Token    *int
	Sequence *string
}

// MarshalJSON writes an integer, a string or null.
func (m MatchedStop) MarshalJSON() ([]byte, error) {
	switch {
	case m.Sequence != nil:
		return json.Marshal(*m.Sequence)
	case m.Token != nil:
		return json.Marshal(*m.Token)
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads an integer, a string or null.
func (m *MatchedStop) UnmarshalJSON(b []byte) error {
	*m = MatchedStop{}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case string:
		m.Sequence = &v
	case float64:
		n := int(v)
		m.Token = &n
	}
	return nil
}

// IsZero reports whether m is null, for omitzero.
func (m MatchedStop) IsZero() bool { return m.Token == nil && m.Sequence == nil }

// finish returns the finish reason and matched stop of a result.
func finish(res inference.Result) (string, MatchedStop) {
	switch res.FinishReason {
	case inference.FinishLength:
		return "length", MatchedStop{}
	case inference.FinishStopSequence:
		return "stop", MatchedStop{Sequence: ptr(res.StopSequence)}
	case inference.FinishToolCalls:
		return "tool_calls", MatchedStop{Token: ptr(res.StopToken)}
	}
	return "stop", MatchedStop{Token: ptr(res.StopToken)}
}

// toolCalls converts the engine's tool calls.
func toolCalls(calls []inference.ToolCall) []ToolCall {
	var out []ToolCall
	for _, c := range calls {
		out = append(out, ToolCall{ID: c.ID, Type: "function", Function: FunctionCall{Name: c.Name, Arguments: c.Arguments}})
	}
	return out
}

// showReasoning reports whether a chat response carries the summary of
// the reasoning (reasoning_content).
func showReasoning(r formats.Request) bool {
	return r.Reasoning.SummaryLevel() != inference.SummaryNone
}

// NewCompletion returns the chat completion whose choices are results,
// in order, answering req, with a fresh chatcmpl- id. The usage counts the
// prompt once (inference.ChoicesUsage).
func NewCompletion(req formats.Request, results []inference.Result, o formats.Options) Completion {
	c := Completion{
		ID:      o.ID("chatcmpl-"),
		Object:  "chat.completion",
		Created: o.Time().Unix(),
		Model:   req.Model,
		Choices: make([]Choice, len(results)),
		Usage:   newUsage(inference.ChoicesUsage(results, len(results))),
	}
	for i, res := range results {
		finish, matched := finish(res)
		msg := CompletionMessage{Role: "assistant", Content: res.Text, ToolCalls: toolCalls(res.ToolCalls), Annotations: annotations(res.Text, res.Citations)}
		if showReasoning(req) {
			msg.ReasoningContent = res.Summary
		}
		c.Choices[i] = Choice{Index: i, Message: msg, Logprobs: logprobsOf(req, res.Logprobs), FinishReason: finish, MatchedStop: matched}
	}
	return c
}

// Result returns the engine result that c carries: the first choice's text
// and reasoning, finish reason and usage. Timings are zero.
func (c Completion) Result() inference.Result {
	var res inference.Result
	if len(c.Choices) > 0 {
		ch := c.Choices[0]
		res.Text = ch.Message.Content
		res.Summary = ch.Message.ReasoningContent
		for _, tc := range ch.Message.ToolCalls {
			res.ToolCalls = append(res.ToolCalls, inference.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		switch {
		case ch.FinishReason == "length":
			res.FinishReason = inference.FinishLength
		case ch.MatchedStop.Sequence != nil:
			res.FinishReason = inference.FinishStopSequence
			res.StopSequence = *ch.MatchedStop.Sequence
		default:
			res.FinishReason = inference.FinishStop
			if ch.FinishReason == "tool_calls" {
				res.FinishReason = inference.FinishToolCalls
			}
			if ch.MatchedStop.Token != nil {
				res.StopToken = *ch.MatchedStop.Token
			}
		}
	}
	res.Usage = inference.Usage{
		PromptTokens:     c.Usage.PromptTokens,
		CachedTokens:     c.Usage.PromptTokensDetails.CachedTokens,
		CompletionTokens: c.Usage.CompletionTokens,
		ReasoningTokens:  c.Usage.CompletionTokensDetails.ReasoningTokens,
	}
	return res
}
