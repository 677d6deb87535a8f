package family

// This file holds the one streaming splitter of the families that mark
// thinking and calls with text in their output: a family describes its
// markers, and splitter follows them.

import "strings"

// callReader reads the body of a call (or of a block of calls) written
// in one syntax; tools are the offered tools, for the types of values
// written as bare text and for the names a bare call may have. false
// means the body is not a call.
//
// cut says that the token limit cut the body: a reader of a series of
// calls then returns those complete before the cut and drops the one cut,
// false when none is complete or what comes before the cut is not calls;
// a reader of one call a body reads it as it would an uncut one.
type callReader func(body string, tools []Tool, cut bool) ([]Call, bool)

// markers is how a family marks thinking and calls in its output.
type markers struct {
	// thinkOpen and thinkClose delimit a thinking section; "" for a
	// family that does not think.
	thinkOpen, thinkClose string
	// thinkAnywhere lets a thinking section open inside the answer (a
	// special token such as [THINK] or Gemma 4's channel), not only at
	// its start.
	thinkAnywhere bool
	// thinkLabel is dropped where it starts a thinking section, as the
	// channel name "thought\n" after Gemma 4's <|channel>.
	thinkLabel string
	// callEndsThinking says callOpen also ends a thinking section, as
	// Nemotron sometimes skips </think>.
	callEndsThinking bool

	// callOpen starts a call (or a block of calls) in the answer; "" for
	// a family without marked calls.
	callOpen string
	// callClose ends it; "" means the call runs to the end of the output.
	callClose string
	// read reads what callOpen (or a lead marker) starts.
	read callReader
	// lead are markers that, at the start of the answer, say that the
	// rest of the output is a call (Llama 4's <|python_start|>).
	lead []string
	// bare reads an answer that starts with JSON, { or [, as calls of
	// offered tools; nil when the family never writes bare calls. Such an
	// answer is held to its end when tools are offered.
	bare callReader
	// drop are markers removed from the answer text (Granite's
	// <response>).
	drop []string
}

type splitPhase int

const (
	atStart    splitPhase = iota // nothing but white space yet: thinking may open
	inThinking                   // a thinking section
	atAnswer                     // the answer's start: a lead marker or a bare call may come
	inText                       // the answer's text
	inCall                       // a call that callClose ends
	inRest                       // a call that the end of the output ends
)

// splitter splits one output into reasoning, answer text and calls by a
// family's markers. Markers and the white space next to them are part of
// neither text nor reasoning; text that may still become a marker, with
// the white space before it, is held back. A call is released whole once
// it ends; one that does not read as a call is released as the text it
// was; one the token limit cut is dropped.
type splitter struct {
	m       markers
	tools   []Tool
	opened  bool // the prompt opened a thinking section
	phase   splitPhase
	pending string // output not yet released
	trim    bool   // drop white space before the next text or reasoning
	labeled bool   // the thinking label was looked for
	gap     string // the white space before the call's marker
	open    string // the marker that started the call
	isBare  bool   // the call is a bare answer, read by m.bare
}

// newSplitter returns a parser of output marked by m. A prompt that
// opened a thinking section (cfg.Thinking) starts it, though the output
// may still open it again.
func newSplitter(m markers, cfg ParserConfig) *splitter {
	if len(cfg.Tools) == 0 {
		// No tools offered: what reads as a call is text.
		m.callOpen, m.callClose, m.lead, m.bare, m.callEndsThinking = "", "", nil, nil, false
	}
	return &splitter{m: m, tools: cfg.Tools, opened: cfg.Thinking && m.thinkOpen != "", trim: true}
}

// Thinking implements Parser.
func (s *splitter) Thinking() bool {
	return s.phase == inThinking || s.phase == atStart && s.opened
}

// Calling implements Parser.
func (s *splitter) Calling() string {
	if s.phase == inCall || s.phase == inRest {
		return s.pending
	}
	return ""
}

// Push implements Parser.
func (s *splitter) Push(text string) Output {
	s.pending += text
	var out Output
	s.step(&out)
	return out
}

// step releases what pending allows, moving through phases.
func (s *splitter) step(out *Output) {
	for {
		if s.trim && s.phase != inCall && s.phase != inRest {
			if s.pending = trimSpace(s.pending); s.pending == "" {
				return
			}
			s.trim = false
		}
		switch s.phase {
		case atStart:
			if s.m.thinkOpen != "" {
				if strings.HasPrefix(s.pending, s.m.thinkOpen) {
					s.pending = s.pending[len(s.m.thinkOpen):]
					s.phase, s.trim, s.labeled = inThinking, true, false
					continue
				}
				if strings.HasPrefix(s.m.thinkOpen, s.pending) {
					return // may still open thinking
				}
			}
			s.phase, s.labeled = atAnswer, true
			if s.opened {
				s.phase = inThinking
			}
		case inThinking:
			if !s.labeled && s.m.thinkLabel != "" {
				if strings.HasPrefix(s.pending, s.m.thinkLabel) {
					s.pending = s.pending[len(s.m.thinkLabel):]
					s.labeled, s.trim = true, true
					continue
				}
				if strings.HasPrefix(s.m.thinkLabel, s.pending) {
					return // may still be the label
				}
			}
			s.labeled = true
			ends := []string{s.m.thinkClose}
			if s.m.callEndsThinking {
				ends = append(ends, s.m.callOpen)
			}
			at, m := firstMarker(s.pending, ends)
			if at < 0 {
				out.Reasoning += s.release(ends)
				return
			}
			out.Reasoning += strings.TrimRight(s.pending[:at], spaces)
			s.pending = s.pending[at+len(m):]
			s.phase, s.trim = atAnswer, true
			if m != s.m.thinkClose {
				s.startCall("", m)
			}
		case atAnswer:
			if m := prefixOf(s.pending, s.m.lead); m != "" {
				s.pending = s.pending[len(m):]
				s.open, s.gap, s.phase = m, "", inRest
				continue
			}
			if maybePrefix(s.pending, s.m.lead) {
				return
			}
			s.phase = inText
			if s.m.bare != nil && len(s.tools) > 0 && (s.pending[0] == '{' || s.pending[0] == '[') {
				s.open, s.gap, s.phase, s.isBare = "", "", inRest, true
			}
		case inText:
			ms := s.textMarkers()
			at, m := firstMarker(s.pending, ms)
			if at < 0 {
				out.Text += s.release(ms)
				return
			}
			before := strings.TrimRight(s.pending[:at], spaces)
			out.Text += before
			gap := s.pending[len(before):at]
			s.pending = s.pending[at+len(m):]
			switch m {
			case s.m.callOpen:
				s.startCall(gap, m)
			case s.m.thinkOpen:
				s.phase, s.trim, s.labeled = inThinking, true, false
			}
			// A dropped marker is skipped, with the white space before it.
		case inCall:
			at := strings.Index(s.pending, s.m.callClose)
			if at < 0 {
				return
			}
			body := s.pending[:at]
			s.pending = s.pending[at+len(s.m.callClose):]
			s.phase = inText
			if calls, ok := s.m.read(body, s.tools, false); ok {
				out.Calls = append(out.Calls, calls...)
				s.trim = true // white space after a call goes with it
			} else {
				out.Text += s.gap + s.open + body + s.m.callClose
			}
		case inRest:
			return // held to the end of the output
		}
	}
}

// startCall enters the call that marker m starts, after the white space
// gap.
func (s *splitter) startCall(gap, m string) {
	s.gap, s.open, s.phase, s.trim = gap, m, inCall, false
	if s.m.callClose == "" {
		s.phase = inRest
	}
}

// textMarkers are the markers looked for in the answer's text.
func (s *splitter) textMarkers() []string {
	var ms []string
	if s.m.callOpen != "" {
		ms = append(ms, s.m.callOpen)
	}
	if s.m.thinkAnywhere {
		ms = append(ms, s.m.thinkOpen)
	}
	return append(ms, s.m.drop...)
}

// release takes from pending what cannot be the start of one of markers,
// nor white space that a marker may follow (and that it then drops).
func (s *splitter) release(markers []string) string {
	keep := holdLen(s.pending, markers)
	out := strings.TrimRight(s.pending[:len(s.pending)-keep], spaces)
	s.pending = s.pending[len(out):]
	return out
}

// Flush implements Parser.
func (s *splitter) Flush(truncated bool) Output {
	var out Output
	rest := s.pending
	switch s.phase {
	case atStart:
		if s.opened {
			out.Reasoning = rest
		} else {
			out.Text = rest
		}
	case inThinking:
		out.Reasoning = strings.TrimRight(rest, spaces)
	case atAnswer, inText:
		if !s.trim {
			out.Text = rest
		}
	case inCall, inRest:
		read := s.m.read
		if s.isBare {
			read = s.m.bare
		}
		calls, ok := read(rest, s.tools, false) // the end of the output ended it
		if !ok && truncated {
			// The calls complete before the cut, though the cut fell in
			// the marker that closes them.
			body := rest
			if s.phase == inCall {
				body = rest[:len(rest)-holdLen(rest, []string{s.m.callClose})]
			}
			calls, ok = read(body, s.tools, true)
		}
		switch {
		case ok:
			out.Calls = calls
		case !truncated || s.isBare:
			// A bare answer cut short may be JSON meant as text.
			out.Text = s.gap + s.open + rest
		}
	}
	s.pending, s.phase, s.trim, s.isBare = "", inText, true, false
	return out
}

// spaces is the white space next to markers that splitter drops.
const spaces = " \t\r\n"

// trimSpace drops leading white space.
func trimSpace(s string) string { return strings.TrimLeft(s, spaces) }

// prefixOf returns the marker that s starts with, or "".
func prefixOf(s string, markers []string) string {
	for _, m := range markers {
		if strings.HasPrefix(s, m) {
			return m
		}
	}
	return ""
}

// maybePrefix reports whether s may still grow into one of markers.
func maybePrefix(s string, markers []string) bool {
	for _, m := range markers {
		if len(s) < len(m) && strings.HasPrefix(m, s) {
			return true
		}
	}
	return false
}

// firstMarker returns where the earliest of markers occurs in s, and
// which; -1 if none does.
func firstMarker(s string, markers []string) (int, string) {
	at, which := -1, ""
	for _, m := range markers {
		if m == "" {
			continue
		}
		if i := strings.Index(s, m); i >= 0 && (at < 0 || i < at) {
			at, which = i, m
		}
	}
	return at, which
}

// holdLen is the length of the longest end of s that may be the start of
// one of markers.
func holdLen(s string, markers []string) int {
	keep := 0
	for _, m := range markers {
		for k := min(len(m)-1, len(s)); k > keep; k-- {
			if strings.HasSuffix(s, m[:k]) {
				keep = k
				break
			}
		}
	}
	return keep
}
