package formats

import (
	"io"

	"github.com/inferkit/inferkit/inference"
)

// ResponsesEvent is one event of a responses stream; Type says which
// fields it carries. Every event has a sequence_number, from 0.
type ResponsesEvent struct {
	Type           string        `json:"type"`
	SequenceNumber int           `json:"sequence_number"`
	Response       *Response     `json:"response,omitzero"`
	OutputIndex    *int          `json:"output_index,omitzero"`
	ItemID         string        `json:"item_id,omitzero"`
	ContentIndex   *int          `json:"content_index,omitzero"`
	Item           *ResponseItem `json:"item,omitzero"`
	Part           *ResponsePart `json:"part,omitzero"`
	Delta          *string       `json:"delta,omitzero"`
	Text           *string       `json:"text,omitzero"`
	Logprobs       []any         `json:"logprobs,omitzero"`
}

// ResponsesStream encodes inference events as a responses stream:
// response.created, response.in_progress; when the model thinks, a
// reasoning item (output_item.added, response.reasoning_text.delta
// pieces, response.reasoning_text.done, output_item.done); the message
// item (output_item.added, content_part.added, output_text.delta pieces,
// output_text.done, content_part.done, output_item.done); and
// response.completed, or response.incomplete when the output limit cut
// the output. No sentinel follows. A ResponsesStream is not safe for
// concurrent use.
type ResponsesStream struct {
	w    io.Writer
	o    Options
	resp Response
	seq  int
	sent progress

	started bool
	done    bool
	// open is the open item: "", "reasoning" or "message".
	open  string
	index int // the open or next item's output index
	rsID  string
	msgID string
}

// NewResponsesStream returns an encoder writing to w for req.
func NewResponsesStream(w io.Writer, req Request, o Options) *ResponsesStream {
	return &ResponsesStream{w: w, o: o, resp: newResponseShell(req, o.id("resp_"), o.now().Unix())}
}

// Response returns the response object as it stands: the final one, to
// store, after the Final event or Fail.
func (s *ResponsesStream) Response() Response { return s.resp }

// emit writes one event with the next sequence number.
func (s *ResponsesStream) emit(ev ResponsesEvent) error {
	ev.SequenceNumber = s.seq
	s.seq++
	return writeJSONEvent(s.w, ev.Type, ev)
}

// snapshot returns a copy of the response for an event.
func (s *ResponsesStream) snapshot() *Response {
	r := s.resp
	return &r
}

// Start writes response.created and response.in_progress; Event calls it
// when needed.
func (s *ResponsesStream) Start() error {
	if s.started {
		return nil
	}
	s.started = true
	if err := s.emit(ResponsesEvent{Type: "response.created", Response: s.snapshot()}); err != nil {
		return err
	}
	return s.emit(ResponsesEvent{Type: "response.in_progress", Response: s.snapshot()})
}

// openItem closes the open item if it is of another kind and opens one.
func (s *ResponsesStream) openItem(kind string) error {
	if s.open == kind {
		return nil
	}
	if err := s.closeItem("completed"); err != nil {
		return err
	}
	s.open = kind
	if kind == "reasoning" {
		s.rsID = s.o.id("rs_")
		it := reasoningItem(s.rsID, "in_progress", "")
		return s.emit(ResponsesEvent{Type: "response.output_item.added", OutputIndex: ptr(s.index), Item: &it})
	}
	s.msgID = s.o.id("msg_")
	it := messageItem(s.msgID, "in_progress", "", false)
	if err := s.emit(ResponsesEvent{Type: "response.output_item.added", OutputIndex: ptr(s.index), Item: &it}); err != nil {
		return err
	}
	part := outputText("")
	part.Logprobs = nil
	return s.emit(ResponsesEvent{Type: "response.content_part.added", ItemID: s.msgID, OutputIndex: ptr(s.index), ContentIndex: ptr(0), Part: &part})
}

// closeItem ends the open item with the given status.
func (s *ResponsesStream) closeItem(status string) error {
	switch s.open {
	case "reasoning":
		text := s.sent.reasoning.String()
		if err := s.emit(ResponsesEvent{Type: "response.reasoning_text.done", ItemID: s.rsID, OutputIndex: ptr(s.index), ContentIndex: ptr(0), Text: &text}); err != nil {
			return err
		}
		it := reasoningItem(s.rsID, "completed", text)
		if err := s.emit(ResponsesEvent{Type: "response.output_item.done", OutputIndex: ptr(s.index), Item: &it}); err != nil {
			return err
		}
	case "message":
		text := s.sent.text.String()
		if err := s.emit(ResponsesEvent{Type: "response.output_text.done", ItemID: s.msgID, OutputIndex: ptr(s.index), ContentIndex: ptr(0), Text: &text, Logprobs: []any{}}); err != nil {
			return err
		}
		part := outputText(text)
		part.Logprobs = nil
		if err := s.emit(ResponsesEvent{Type: "response.content_part.done", ItemID: s.msgID, OutputIndex: ptr(s.index), ContentIndex: ptr(0), Part: &part}); err != nil {
			return err
		}
		it := messageItem(s.msgID, status, text, true)
		if err := s.emit(ResponsesEvent{Type: "response.output_item.done", OutputIndex: ptr(s.index), Item: &it}); err != nil {
			return err
		}
	default:
		return nil
	}
	s.open = ""
	s.index++
	return nil
}

// Event writes the events of one inference event. The Final event sends
// what its result holds beyond the pieces before it, closes the items and
// ends the stream with response.completed (or response.incomplete).
func (s *ResponsesStream) Event(ev inference.Event) error {
	if s.done {
		return nil
	}
	if err := s.Start(); err != nil {
		return err
	}
	reasoning, text := s.sent.next(ev)
	if reasoning != "" && s.msgID == "" {
		if err := s.openItem("reasoning"); err != nil {
			return err
		}
		if err := s.emit(ResponsesEvent{Type: "response.reasoning_text.delta", ItemID: s.rsID, OutputIndex: ptr(s.index), ContentIndex: ptr(0), Delta: &reasoning}); err != nil {
			return err
		}
	}
	if text != "" || (ev.Final != nil && s.msgID == "") {
		if err := s.openItem("message"); err != nil {
			return err
		}
	}
	if text != "" {
		if err := s.emit(ResponsesEvent{Type: "response.output_text.delta", ItemID: s.msgID, OutputIndex: ptr(s.index), ContentIndex: ptr(0), Delta: &text, Logprobs: []any{}}); err != nil {
			return err
		}
	}
	if ev.Final == nil {
		return nil
	}
	s.done = true
	res := *ev.Final
	// The stream's own text is what it sent; the result's may only differ
	// if the engine's pieces and Final disagree.
	res.Text, res.Reasoning = s.sent.text.String(), s.sent.reasoning.String()
	status := "completed"
	if res.FinishReason == inference.FinishLength {
		status = "incomplete"
	}
	if err := s.closeItem(status); err != nil {
		return err
	}
	s.resp.finish(res, s.rsID, s.msgID)
	return s.emit(ResponsesEvent{Type: "response." + s.resp.Status, Response: s.snapshot()})
}

// Fail writes response.failed, whose response has status failed and the
// error, and ends the stream.
func (s *ResponsesStream) Fail(err error) error {
	if s.done {
		return nil
	}
	s.done = true
	s.resp.fail(err)
	return s.emit(ResponsesEvent{Type: "response.failed", Response: s.snapshot()})
}
