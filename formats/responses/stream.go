package responses

import (
	"io"
	"slices"
	"strings"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
)

// Event is one event of a responses stream; Type says which
// fields it carries. Every event has a sequence_number, from 0.
type Event struct {
	Type           string    `json:"type"`
	SequenceNumber int       `json:"sequence_number"`
	Response       *Response `json:"response,omitzero"`
	OutputIndex    *int      `json:"output_index,omitzero"`
	ItemID         string    `json:"item_id,omitzero"`
	ContentIndex   *int      `json:"content_index,omitzero"`
	Item           *Item     `json:"item,omitzero"`
	Part           *Part     `json:"part,omitzero"`
	Delta          *string   `json:"delta,omitzero"`
	Text           *string   `json:"text,omitzero"`
	// Name and Arguments are a function call's, for
	// response.function_call_arguments.done.
	Name      string                 `json:"name,omitzero"`
	Arguments *string                `json:"arguments,omitzero"`
	Logprobs  []formats.TokenLogprob `json:"logprobs,omitzero"`
	// SummaryIndex is the summary part of a reasoning item that a
	// response.reasoning_summary_* event is about.
	SummaryIndex *int `json:"summary_index,omitzero"`
	// AnnotationIndex and Annotation are the annotation that
	// response.output_text.annotation.added adds to the output_text.
	AnnotationIndex *int        `json:"annotation_index,omitzero"`
	Annotation      *Annotation `json:"annotation,omitzero"`
}

// Stream encodes inference events as a responses stream:
// response.created, response.in_progress; when the model thinks, a
// reasoning item (output_item.added; when a summary was asked for,
// response.reasoning_summary_part.added, reasoning_summary_text.delta
// pieces, reasoning_summary_text.done and reasoning_summary_part.done;
// output_item.done), which carries no thinking text; the message
// item (output_item.added, content_part.added, output_text.delta pieces
// each followed by a response.output_text.annotation.added per citation
// it completes, output_text.done, content_part.done and output_item.done
// with the annotations), left out when the model only called tools or
// searched; for each web search, which ends the open message, a
// web_search_call item (output_item.added, in progress;
// response.web_search_call.in_progress and .searching; when it ends,
// response.web_search_call.completed and output_item.done, completed or
// failed), the text after it going into a new message; a function_call
// item per tool call
// (output_item.added with empty arguments, one
// response.function_call_arguments.delta holding the whole arguments,
// since the engine releases a call once it is complete,
// response.function_call_arguments.done, output_item.done); for a
// request with mcp tools, each server's mcp_list_tools item first, then
// an mcp_call item per call the engine runs and an
// mcp_approval_request item per call that waits (see Stream.mcpEvent);
// and
// response.completed, or response.incomplete when the output limit cut
// the output, and `data: [DONE]`, as the other styles' streams end (the
// OpenAI SDKs end any stream at it). A background response's stream
// starts with response.created and response.queued, both with status
// queued (Queue), and response.in_progress follows when its generation
// starts; one that is cancelled ends with its open item incomplete,
// response.cancelled (status cancelled) and [DONE]. A failed stream ends
// with response.failed and no [DONE], as a chat stream's error. A Stream
// is not safe for concurrent use.
type Stream struct {
	w    io.Writer
	o    formats.Options
	req  formats.Request
	resp Response
	seq  int
	sent wire.Progress

	started bool
	queued  bool
	done    bool
	// open is the open item: "", "reasoning", "message",
	// "web_search_call" or "mcp_call".
	open     string
	index    int // the open or next item's output index
	id       string
	itemText strings.Builder // the open item's text
	items    []Item          // the items done
	message  bool            // a message item was opened
	called   bool            // a function_call item was sent
	searched bool            // a web_search_call or mcp_call item was opened
	// written is the length of the answer sent so far, itemStart where
	// the open message's text starts in it, and annotations the open
	// message's.
	written, itemStart int
	annotations        []Annotation
	search             inference.SearchCall // the open web_search_call's
	mcp                inference.MCPCall    // the open mcp_call's
	// logprobs are the answer's entries so far, sentLogprobs how many
	// deltas carried.
	logprobs     []inference.TokenLogprob
	sentLogprobs int
}

// NewStream returns an encoder writing to w for req.
func NewStream(w io.Writer, req formats.Request, o formats.Options) *Stream {
	return &Stream{w: w, o: o, req: req, resp: newShell(req, o.ID("resp_"), o.Time().Unix())}
}

// Response returns the response object as it stands: the final one, to
// store, after the Final event or Fail.
func (s *Stream) Response() Response { return s.resp }

// emit writes one event with the next sequence number.
func (s *Stream) emit(ev Event) error {
	ev.SequenceNumber = s.seq
	s.seq++
	return formats.WriteJSONEvent(s.w, ev.Type, ev)
}

// snapshot returns a copy of the response for an event.
func (s *Stream) snapshot() *Response {
	r := s.resp
	return &r
}

// Queue writes response.created and response.queued, the response's
// status queued: a background response's start, before its generation
// starts. It does nothing once the stream has started.
func (s *Stream) Queue() error {
	if s.started || s.queued {
		return nil
	}
	s.queued = true
	s.resp.Status = "queued"
	if err := s.emit(Event{Type: "response.created", Response: s.snapshot()}); err != nil {
		return err
	}
	return s.emit(Event{Type: "response.queued", Response: s.snapshot()})
}

// Start writes response.created (unless Queue did) and
// response.in_progress; Event calls it when needed.
func (s *Stream) Start() error {
	if s.started {
		return nil
	}
	s.started = true
	s.resp.Status = "in_progress"
	if !s.queued {
		if err := s.emit(Event{Type: "response.created", Response: s.snapshot()}); err != nil {
			return err
		}
	}
	return s.emit(Event{Type: "response.in_progress", Response: s.snapshot()})
}

// Progress returns the response object as it stands: while the stream
// runs, with the items done so far, the open one in progress with its
// text so far, and the text so far as output_text; after it ended, the
// final one (as Response).
func (s *Stream) Progress() Response {
	r := s.resp
	if s.done {
		return r
	}
	r.Output = slices.Clone(s.items)
	switch s.open {
	case "reasoning":
		r.Output = append(r.Output, reasoningItem(s.id, "in_progress", s.itemText.String()))
	case "message":
		it := messageItem(s.id, "in_progress", s.itemText.String(), true)
		if s.annotations != nil {
			it.Content[0].Annotations = slices.Clone(s.annotations)
		}
		r.Output = append(r.Output, it)
	case "web_search_call":
		r.Output = append(r.Output, webSearchItem(s.search, false))
	case "mcp_call":
		r.Output = append(r.Output, mcpCallItem(s.mcp, false))
	}
	if r.Output == nil {
		r.Output = []Item{}
	}
	r.OutputText = s.sent.Text.String()
	return r
}

// openItem closes the open item if it is of another kind and opens one.
func (s *Stream) openItem(kind string) error {
	if s.open == kind {
		return nil
	}
	if err := s.closeItem("completed"); err != nil {
		return err
	}
	s.open = kind
	s.itemText.Reset()
	if kind == "reasoning" {
		s.id = s.o.ID("rs_")
		it := reasoningItem(s.id, "in_progress", "")
		return s.emit(Event{Type: "response.output_item.added", OutputIndex: ptr(s.index), Item: &it})
	}
	s.message = true
	s.id = s.o.ID("msg_")
	s.itemStart, s.annotations = s.written, nil
	it := messageItem(s.id, "in_progress", "", false)
	if err := s.emit(Event{Type: "response.output_item.added", OutputIndex: ptr(s.index), Item: &it}); err != nil {
		return err
	}
	part := outputText("")
	part.Logprobs = nil
	return s.emit(Event{Type: "response.content_part.added", ItemID: s.id, OutputIndex: ptr(s.index), ContentIndex: ptr(0), Part: &part})
}

// webSearch writes the events of a search as it starts (which ends the
// open item and opens the search's) and as it ends.
func (s *Stream) webSearch(sc inference.SearchCall) error {
	if sc.Status != inference.SearchSearching && s.open == "web_search_call" && s.id == sc.ID {
		s.search = sc
		return s.closeItem("completed")
	}
	if err := s.closeItem("completed"); err != nil {
		return err
	}
	s.open, s.id, s.search, s.searched = "web_search_call", sc.ID, sc, true
	it := webSearchItem(sc, false)
	if err := s.emit(Event{Type: "response.output_item.added", OutputIndex: ptr(s.index), Item: &it}); err != nil {
		return err
	}
	for _, typ := range []string{"response.web_search_call.in_progress", "response.web_search_call.searching"} {
		if err := s.emit(Event{Type: typ, ItemID: s.id, OutputIndex: ptr(s.index)}); err != nil {
			return err
		}
	}
	if sc.Status != inference.SearchSearching { // an end without a start
		return s.closeItem("completed")
	}
	return nil
}

// annotate writes response.output_text.annotation.added for each
// citation of the open message's text.
func (s *Stream) annotate(cites []inference.Citation) error {
	for _, c := range cites {
		if s.open != "message" || c.Start < s.itemStart {
			continue
		}
		a, ok := urlCitation(c, s.itemText.String(), s.itemStart)
		if !ok {
			continue
		}
		err := s.emit(Event{Type: "response.output_text.annotation.added", ItemID: s.id, OutputIndex: ptr(s.index), ContentIndex: ptr(0),
			AnnotationIndex: ptr(len(s.annotations)), Annotation: &a})
		if err != nil {
			return err
		}
		s.annotations = append(s.annotations, a)
	}
	return nil
}

// functionCall writes the item of one tool call.
func (s *Stream) functionCall(c inference.ToolCall) error {
	if err := s.closeItem("completed"); err != nil {
		return err
	}
	s.called = true
	id := s.o.ID("fc_")
	added := functionCallItem(id, c, false)
	if err := s.emit(Event{Type: "response.output_item.added", OutputIndex: ptr(s.index), Item: &added}); err != nil {
		return err
	}
	args := c.Arguments
	if err := s.emit(Event{Type: "response.function_call_arguments.delta", ItemID: id, OutputIndex: ptr(s.index), Delta: &args}); err != nil {
		return err
	}
	if err := s.emit(Event{Type: "response.function_call_arguments.done", ItemID: id, OutputIndex: ptr(s.index), Name: c.Name, Arguments: &args}); err != nil {
		return err
	}
	done := functionCallItem(id, c, true)
	if err := s.emit(Event{Type: "response.output_item.done", OutputIndex: ptr(s.index), Item: &done}); err != nil {
		return err
	}
	s.items = append(s.items, done)
	s.index++
	return nil
}

// closeItem ends the open item with the given status.
func (s *Stream) closeItem(status string) error {
	text := s.itemText.String()
	var it Item
	switch s.open {
	case "reasoning":
		if text != "" {
			if err := s.emit(Event{Type: "response.reasoning_summary_text.done", ItemID: s.id, OutputIndex: ptr(s.index), SummaryIndex: ptr(0), Text: &text}); err != nil {
				return err
			}
			part := summaryText(text)
			if err := s.emit(Event{Type: "response.reasoning_summary_part.done", ItemID: s.id, OutputIndex: ptr(s.index), SummaryIndex: ptr(0), Part: &part}); err != nil {
				return err
			}
		}
		it = reasoningItem(s.id, "completed", text)
	case "message":
		lps := []formats.TokenLogprob{}
		if s.req.Logprobs {
			lps = wire.TokenLogprobs(s.logprobs)
		}
		if err := s.emit(Event{Type: "response.output_text.done", ItemID: s.id, OutputIndex: ptr(s.index), ContentIndex: ptr(0), Text: &text, Logprobs: lps}); err != nil {
			return err
		}
		part := outputText(text)
		part.Logprobs = nil
		if s.annotations != nil {
			part.Annotations = s.annotations
		}
		if err := s.emit(Event{Type: "response.content_part.done", ItemID: s.id, OutputIndex: ptr(s.index), ContentIndex: ptr(0), Part: &part}); err != nil {
			return err
		}
		it = messageItem(s.id, status, text, true)
		it.Content[0].Annotations = part.Annotations
		if s.req.Logprobs {
			it.Content[0].Logprobs = lps
		}
	case "web_search_call":
		if err := s.emit(Event{Type: "response.web_search_call.completed", ItemID: s.id, OutputIndex: ptr(s.index)}); err != nil {
			return err
		}
		it = webSearchItem(s.search, true)
	case "mcp_call":
		if s.mcp.Status == inference.MCPInProgress {
			s.mcp.Status = "" // the stream ended while it ran: incomplete
		}
		if err := s.emit(Event{Type: mcpCallEnd(s.mcp), ItemID: s.id, OutputIndex: ptr(s.index)}); err != nil {
			return err
		}
		it = mcpCallItem(s.mcp, true)
	default:
		return nil
	}
	if err := s.emit(Event{Type: "response.output_item.done", OutputIndex: ptr(s.index), Item: &it}); err != nil {
		return err
	}
	s.items = append(s.items, it)
	s.open = ""
	s.index++
	return nil
}

// Event writes the events of one inference event. The Final event sends
// what its result holds beyond the pieces before it, closes the items and
// ends the stream with response.completed (or response.incomplete).
func (s *Stream) Event(ev inference.Event) error {
	if s.done {
		return nil
	}
	if err := s.Start(); err != nil {
		return err
	}
	summary := s.sent.NextSummary(ev)
	reasoning, text, calls, lps := s.sent.Next(ev)
	s.logprobs = append(s.logprobs, lps...)
	// Thinking after the first message or search (a later turn's) is
	// counted, not shown.
	if (reasoning != "" || summary != "") && !s.message && !s.searched {
		if err := s.openItem("reasoning"); err != nil {
			return err
		}
	}
	if summary != "" && s.open == "reasoning" {
		// The item's text is its summary.
		if s.itemText.Len() == 0 {
			part := summaryText("")
			if err := s.emit(Event{Type: "response.reasoning_summary_part.added", ItemID: s.id, OutputIndex: ptr(s.index), SummaryIndex: ptr(0), Part: &part}); err != nil {
				return err
			}
		}
		s.itemText.WriteString(summary)
		if err := s.emit(Event{Type: "response.reasoning_summary_text.delta", ItemID: s.id, OutputIndex: ptr(s.index), SummaryIndex: ptr(0), Delta: &summary}); err != nil {
			return err
		}
	}
	if text != "" || (ev.Final != nil && !s.message && !s.called && !s.searched && len(calls) == 0) {
		if err := s.openItem("message"); err != nil {
			return err
		}
	}
	if text != "" {
		s.itemText.WriteString(text)
		// A delta carries the entries that came since the last one.
		delta := []formats.TokenLogprob{}
		if s.req.Logprobs {
			delta = wire.TokenLogprobs(s.logprobs[s.sentLogprobs:])
			s.sentLogprobs = len(s.logprobs)
		}
		if err := s.emit(Event{Type: "response.output_text.delta", ItemID: s.id, OutputIndex: ptr(s.index), ContentIndex: ptr(0), Delta: &text, Logprobs: delta}); err != nil {
			return err
		}
		s.written += len(text)
	}
	if err := s.annotate(ev.Citations); err != nil {
		return err
	}
	if ev.Search != nil {
		if err := s.webSearch(*ev.Search); err != nil {
			return err
		}
	}
	if err := s.mcpEvent(ev); err != nil {
		return err
	}
	for _, c := range calls {
		if err := s.functionCall(c); err != nil {
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
	res.Text, res.Reasoning, res.Summary = s.sent.Text.String(), s.sent.Reasoning.String(), s.sent.Summary.String()
	if err := s.closeItem(itemStatus(res)); err != nil {
		return err
	}
	if len(s.items) > 0 && s.items[0].Type == "reasoning" {
		// With the summaries of later turns, which were not shown.
		s.items[0] = reasoningItem(s.items[0].ID, "completed", res.Summary)
	}
	s.resp.finish(res, s.items, s.o.Time().Unix())
	if err := s.emit(Event{Type: "response." + s.resp.Status, Response: s.snapshot()}); err != nil {
		return err
	}
	return formats.WriteDone(s.w)
}

// Cancel ends the stream of a response that was cancelled: the open item
// ends incomplete, the response has status cancelled, the output so far
// and no usage, and response.cancelled and [DONE] follow.
func (s *Stream) Cancel() error {
	if s.done {
		return nil
	}
	if !s.queued {
		if err := s.Start(); err != nil {
			return err
		}
	}
	if err := s.closeItem("incomplete"); err != nil {
		return err
	}
	s.done = true
	s.resp.Status = "cancelled"
	s.resp.Output = append([]Item{}, s.items...)
	s.resp.OutputText = s.sent.Text.String()
	if err := s.emit(Event{Type: "response.cancelled", Response: s.snapshot()}); err != nil {
		return err
	}
	return formats.WriteDone(s.w)
}

// Fail writes response.failed, whose response has status failed and the
// error, and ends the stream.
func (s *Stream) Fail(err error) error {
	if s.done {
		return nil
	}
	s.done = true
	s.resp.fail(err)
	return s.emit(Event{Type: "response.failed", Response: s.snapshot()})
}
