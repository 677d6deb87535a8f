package inference

import "bytes"

// The markers of a thinking section, as Qwen3, DeepSeek-R1, QwQ and their
// kin write them.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// phase is where an output stands.
type phase int

const (
	// phaseStart: nothing but white space yet; a thinking section may open.
	phaseStart phase = iota
	// phaseThinking: inside the thinking section.
	phaseThinking
	// phaseAnswer: the answer, after any thinking.
	phaseAnswer
)

// output splits the bytes of generated tokens into reasoning (inside
// <think>...</think>) and answer text, both as whole UTF-8 characters, and
// ends the answer at the request's stop strings. The markers and the white
// space that follows the thinking section are not part of either.
type output struct {
	phase     phase
	start     []byte      // bytes seen in phaseStart
	reasoning *textOutput // stops at </think>
	answer    *textOutput // stops at the request's stop strings
	trimming  bool        // dropping white space before the answer
}

// newOutput returns an output for a request with the given stop strings;
// thinking says the prompt itself opened the thinking section.
func newOutput(stops []string, thinking bool) *output {
	o := &output{reasoning: newTextOutput([]string{thinkClose}), answer: newTextOutput(stops)}
	if thinking {
		o.phase = phaseThinking
	}
	return o
}

// piece is what one push releases.
type piece struct {
	reasoning, text string
	stop            string // the stop string that ended the answer
	stopped         bool
}

// push adds the bytes of one token.
func (o *output) push(b []byte) piece {
	switch o.phase {
	case phaseStart:
		o.start = append(o.start, b...)
		trimmed := bytes.TrimLeft(o.start, " \t\r\n")
		switch {
		case bytes.HasPrefix(trimmed, []byte(thinkOpen)):
			o.phase = phaseThinking
			return o.push(trimmed[len(thinkOpen):])
		case bytes.HasPrefix([]byte(thinkOpen), trimmed):
			return piece{} // may still become <think>
		}
		o.phase = phaseAnswer
		return o.push(o.start)
	case phaseThinking:
		r, _, closed := o.reasoning.push(b)
		if !closed {
			return piece{reasoning: r}
		}
		o.phase, o.trimming = phaseAnswer, true
		p := o.push(o.reasoning.rest())
		p.reasoning = r + p.reasoning
		return p
	}
	if o.trimming {
		b = bytes.TrimLeft(b, " \t\r\n")
		if len(b) == 0 {
			return piece{}
		}
		o.trimming = false
	}
	text, stop, stopped := o.answer.push(b)
	return piece{text: text, stop: stop, stopped: stopped}
}

// flush releases what is held back once generation has ended without a
// stop string: an unfinished thinking section stays reasoning.
func (o *output) flush() piece {
	switch o.phase {
	case phaseStart:
		return piece{text: o.answer.flushBytes(o.start)}
	case phaseThinking:
		return piece{reasoning: o.reasoning.flush()}
	}
	return piece{text: o.answer.flush()}
}

// thinking reports whether the output is inside a thinking section.
func (o *output) thinking() bool { return o.phase == phaseThinking }

// opensThinking reports whether a rendered prompt ends inside a thinking
// section, as templates that start the model's turn with <think> do.
func opensThinking(prompt string) bool {
	open := bytes.LastIndex([]byte(prompt), []byte(thinkOpen))
	return open >= 0 && open > bytes.LastIndex([]byte(prompt), []byte(thinkClose))
}
