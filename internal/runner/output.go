package runner

import "github.com/inferkit/inferkit/internal/family"

// Output splits the bytes of generated tokens into reasoning, answer text
// and tool calls with the model family's parser, and ends the answer at
// the request's stop strings; the family's stops (family.Family.Stops)
// end the whole output, as the end of the turn. It hands the parser whole
// UTF-8 characters only; the parser says whether the output is inside a
// thinking section, which the runner must know: a grammar constrains the
// answer only, the thinking budget counts thinking tokens, and
// log-probabilities are kept for the answer. Its zero value is not
// usable (NewOutput); it is not safe for concurrent use.
type Output struct {
	chars  *textOutput // whole characters of the raw output, up to the family's stops
	ended  bool        // a family stop ended the output
	parser family.Parser
	answer *textOutput // the answer text, up to the request's stop strings
}

// NewOutput returns an output of f's format (nil: plain text, which
// never thinks nor calls) for a request with the given stop strings and
// tools; thinking says the prompt itself opened the thinking section.
func NewOutput(f *family.Family, stops []string, tools []family.Tool, thinking bool) *Output {
	o := &Output{chars: newTextOutput(nil), answer: newTextOutput(stops)}
	if f == nil {
		o.parser = plainParser{}
		return o
	}
	o.chars = newTextOutput(f.Stops)
	cfg := family.ParserConfig{Thinking: thinking, Tools: tools}
	o.parser = f.NewParser(cfg)
	return o
}

// plainParser is the parser of a model no family recognises: its output
// is all answer text.
type plainParser struct{}

func (plainParser) Push(text string) family.Output { return family.Output{Text: text} }
func (plainParser) Flush(bool) family.Output       { return family.Output{} }
func (plainParser) Thinking() bool                 { return false }
func (plainParser) Calling() string                { return "" }

// Piece is what one Push or Flush releases.
type Piece struct {
	Reasoning, Text string
	Calls           []family.Call
	Stop            string // the stop string that ended the answer
	Stopped         bool
	// Ended says a family stop ended the output: the turn is over, as
	// at an end-of-generation token, and Flush releases the rest.
	Ended bool
}

// Push adds the bytes of one token.
func (o *Output) Push(b []byte) Piece {
	s, _, ended := o.chars.push(b)
	p := o.release(o.parser.Push(s), false)
	if ended && !p.Stopped {
		o.ended, p.Ended = true, true
	}
	return p
}

// Flush releases what is held back once generation has ended without a
// stop string; truncated says the token limit cut it short. After a
// family stop, what followed it is dropped.
func (o *Output) Flush(truncated bool) Piece {
	var p Piece
	if o.ended {
		o.chars.rest()
	} else if rest := o.chars.flush(); rest != "" {
		if p = o.release(o.parser.Push(rest), false); p.Stopped {
			return p
		}
	}
	q := o.release(o.parser.Flush(truncated), true)
	q.Reasoning, q.Text = p.Reasoning+q.Reasoning, p.Text+q.Text
	q.Calls = append(p.Calls, q.Calls...)
	return q
}

// release passes the parser's output on: its text through the stop
// strings. A stop ends the answer: calls after it are dropped.
func (o *Output) release(out family.Output, last bool) Piece {
	p := Piece{Reasoning: out.Reasoning, Calls: out.Calls}
	if out.Text != "" {
		p.Text, p.Stop, p.Stopped = o.answer.push([]byte(out.Text))
		if p.Stopped {
			p.Calls = nil
			return p
		}
	}
	if last {
		p.Text += o.answer.flush()
	}
	return p
}

// Thinking reports whether the output is inside a thinking section.
func (o *Output) Thinking() bool { return o.parser.Thinking() }

// Calling is the text of the tool call the output is inside, held until
// it ends ("" outside one), with its name first where the family writes
// it apart (family.Parser).
func (o *Output) Calling() string { return o.parser.Calling() }
