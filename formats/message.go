package formats

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/inferkit/inferkit/inference"
)

// Message is the response of a messages request.
type Message struct {
	ID   string `json:"id"`
	Type string `json:"type"` // message
	Role string `json:"role"` // assistant
	// Content is a thinking block when the model thought, then the text
	// block (left out when the model only called tools), then a tool_use
	// block per tool call.
	Content []MessagesBlock `json:"content"`
	Model   string          `json:"model"`
	// StopReason is end_turn, stop_sequence, max_tokens or tool_use; null
	// in message_start.
	StopReason *string `json:"stop_reason"`
	// StopSequence is the stop sequence that ended the output, or null.
	StopSequence *string       `json:"stop_sequence"`
	Usage        MessagesUsage `json:"usage"`
}

// MessagesUsage counts the tokens of a message. As in the Anthropic API,
// the whole prompt is input_tokens + cache_creation_input_tokens +
// cache_read_input_tokens, each prompt token counted once:
// cache_read_input_tokens are the tokens read from the prefix cache
// (inference.Usage.CachedTokens), and cache_creation_input_tokens the rest,
// since the engine decodes every other prompt token into a slot's KV cache,
// where the next request with the same prefix reads it (the spec: "tokens
// used to create the cache"). No prompt token is neither read from nor
// written to the cache, so input_tokens, Anthropic's tokens after the last
// cache breakpoint, is 0 in a finished message. message_start, sent
// before the prompt is decoded, cannot split it yet: it counts the whole
// prompt as input_tokens, and message_delta's usage, the whole message's
// total that the SDKs' accumulators take in its place, gives the split.
type MessagesUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// newMessagesUsage converts the engine's usage of a finished request.
func newMessagesUsage(u inference.Usage) MessagesUsage {
	return MessagesUsage{
		OutputTokens:             u.CompletionTokens,
		CacheCreationInputTokens: u.PromptTokens - u.CachedTokens,
		CacheReadInputTokens:     u.CachedTokens,
	}
}

// messagesStop returns the stop reason and stop sequence of a result.
func messagesStop(res inference.Result) (*string, *string) {
	switch res.FinishReason {
	case inference.FinishLength:
		return ptr("max_tokens"), nil
	case inference.FinishStopSequence:
		return ptr("stop_sequence"), ptr(res.StopSequence)
	case inference.FinishToolCalls:
		return ptr("tool_use"), nil
	}
	return ptr("end_turn"), nil
}

// toolUseBlock returns the tool_use block of a call.
func toolUseBlock(c inference.ToolCall) MessagesBlock {
	input := json.RawMessage(c.Arguments)
	if !json.Valid(input) {
		// The engine's calls hold JSON; a call given back with other
		// arguments keeps them as a string rather than break the body.
		input, _ = json.Marshal(c.Arguments)
	}
	return MessagesBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: input}
}

// signature returns the signature of a thinking block: an opaque,
// deterministic digest of its text. The Anthropic SDKs require the field
// and send it back with the block; the server does not check it.
func signature(thinking string) string {
	sum := sha256.Sum256([]byte(thinking))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// thinkingLatency is the time the model spent thinking, in milliseconds.
func thinkingLatency(res inference.Result) int64 {
	return res.Timings.Thinking.Milliseconds()
}

// NewMessage returns the message of res answering req, with a fresh msg_
// id. A thinking block comes first when there is reasoning.
func NewMessage(req Request, res inference.Result, o Options) Message {
	stop, seq := messagesStop(res)
	m := Message{
		ID: o.id("msg_"), Type: "message", Role: "assistant", Model: req.Model,
		Content:    []MessagesBlock{},
		StopReason: stop, StopSequence: seq,
		Usage: newMessagesUsage(res.Usage),
	}
	if res.Reasoning != "" {
		m.Content = append(m.Content, MessagesBlock{Type: "thinking", Thinking: res.Reasoning,
			Signature: signature(res.Reasoning), ThinkingLatencyMS: ptr(thinkingLatency(res))})
	}
	if res.Text != "" || len(res.ToolCalls) == 0 {
		m.Content = append(m.Content, MessagesBlock{Type: "text", Text: res.Text})
	}
	for _, c := range res.ToolCalls {
		m.Content = append(m.Content, toolUseBlock(c))
	}
	return m
}

// Result returns the engine result that m carries. Timings are zero.
func (m Message) Result() inference.Result {
	var res inference.Result
	var text, thinking strings.Builder
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			thinking.WriteString(b.Thinking)
		case "tool_use":
			res.ToolCalls = append(res.ToolCalls, inference.ToolCall{ID: b.ID, Name: b.Name, Arguments: toolArguments(b.Input)})
		}
	}
	res.Text, res.Reasoning = text.String(), thinking.String()
	res.FinishReason = inference.FinishStop
	if m.StopReason != nil {
		switch *m.StopReason {
		case "tool_use":
			res.FinishReason = inference.FinishToolCalls
		case "max_tokens":
			res.FinishReason = inference.FinishLength
		case "stop_sequence":
			res.FinishReason = inference.FinishStopSequence
			if m.StopSequence != nil {
				res.StopSequence = *m.StopSequence
			}
		}
	}
	u := m.Usage
	res.Usage = inference.Usage{
		PromptTokens:     u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		CachedTokens:     u.CacheReadInputTokens,
		CompletionTokens: u.OutputTokens,
	}
	return res
}

// toolArguments returns a tool_use block's input as compact JSON text;
// absent or null input is {}.
func toolArguments(input json.RawMessage) string {
	var b bytes.Buffer
	if s := bytes.TrimSpace(input); len(s) == 0 || string(s) == "null" || json.Compact(&b, s) != nil {
		return "{}"
	}
	return b.String()
}
