package messages

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
)

// Event is one event of a messages stream; Type says which fields
// it carries.
type Event struct {
	Type string `json:"type"`
	// Message is the message of message_start, with empty content.
	Message *Message `json:"message,omitzero"`
	// Index is the block of content_block_start, _delta and _stop.
	Index *int `json:"index,omitzero"`
	// ContentBlock is the block of content_block_start: empty, but for a
	// web_search_tool_result, which comes whole.
	ContentBlock *Block `json:"content_block,omitzero"`
	// Delta is a thinking_delta, signature_delta, text_delta,
	// input_json_delta or citations_delta of content_block_delta, or the
	// stop reason of message_delta.
	Delta *Delta `json:"delta,omitzero"`
	// Usage is the usage of message_delta.
	Usage *Usage `json:"usage,omitzero"`
}

// Delta is the delta of content_block_delta (Type set) or of
// message_delta (StopReason set).
type Delta struct {
	Type      string  `json:"type,omitzero"`
	Text      *string `json:"text,omitzero"`
	Thinking  *string `json:"thinking,omitzero"`
	Signature *string `json:"signature,omitzero"`
	// PartialJSON is a piece of a tool_use block's input, for
	// input_json_delta.
	PartialJSON *string `json:"partial_json,omitzero"`
	// Citation is a citation of the open text block, for
	// citations_delta.
	Citation     *Citation `json:"citation,omitzero"`
	StopReason   *string   `json:"stop_reason,omitzero"`
	StopSequence *string   `json:"stop_sequence,omitzero"`
}

// MarshalJSON writes a content block delta's fields, or for message_delta
// (no Type) the stop reason and the stop sequence, null when none.
func (d Delta) MarshalJSON() ([]byte, error) {
	if d.Type == "" {
		return formats.Marshal(struct {
			StopReason   *string `json:"stop_reason"`
			StopSequence *string `json:"stop_sequence"`
		}{d.StopReason, d.StopSequence})
	}
	type plain Delta
	return formats.Marshal(plain(d))
}

// Stream encodes inference events as a messages stream, each event
// as `event: <type>` and `data: <json>`: message_start; a thinking block
// (content_block_start, thinking_delta pieces, a signature_delta,
// content_block_stop) when the model thinks; the text block likewise with
// text_delta pieces (none when the model only called tools); a tool_use
// block per tool call (content_block_start with its id, name and input
// {}, one input_json_delta holding the whole input, since the engine
// releases a call once it is complete, content_block_stop); message_delta
// with the stop reason (tool_use when the model called tools) and usage;
// message_stop; and the spec's closing `data: [DONE]`, under the event
// name "ping" (see doneEvent), so that every frame has an `event:`
// line and the Anthropic SDKs skip the sentinel.
//
// The answer of a request that searches (Request.Search) comes in more
// blocks, which NewMessage writes alike. When a search starts, the open
// text block ends and a server_tool_use block holds its query
// (content_block_start with input {}, one input_json_delta); when it
// ends, a web_search_tool_result block holds its results, whole in its
// content_block_start. Text after it opens a new text block. A
// citation ends the span of text it follows (inference.Citation): it
// comes as a citations_delta of the open text block, which then ends, so
// that each cited span is a block of its own. The spaces and punctuation
// after a citation or a search, which no span starts with, wait and
// become a text block of their own before the next text. The thinking
// of the turns after a search comes in thinking blocks after its blocks
// (NewMessage has the whole thinking in its one thinking block), and
// message_delta's usage counts the searches (server_tool_use).
//
// A request with MCP servers (mcp_servers) writes each call of their
// tools as an mcp_tool_use block when it starts (like a tool_use block,
// with the server's name), which ends the open text block, and an
// mcp_tool_result block, whole in its content_block_start, when it ends;
// the text after it opens a new text block.
//
// A Stream is not safe for concurrent use.
type Stream struct {
	// InputTokens, when set before the first event, is the prompt's token
	// count, which message_start reports as usage.input_tokens (the part
	// the prefix cache holds is not known yet); message_delta's usage
	// gives the final split into cache reads and writes (see
	// Usage).
	InputTokens int

	w        io.Writer
	req      formats.Request
	id       string
	started  bool
	done     bool
	sent     wire.Progress
	index    int    // the next block's index
	open     string // the open block's type: "", "thinking" or "text"
	textDone bool   // a text block was opened
	called   bool   // a tool_use block was sent
	thought  int    // where the open thinking block's thinking starts in sent.reasoning

	// The answer of a request that searches (see answer):
	collect   func(Event) // when set, takes the events in place of w (NewMessage)
	at        int         // bytes of the answer written
	cited     bool        // the open text block has citations
	lead      string      // spaces and punctuation held after a citation or a search
	cites     int         // citations taken
	searches  []inference.SearchCall
	announced string // the id of the last search whose server_tool_use block was written

	mcpOpen string // the id of the MCP call whose mcp_tool_use block was written, until its result
}

// NewStream returns an encoder writing to w for req.
func NewStream(w io.Writer, req formats.Request, o formats.Options) *Stream {
	return &Stream{w: w, req: req, id: o.ID("msg_")}
}

// ID returns the message's id.
func (s *Stream) ID() string { return s.id }

// emit writes one event.
func (s *Stream) emit(ev Event) error {
	if s.collect != nil {
		s.collect(ev)
		return nil
	}
	return formats.WriteJSONEvent(s.w, ev.Type, ev)
}

// Start writes message_start; Event calls it when needed.
func (s *Stream) Start() error {
	if s.started {
		return nil
	}
	s.started = true
	return s.emit(Event{Type: "message_start", Message: &Message{
		ID: s.id, Type: "message", Role: "assistant", Content: []Block{}, Model: s.req.Model,
		Usage: Usage{InputTokens: s.InputTokens},
	}})
}

// openBlock closes the open block if it is of another type and opens one
// of type t.
func (s *Stream) openBlock(t string) error {
	if s.open == t {
		return nil
	}
	if err := s.closeBlock(); err != nil {
		return err
	}
	block := Block{Type: t}
	if t == "text" {
		s.textDone = true
	}
	s.open = t
	return s.emit(Event{Type: "content_block_start", Index: ptr(s.index), ContentBlock: &block})
}

// closeBlock ends the open block; a thinking block gets its signature.
func (s *Stream) closeBlock() error {
	if s.open == "" {
		return nil
	}
	if s.open == "thinking" {
		sig := signature(s.sent.Reasoning.String()[s.thought:])
		if err := s.emit(Event{Type: "content_block_delta", Index: ptr(s.index),
			Delta: &Delta{Type: "signature_delta", Signature: &sig}}); err != nil {
			return err
		}
	}
	s.open = ""
	err := s.emit(Event{Type: "content_block_stop", Index: ptr(s.index)})
	s.index++
	return err
}

// toolUse writes the block of one tool call.
func (s *Stream) toolUse(c inference.ToolCall) error {
	s.called = true
	return s.inputBlock(toolUseBlock(c))
}

// inputBlock writes a tool_use or server_tool_use block: its start with
// input {}, the input in one input_json_delta, its stop.
func (s *Stream) inputBlock(block Block) error {
	if err := s.closeBlock(); err != nil {
		return err
	}
	input := string(block.Input)
	block.Input = json.RawMessage("{}")
	if err := s.emit(Event{Type: "content_block_start", Index: ptr(s.index), ContentBlock: &block}); err != nil {
		return err
	}
	if err := s.emit(Event{Type: "content_block_delta", Index: ptr(s.index),
		Delta: &Delta{Type: "input_json_delta", PartialJSON: &input}}); err != nil {
		return err
	}
	err := s.emit(Event{Type: "content_block_stop", Index: ptr(s.index)})
	s.index++
	return err
}

// Event writes the events of one inference event. The Final event sends
// what its result holds beyond the pieces before it, closes the blocks (an
// empty text block when no text came) and ends the stream.
func (s *Stream) Event(ev inference.Event) error {
	if s.done {
		return nil
	}
	if err := s.Start(); err != nil {
		return err
	}
	reasoning, text, calls, _ := s.sent.Next(ev)
	// Thinking comes before the text; with searches, before the text of
	// each turn.
	if reasoning != "" && (!s.textDone || s.req.Search != nil && s.open != "text") {
		if err := s.thinking(reasoning); err != nil {
			return err
		}
	}
	if s.req.Search != nil {
		if err := s.answer(ev, text); err != nil {
			return err
		}
		text = ""
	}
	if text != "" || (ev.Final != nil && !s.textDone && !s.called && len(calls) == 0) {
		if err := s.openBlock("text"); err != nil {
			return err
		}
	}
	if text != "" {
		if err := s.emit(Event{Type: "content_block_delta", Index: ptr(s.index),
			Delta: &Delta{Type: "text_delta", Text: &text}}); err != nil {
			return err
		}
	}
	if c := ev.MCPCall; c != nil {
		if err := s.mcpCall(*c); err != nil {
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
	stop, seq := stopReason(*ev.Final)
	u := newUsage(s.req, ev.Final.Usage)
	delta := &Delta{StopReason: stop, StopSequence: seq}
	if err := s.emit(Event{Type: "message_delta", Delta: delta, Usage: &u}); err != nil {
		return err
	}
	if err := s.emit(Event{Type: "message_stop"}); err != nil {
		return err
	}
	return writeNamedDone(s.w, doneEvent)
}

// answer writes the text of an event of a request that searches, its
// citations and its search; for the Final event, what its result holds
// beyond the events before it (rest).
func (s *Stream) answer(ev inference.Event, text string) error {
	if ev.Final != nil {
		return s.rest(*ev.Final)
	}
	if err := s.citedText(text, ev.Citations); err != nil {
		return err
	}
	if ev.Search != nil {
		return s.search(*ev.Search)
	}
	return nil
}

// rest writes what res holds beyond what the stream wrote: the text from
// s.at on, with the citations and searches not written yet, each where
// the model wrote it; then the lead held at its end. NewMessage writes a
// whole result so.
func (s *Stream) rest(res inference.Result) error {
	var text string
	if s.at <= len(res.Text) {
		text = res.Text[s.at:]
	}
	cites := res.Citations[min(s.cites, len(res.Citations)):]
	for k := min(len(s.searches), len(res.Searches)); k < len(res.Searches); k++ {
		sc := res.Searches[k]
		cut := min(max(sc.At-s.at, 0), len(text))
		n := 0
		for n < len(cites) && cites[n].End <= sc.At {
			n++
		}
		if err := s.citedText(text[:cut], cites[:n]); err != nil {
			return err
		}
		text, cites = text[cut:], cites[n:]
		if err := s.search(sc); err != nil {
			return err
		}
		// The next turn's thinking, up to the next search's.
		end := len(res.Reasoning)
		if k+1 < len(res.Searches) {
			end = res.Searches[k+1].ReasoningAt
		}
		if err := s.thinkingUntil(res, end); err != nil {
			return err
		}
	}
	if err := s.citedText(text, cites); err != nil {
		return err
	}
	return s.flushLead()
}

// citedText writes text, the next piece of the answer, and cites, the
// citations whose markers the model wrote in it, each where its span
// ends.
func (s *Stream) citedText(text string, cites []inference.Citation) error {
	for _, c := range cites {
		cut := min(max(c.End-s.at, 0), len(text))
		if err := s.answerText(text[:cut]); err != nil {
			return err
		}
		text = text[cut:]
		if err := s.cite(c); err != nil {
			return err
		}
	}
	return s.answerText(text)
}

// spanLead are the characters that the engine never starts a cited span
// with (its citer): after a citation or a search, they wait in s.lead.
const spanLead = " .,;:!?)\n"

// answerText writes text of the answer of a request that searches. After
// a citation, a search or the start, its leading spaces and punctuation
// wait; the first other character ends the open block, writes what waited
// as a block of its own (flushLead) and opens the text block where a
// cited span would start.
func (s *Stream) answerText(text string) error {
	if text == "" {
		return nil
	}
	s.at += len(text)
	if s.open != "text" || s.cited {
		rest := strings.TrimLeft(text, spanLead)
		s.lead += text[:len(text)-len(rest)]
		if rest == "" {
			return nil
		}
		if err := s.flushLead(); err != nil {
			return err
		}
		if err := s.closeBlock(); err != nil {
			return err
		}
		if err := s.openBlock("text"); err != nil {
			return err
		}
		s.cited, text = false, rest
	}
	return s.emit(Event{Type: "content_block_delta", Index: ptr(s.index),
		Delta: &Delta{Type: "text_delta", Text: &text}})
}

// flushLead writes the text held in s.lead as a text block of its own.
func (s *Stream) flushLead() error {
	if s.lead == "" {
		return nil
	}
	lead := s.lead
	s.lead = ""
	if err := s.closeBlock(); err != nil {
		return err
	}
	if err := s.openBlock("text"); err != nil {
		return err
	}
	s.cited = false
	if err := s.emit(Event{Type: "content_block_delta", Index: ptr(s.index),
		Delta: &Delta{Type: "text_delta", Text: &lead}}); err != nil {
		return err
	}
	return s.closeBlock()
}

// cite writes a citation of the open text block, whose text is the cited
// span: the block ends at the next text, and a citation that follows
// before it (the same span: a marker right after another) joins it. A
// citation of no text, or with no text block open, cites nothing and is
// dropped.
func (s *Stream) cite(c inference.Citation) error {
	s.cites++
	if c.Start >= c.End || s.open != "text" {
		return nil
	}
	s.cited = true
	mc := citation(c, s.searches)
	return s.emit(Event{Type: "content_block_delta", Index: ptr(s.index),
		Delta: &Delta{Type: "citations_delta", Citation: &mc}})
}

// search writes the blocks of a search: server_tool_use when it starts,
// web_search_tool_result when it ends (both for a search that the stream
// sees only finished).
func (s *Stream) search(sc inference.SearchCall) error {
	if err := s.flushLead(); err != nil {
		return err
	}
	if s.announced != sc.ID {
		s.announced = sc.ID
		if err := s.inputBlock(serverToolUseBlock(sc)); err != nil {
			return err
		}
	}
	if sc.Status == inference.SearchSearching {
		return nil
	}
	if err := s.closeBlock(); err != nil {
		return err
	}
	s.searches = append(s.searches, sc)
	block := webSearchResultBlock(sc)
	if err := s.emit(Event{Type: "content_block_start", Index: ptr(s.index), ContentBlock: &block}); err != nil {
		return err
	}
	err := s.emit(Event{Type: "content_block_stop", Index: ptr(s.index)})
	s.index++
	return err
}

// thinking writes piece, the next piece of the thinking, which s.sent
// holds already, in the open thinking block or a new one.
func (s *Stream) thinking(piece string) error {
	if s.open != "thinking" {
		s.thought = s.sent.Reasoning.Len() - len(piece)
	}
	if err := s.openBlock("thinking"); err != nil {
		return err
	}
	return s.emit(Event{Type: "content_block_delta", Index: ptr(s.index),
		Delta: &Delta{Type: "thinking_delta", Thinking: &piece}})
}

// thinkingUntil writes the thinking of res up to byte end that s has not
// written: the thinking of the turn after a search (see
// inference.SearchCall.ReasoningAt).
func (s *Stream) thinkingUntil(res inference.Result, end int) error {
	end = min(end, len(res.Reasoning))
	done := s.sent.Reasoning.Len()
	if end <= done {
		return nil
	}
	piece := res.Reasoning[done:end]
	s.sent.Reasoning.WriteString(piece)
	return s.thinking(piece)
}

// Fail writes err as an `event: error` with the messages error body and
// ends the stream.
func (s *Stream) Fail(err error) error {
	if s.done {
		return nil
	}
	s.done = true
	return formats.WriteEvent(s.w, "error", Error(err).Body(formats.StyleMessages))
}

// doneEvent is the event name of the messages stream's closing
// `data: [DONE]`, which the spec asks for. Every frame of that stream has
// an `event:` line, so that strict SSE parsers accept it, and the
// sentinel's name must be one that every official Anthropic client skips
// without reading its data, which is not JSON: anthropic-sdk-go's
// ssestream.Stream.Next skips "ping" (and unnamed events) before decoding,
// and would fail on any other name such as "done"; the TypeScript and
// Python SDKs skip "ping" too and ignore names they do not know. "ping"
// is Anthropic's own keep-alive event, so a client that handles it does
// nothing with it.
const doneEvent = "ping"

// writeNamedDone writes the `data: [DONE]` sentinel with an `event:` line
// of the given name.
func writeNamedDone(w io.Writer, event string) error {
	return formats.WriteEvent(w, event, []byte("[DONE]"))
}

// mcpCall writes the blocks of an MCP call: mcp_tool_use when it starts
// (content_block_start with input {}, one input_json_delta, the open
// text block ended first), and mcp_tool_result, whole in its
// content_block_start, when it ends.
func (s *Stream) mcpCall(c inference.MCPCall) error {
	blocks := mcpBlocks(c)
	if c.Status == inference.MCPInProgress || c.Status == inference.MCPAwaitingApproval || s.mcpOpen != c.ID {
		s.called, s.mcpOpen = true, c.ID
		if err := s.inputBlock(blocks[0]); err != nil {
			return err
		}
	}
	if len(blocks) < 2 {
		return nil
	}
	s.mcpOpen = ""
	if err := s.emit(Event{Type: "content_block_start", Index: ptr(s.index), ContentBlock: &blocks[1]}); err != nil {
		return err
	}
	err := s.emit(Event{Type: "content_block_stop", Index: ptr(s.index)})
	s.index++
	return err
}
