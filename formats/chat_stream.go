package formats

import (
	"io"

	"github.com/inferkit/inferkit/inference"
)

// ChatCompletionChunk is one event of a chat completion stream.
type ChatCompletionChunk struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"` // chat.completion.chunk
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []ChatChunkChoice `json:"choices"`
	// Usage is set on the last chunk of a stream with include_usage.
	Usage *ChatUsage `json:"usage,omitzero"`
}

// ChatChunkChoice is the one choice of a chunk.
type ChatChunkChoice struct {
	Index int       `json:"index"`
	Delta ChatDelta `json:"delta"`
	// Logprobs is always null.
	Logprobs *struct{} `json:"logprobs"`
	// FinishReason is null until the last chunk.
	FinishReason *string `json:"finish_reason"`
	// MatchedStop is set on the last chunk: what ended the output.
	MatchedStop MatchedStop `json:"matched_stop,omitzero"`
}

// ChatDelta is the change a chunk brings: the role in the first, then text
// pieces and tool calls, then nothing in the last.
type ChatDelta struct {
	Role             string  `json:"role,omitzero"`
	Content          *string `json:"content,omitzero"`
	ReasoningContent string  `json:"reasoning_content,omitzero"`
	// ToolCalls holds one tool call's piece: its first chunk has the
	// index, id, type and function name with empty arguments; the next
	// has the index and the arguments.
	ToolCalls []ChatToolCallDelta `json:"tool_calls,omitzero"`
}

// ChatToolCallDelta is a piece of a streamed tool call, as OpenAI streams
// them: Index says which call of the message it belongs to.
type ChatToolCallDelta struct {
	Index    int                   `json:"index"`
	ID       string                `json:"id,omitzero"`
	Type     string                `json:"type,omitzero"`
	Function ChatFunctionCallDelta `json:"function"`
}

// ChatFunctionCallDelta is a piece of a streamed call's function: the
// name once, then fragments of the arguments.
type ChatFunctionCallDelta struct {
	Name      string `json:"name,omitzero"`
	Arguments string `json:"arguments"`
}

// ChatStream encodes inference events as a chat completion stream: a
// first chunk with the role, one chunk per text piece, two chunks per tool
// call (the call's index, id, type and name, then its arguments whole:
// the engine releases a call once it is complete), a last chunk with an
// empty delta and the finish reason (tool_calls when the model called
// tools), the usage chunk when asked, and data: [DONE]. A ChatStream is
// not safe for concurrent use.
type ChatStream struct {
	w       io.Writer
	req     Request
	id      string
	created int64
	started bool
	done    bool
	sent    progress
	calls   int // tool calls sent
}

// NewChatStream returns an encoder writing to w for req.
func NewChatStream(w io.Writer, req Request, o Options) *ChatStream {
	return &ChatStream{w: w, req: req, id: o.id("chatcmpl-"), created: o.now().Unix()}
}

// ID returns the completion's id.
func (s *ChatStream) ID() string { return s.id }

// chunk returns a chunk with one choice.
func (s *ChatStream) chunk(c ChatChunkChoice) ChatCompletionChunk {
	return ChatCompletionChunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.req.Model, Choices: []ChatChunkChoice{c}}
}

// Start writes the first chunk, with the role; Event calls it when needed.
func (s *ChatStream) Start() error {
	if s.started {
		return nil
	}
	s.started = true
	return writeJSONEvent(s.w, "", s.chunk(ChatChunkChoice{Delta: ChatDelta{Role: "assistant", Content: ptr("")}}))
}

// Event writes the chunks of one event. Reasoning pieces are sent as
// delta.reasoning_content only when the request's reasoning.summary is
// not none. The Final event sends what its result holds beyond the pieces
// before it, then the last chunk, the usage chunk when asked, and [DONE].
func (s *ChatStream) Event(ev inference.Event) error {
	if s.done {
		return nil
	}
	if err := s.Start(); err != nil {
		return err
	}
	reasoning, text, calls := s.sent.next(ev)
	if reasoning != "" && s.req.showReasoning() {
		if err := writeJSONEvent(s.w, "", s.chunk(ChatChunkChoice{Delta: ChatDelta{ReasoningContent: reasoning}})); err != nil {
			return err
		}
	}
	if text != "" {
		if err := writeJSONEvent(s.w, "", s.chunk(ChatChunkChoice{Delta: ChatDelta{Content: ptr(text)}})); err != nil {
			return err
		}
	}
	for _, c := range calls {
		head := ChatToolCallDelta{Index: s.calls, ID: c.ID, Type: "function", Function: ChatFunctionCallDelta{Name: c.Name}}
		args := ChatToolCallDelta{Index: s.calls, Function: ChatFunctionCallDelta{Arguments: c.Arguments}}
		s.calls++
		for _, d := range []ChatToolCallDelta{head, args} {
			if err := writeJSONEvent(s.w, "", s.chunk(ChatChunkChoice{Delta: ChatDelta{ToolCalls: []ChatToolCallDelta{d}}})); err != nil {
				return err
			}
		}
	}
	if ev.Final == nil {
		return nil
	}
	s.done = true
	finish, matched := chatFinish(*ev.Final)
	if err := writeJSONEvent(s.w, "", s.chunk(ChatChunkChoice{FinishReason: &finish, MatchedStop: matched})); err != nil {
		return err
	}
	if s.req.IncludeUsage {
		u := newChatUsage(ev.Final.Usage)
		c := ChatCompletionChunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.req.Model,
			Choices: []ChatChunkChoice{}, Usage: &u}
		if err := writeJSONEvent(s.w, "", c); err != nil {
			return err
		}
	}
	return writeDone(s.w)
}

// Fail writes err as the in-stream error data: {"error":{...}} and ends
// the stream; no [DONE] follows.
func (s *ChatStream) Fail(err error) error {
	if s.done {
		return nil
	}
	s.done = true
	return writeEvent(s.w, "", ErrorOf(err).Body(FamilyChat))
}
