package inference

import (
	"strings"

	"github.com/inferkit/inferkit/internal/family"
)

// output splits the bytes of generated tokens into reasoning, answer text
// and tool calls with the model family's parser, and ends the answer at
// the request's stop strings; the family's stops (family.Family.Stops)
// end the whole output, as the end of the turn. It hands the parser whole
// UTF-8 characters
// only; the parser says whether the output is inside a thinking section,
// which the runner must know: a grammar constrains the answer only, the
// thinking budget counts thinking tokens, and log-probabilities are kept
// for the answer.
type output struct {
	chars  *textOutput // whole characters of the raw output, up to the family's stops
	ended  bool        // a family stop ended the output
	parser family.Parser
	answer *textOutput // the answer text, up to the request's stop strings
}

// newOutput returns an output of f's format (nil: plain text, which
// never thinks nor calls) for a request with the given stop strings and
// tools; thinking says the prompt itself opened the thinking section.
func newOutput(f *family.Family, stops []string, tools []Tool, thinking bool) *output {
	o := &output{chars: newTextOutput(nil), answer: newTextOutput(stops)}
	if f == nil {
		o.parser = plainParser{}
		return o
	}
	o.chars = newTextOutput(f.Stops)
	cfg := family.ParserConfig{Thinking: thinking}
	for _, t := range tools {
		cfg.Tools = append(cfg.Tools, family.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	o.parser = f.NewParser(cfg)
	return o
}

// plainParser is the parser of a model no family recognises: its output
// is all answer text.
type plainParser struct{}

func (plainParser) Push(text string) family.Output { return family.Output{Text: text} }
func (plainParser) Flush(bool) family.Output       { return family.Output{} }
func (plainParser) Thinking() bool                 { return false }

// piece is what one push releases.
type piece struct {
	reasoning, text string
	calls           []family.Call
	stop            string // the stop string that ended the answer
	stopped         bool
	// ended says a family stop ended the output: the turn is over, as
	// at an end-of-generation token, and flush releases the rest.
	ended bool
}

// push adds the bytes of one token.
func (o *output) push(b []byte) piece {
	s, _, ended := o.chars.push(b)
	p := o.release(o.parser.Push(s), false)
	if ended && !p.stopped {
		o.ended, p.ended = true, true
	}
	return p
}

// flush releases what is held back once generation has ended without a
// stop string; truncated says the token limit cut it short. After a
// family stop, what followed it is dropped.
func (o *output) flush(truncated bool) piece {
	var p piece
	if o.ended {
		o.chars.rest()
	} else if rest := o.chars.flush(); rest != "" {
		if p = o.release(o.parser.Push(rest), false); p.stopped {
			return p
		}
	}
	q := o.release(o.parser.Flush(truncated), true)
	q.reasoning, q.text = p.reasoning+q.reasoning, p.text+q.text
	q.calls = append(p.calls, q.calls...)
	return q
}

// release passes the parser's output on: its text through the stop
// strings. A stop ends the answer: calls after it are dropped.
func (o *output) release(out family.Output, last bool) piece {
	p := piece{reasoning: out.Reasoning, calls: out.Calls}
	if out.Text != "" {
		p.text, p.stop, p.stopped = o.answer.push([]byte(out.Text))
		if p.stopped {
			p.calls = nil
			return p
		}
	}
	if last {
		p.text += o.answer.flush()
	}
	return p
}

// thinking reports whether the output is inside a thinking section.
func (o *output) thinking() bool { return o.parser.Thinking() }

// thinkMarks are the markers that open and close a family's thinking
// section, as the engine finds them in a prompt and an output; "" where
// the family does not say.
type thinkMarks struct{ open, close string }

// thinkMarksOf returns a family's thinking markers: its Open, and the
// text of its Close without the white space around it.
func thinkMarksOf(f *family.Family) thinkMarks {
	if f == nil || f.Thinking == nil {
		return thinkMarks{}
	}
	return thinkMarks{open: f.Thinking.Open, close: strings.TrimSpace(f.Thinking.Close)}
}

// opensThinking reports whether a rendered prompt ends inside a thinking
// section, as templates that start the model's turn with <think> do.
func (m thinkMarks) opensThinking(prompt string) bool {
	if m.open == "" || m.close == "" {
		return false
	}
	open := strings.LastIndex(prompt, m.open)
	return open >= 0 && open > strings.LastIndex(prompt, m.close)
}
