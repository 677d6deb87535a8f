package formats

import (
	"encoding/json"
	"io"

	"github.com/inferkit/inferkit/inference"
)

// MessagesEvent is one event of a messages stream; Type says which fields
// it carries.
type MessagesEvent struct {
	Type string `json:"type"`
	// Message is the message of message_start, with empty content.
	Message *Message `json:"message,omitzero"`
	// Index is the block of content_block_start, _delta and _stop.
	Index *int `json:"index,omitzero"`
	// ContentBlock is the empty block of content_block_start.
	ContentBlock *MessagesBlock `json:"content_block,omitzero"`
	// Delta is a thinking_delta, signature_delta or text_delta of
	// content_block_delta, or the stop reason of message_delta.
	Delta *MessagesDelta `json:"delta,omitzero"`
	// Usage is the usage of message_delta.
	Usage *MessagesUsage `json:"usage,omitzero"`
}

// MessagesDelta is the delta of content_block_delta (Type set) or of
// message_delta (StopReason set).
type MessagesDelta struct {
	Type      string  `json:"type,omitzero"`
	Text      *string `json:"text,omitzero"`
	Thinking  *string `json:"thinking,omitzero"`
	Signature *string `json:"signature,omitzero"`
	// PartialJSON is a piece of a tool_use block's input, for
	// input_json_delta.
	PartialJSON  *string `json:"partial_json,omitzero"`
	StopReason   *string `json:"stop_reason,omitzero"`
	StopSequence *string `json:"stop_sequence,omitzero"`
}

// MarshalJSON writes a content block delta's fields, or for message_delta
// (no Type) the stop reason and the stop sequence, null when none.
func (d MessagesDelta) MarshalJSON() ([]byte, error) {
	if d.Type == "" {
		return marshal(struct {
			StopReason   *string `json:"stop_reason"`
			StopSequence *string `json:"stop_sequence"`
		}{d.StopReason, d.StopSequence})
	}
	type plain MessagesDelta
	return marshal(plain(d))
}

// MessagesStream encodes inference events as a messages stream, each event
// as `event: <type>` and `data: <json>`: message_start; a thinking block
// (content_block_start, thinking_delta pieces, a signature_delta,
// content_block_stop) when the model thinks; the text block likewise with
// text_delta pieces (none when the model only called tools); a tool_use
// block per tool call (content_block_start with its id, name and input
// {}, one input_json_delta holding the whole input, since the engine
// releases a call once it is complete, content_block_stop); message_delta
// with the stop reason (tool_use when the model called tools) and usage;
// message_stop; and the spec's closing `data: [DONE]`, under the event
// name "ping" (see messagesDoneEvent), so that every frame has an `event:`
// line and the Anthropic SDKs skip the sentinel. A MessagesStream is not
// safe for concurrent use.
type MessagesStream struct {
	// InputTokens, when set before the first event, is the prompt's token
	// count, which message_start reports as usage.input_tokens (the part
	// the prefix cache holds is not known yet); message_delta's usage
	// gives the final split into cache reads and writes (see
	// MessagesUsage).
	InputTokens int

	w        io.Writer
	req      Request
	id       string
	started  bool
	done     bool
	sent     progress
	index    int    // the next block's index
	open     string // the open block's type: "", "thinking" or "text"
	textDone bool   // a text block was opened
	called   bool   // a tool_use block was sent
}

// NewMessagesStream returns an encoder writing to w for req.
func NewMessagesStream(w io.Writer, req Request, o Options) *MessagesStream {
	return &MessagesStream{w: w, req: req, id: o.id("msg_")}
}

// ID returns the message's id.
func (s *MessagesStream) ID() string { return s.id }

// emit writes one event.
func (s *MessagesStream) emit(ev MessagesEvent) error {
	return writeJSONEvent(s.w, ev.Type, ev)
}

// Start writes message_start; Event calls it when needed.
func (s *MessagesStream) Start() error {
	if s.started {
		return nil
	}
	s.started = true
	return s.emit(MessagesEvent{Type: "message_start", Message: &Message{
		ID: s.id, Type: "message", Role: "assistant", Content: []MessagesBlock{}, Model: s.req.Model,
		Usage: MessagesUsage{InputTokens: s.InputTokens},
	}})
}

// openBlock closes the open block if it is of another type and opens one
// of type t.
func (s *MessagesStream) openBlock(t string) error {
	if s.open == t {
		return nil
	}
	if err := s.closeBlock(); err != nil {
		return err
	}
	block := MessagesBlock{Type: t}
	if t == "text" {
		s.textDone = true
	}
	s.open = t
	return s.emit(MessagesEvent{Type: "content_block_start", Index: ptr(s.index), ContentBlock: &block})
}

// closeBlock ends the open block; a thinking block gets its signature.
func (s *MessagesStream) closeBlock() error {
	if s.open == "" {
		return nil
	}
	if s.open == "thinking" {
		sig := signature(s.sent.reasoning.String())
		if err := s.emit(MessagesEvent{Type: "content_block_delta", Index: ptr(s.index),
			Delta: &MessagesDelta{Type: "signature_delta", Signature: &sig}}); err != nil {
			return err
		}
	}
	s.open = ""
	err := s.emit(MessagesEvent{Type: "content_block_stop", Index: ptr(s.index)})
	s.index++
	return err
}

// toolUse writes the block of one tool call.
func (s *MessagesStream) toolUse(c inference.ToolCall) error {
	if err := s.closeBlock(); err != nil {
		return err
	}
	s.called = true
	block := toolUseBlock(c)
	input := string(block.Input)
	block.Input = json.RawMessage("{}")
	if err := s.emit(MessagesEvent{Type: "content_block_start", Index: ptr(s.index), ContentBlock: &block}); err != nil {
		return err
	}
	if err := s.emit(MessagesEvent{Type: "content_block_delta", Index: ptr(s.index),
		Delta: &MessagesDelta{Type: "input_json_delta", PartialJSON: &input}}); err != nil {
		return err
	}
	err := s.emit(MessagesEvent{Type: "content_block_stop", Index: ptr(s.index)})
	s.index++
	return err
}

// Event writes the events of one inference event. The Final event sends
// what its result holds beyond the pieces before it, closes the blocks (an
// empty text block when no text came) and ends the stream.
func (s *MessagesStream) Event(ev inference.Event) error {
	if s.done {
		return nil
	}
	if err := s.Start(); err != nil {
		return err
	}
	reasoning, text, calls, _ := s.sent.next(ev)
	if reasoning != "" && !s.textDone {
		if err := s.openBlock("thinking"); err != nil {
			return err
		}
		if err := s.emit(MessagesEvent{Type: "content_block_delta", Index: ptr(s.index),
			Delta: &MessagesDelta{Type: "thinking_delta", Thinking: &reasoning}}); err != nil {
			return err
		}
	}
	if text != "" || (ev.Final != nil && !s.textDone && !s.called && len(calls) == 0) {
		if err := s.openBlock("text"); err != nil {
			return err
		}
	}
	if text != "" {
		if err := s.emit(MessagesEvent{Type: "content_block_delta", Index: ptr(s.index),
			Delta: &MessagesDelta{Type: "text_delta", Text: &text}}); err != nil {
			return err
		}
	}
	for _, c := range calls {
		if err := s.toolUse(c); err != nil {
			return err
		}
	}
	if ev.Final == nil {
		return nil
	}
	s.done = true
	if err := s.closeBlock(); err != nil {
		return err
	}
	stop, seq := messagesStop(*ev.Final)
	u := newMessagesUsage(ev.Final.Usage)
	delta := &MessagesDelta{StopReason: stop, StopSequence: seq}
	if err := s.emit(MessagesEvent{Type: "message_delta", Delta: delta, Usage: &u}); err != nil {
		return err
	}
	if err := s.emit(MessagesEvent{Type: "message_stop"}); err != nil {
		return err
	}
	return writeNamedDone(s.w, messagesDoneEvent)
}

// Fail writes err as an `event: error` with the messages error body and
// ends the stream.
func (s *MessagesStream) Fail(err error) error {
	if s.done {
		return nil
	}
	s.done = true
	return writeEvent(s.w, "error", ErrorOf(err).Body(FamilyMessages))
}
