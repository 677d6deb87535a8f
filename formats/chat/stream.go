package chat

import (
	"fmt"
	"io"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
)

// Chunk is one event of a chat completion stream.
type Chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"` // chat.completion.chunk
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []ChunkChoice `json:"choices"`
	// Usage is set on the last chunk of a stream with include_usage.
	Usage *Usage `json:"usage,omitzero"`
}

// ChunkChoice is the choice a chunk brings a change of.
type ChunkChoice struct {
	Index int   `json:"index"`
	Delta Delta `json:"delta"`
	// Logprobs are the entries of the tokens whose text this chunk
	// brings, when the request asked for them; else null.
	Logprobs *Logprobs `json:"logprobs"`
	// FinishReason is null until the last chunk.
	FinishReason *string `json:"finish_reason"`
	// MatchedStop is set on the last chunk: what ended the output.
	MatchedStop MatchedStop `json:"matched_stop,omitzero"`
}

// Delta is the change a chunk brings: the role in the first, then text
// pieces and tool calls, then nothing in the last.
type Delta struct {
	Role             string  `json:"role,omitzero"`
	Content          *string `json:"content,omitzero"`
	ReasoningContent string  `json:"reasoning_content,omitzero"`
	// ToolCalls holds one tool call's piece: its first chunk has the
	// index, id, type and function name with empty arguments; the next
	// has the index and the arguments.
	ToolCalls []ToolCallDelta `json:"tool_calls,omitzero"`
	// Annotations are the citations of search results that the text up
	// to this chunk's completes, as the message's annotations.
	Annotations []Annotation `json:"annotations,omitzero"`
}

// ToolCallDelta is a piece of a streamed tool call, as OpenAI streams
// them: Index says which call of the message it belongs to.
type ToolCallDelta struct {
	Index    int               `json:"index"`
	ID       string            `json:"id,omitzero"`
	Type     string            `json:"type,omitzero"`
	Function FunctionCallDelta `json:"function"`
}

// FunctionCallDelta is a piece of a streamed call's function: the
// name once, then fragments of the arguments.
type FunctionCallDelta struct {
	Name      string `json:"name,omitzero"`
	Arguments string `json:"arguments"`
}

// Stream encodes inference events as a chat completion stream. Each
// choice (Event.Choice) gets a first chunk with the role, one chunk per
// text piece (with the entries of its tokens when the request asked for
// logprobs), two chunks per tool call (the call's index, id, type and
// name, then its arguments whole: the engine releases a call once it is
// complete) and a last chunk with an empty delta and the finish reason
// (tool_calls when the model called tools). Once every choice has ended
// come the usage chunk when asked, and data: [DONE]. A Stream is not
// safe for concurrent use.
type Stream struct {
	w       io.Writer
	req     formats.Request
	id      string
	created int64
	choices []choiceStream
	results []inference.Result
	ended   int
	done    bool
}

// choiceStream is what a Stream has sent of one choice.
type choiceStream struct {
	started bool
	sent    wire.Progress
	calls   int // tool calls sent
	ended   bool
}

// NewStream returns an encoder writing to w for req.
func NewStream(w io.Writer, req formats.Request, o formats.Options) *Stream {
	n := max(1, req.Choices)
	return &Stream{w: w, req: req, id: o.ID("chatcmpl-"), created: o.Time().Unix(),
		choices: make([]choiceStream, n), results: make([]inference.Result, n)}
}

// ID returns the completion's id.
func (s *Stream) ID() string { return s.id }

// chunk writes a chunk with one choice.
func (s *Stream) chunk(c ChunkChoice) error {
	return formats.WriteJSONEvent(s.w, "", Chunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.req.Model, Choices: []ChunkChoice{c}})
}

// Start writes the first chunk of the first choice, with the role; Event
// calls it, and the first chunk of every other choice, when needed.
func (s *Stream) Start() error { return s.start(0) }

func (s *Stream) start(i int) error {
	if s.choices[i].started {
		return nil
	}
	s.choices[i].started = true
	return s.chunk(ChunkChoice{Index: i, Delta: Delta{Role: "assistant", Content: ptr("")}})
}

// Event writes the chunks of one event. The pieces of the reasoning's
// summary are sent as delta.reasoning_content when the request's
// reasoning.summary is not none; the reasoning itself is not sent. A Final event sends what its result holds beyond the pieces
// before it, then its choice's last chunk; the Final of the last choice
// to end is followed by the usage chunk when asked, and [DONE]. An event
// of a choice the request did not ask for is an error.
func (s *Stream) Event(ev inference.Event) error {
	if s.done {
		return nil
	}
	i := ev.Choice
	if i < 0 || i >= len(s.choices) || s.choices[i].ended {
		return fmt.Errorf("formats: an event of choice %d in a stream of %d choices", i, len(s.choices))
	}
	c := &s.choices[i]
	if err := s.start(i); err != nil {
		return err
	}
	summary := c.sent.NextSummary(ev)
	_, text, calls, lps := c.sent.Next(ev)
	if summary != "" && showReasoning(s.req) {
		if err := s.chunk(ChunkChoice{Index: i, Delta: Delta{ReasoningContent: summary}}); err != nil {
			return err
		}
	}
	// Entries go with the text of their tokens, or alone when their
	// tokens wrote nothing to show (tool-call markup, a held-back end).
	if text != "" || len(lps) > 0 && s.req.Logprobs || len(ev.Citations) > 0 {
		d := Delta{Annotations: annotations(c.sent.Text.String(), ev.Citations)}
		if text != "" {
			d.Content = ptr(text)
		}
		if err := s.chunk(ChunkChoice{Index: i, Delta: d, Logprobs: logprobsOf(s.req, lps)}); err != nil {
			return err
		}
	}
	for _, call := range calls {
		head := ToolCallDelta{Index: c.calls, ID: call.ID, Type: "function", Function: FunctionCallDelta{Name: call.Name}}
		args := ToolCallDelta{Index: c.calls, Function: FunctionCallDelta{Arguments: call.Arguments}}
		c.calls++
		for _, d := range []ToolCallDelta{head, args} {
			if err := s.chunk(ChunkChoice{Index: i, Delta: Delta{ToolCalls: []ToolCallDelta{d}}}); err != nil {
				return err
			}
		}
	}
	if ev.Final == nil {
		return nil
	}
	c.ended = true
	s.results[i] = *ev.Final
	s.ended++
	finish, matched := finish(*ev.Final)
	if err := s.chunk(ChunkChoice{Index: i, FinishReason: &finish, MatchedStop: matched}); err != nil {
		return err
	}
	if s.ended < len(s.choices) {
		return nil
	}
	s.done = true
	if s.req.IncludeUsage {
		u := newUsage(inference.ChoicesUsage(s.results, len(s.results)))
		c := Chunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.req.Model,
			Choices: []ChunkChoice{}, Usage: &u}
		if err := formats.WriteJSONEvent(s.w, "", c); err != nil {
			return err
		}
	}
	return formats.WriteDone(s.w)
}

// Fail writes err as the in-stream error data: {"error":{...}} and ends
// the stream; no [DONE] follows.
func (s *Stream) Fail(err error) error {
	if s.done {
		return nil
	}
	s.done = true
	return formats.WriteEvent(s.w, "", Error(err).Body(formats.StyleChat))
}
