package runner

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// textOutput turns the byte pieces of generated tokens into text that is
// safe to emit: whole UTF-8 characters only (bytes that can never form one
// become U+FFFD), and nothing that could be the start of a stop string. A matched stop string and everything after it is
// dropped.
type textOutput struct {
	stops   [][]byte
	pending []byte
}

func newTextOutput(stops []string) *textOutput {
	o := &textOutput{}
	for _, s := range stops {
		if s != "" {
			o.stops = append(o.stops, []byte(s))
		}
	}
	return o
}

// push adds the bytes of one token. It returns the text now safe to emit
// and, when a stop string completed, that string.
func (o *textOutput) push(piece []byte) (emit string, stop string, stopped bool) {
	o.pending = append(o.pending, piece...)
	first, which := -1, -1
	for i, s := range o.stops {
		if at := bytes.Index(o.pending, s); at >= 0 && (first < 0 || at < first) {
			first, which = at, i
		}
	}
	if which >= 0 {
		emit = strings.ToValidUTF8(string(o.pending[:first]), "\uFFFD")
		o.pending = append(o.pending[:0], o.pending[first+len(o.stops[which]):]...)
		return emit, string(o.stops[which]), true
	}
	cut := utf8Boundary(o.pending, len(o.pending)-o.stopPrefix())
	emit = strings.ToValidUTF8(string(o.pending[:cut]), "\uFFFD")
	o.pending = append(o.pending[:0], o.pending[cut:]...)
	return emit, "", false
}

// rest returns the bytes that followed a matched stop string in the
// pieces pushed so far.
func (o *textOutput) rest() []byte {
	r := o.pending
	o.pending = nil
	return r
}

// flush returns what is held back once generation has ended without a
// stop string. A character cut off by the end becomes U+FFFD.
func (o *textOutput) flush() string {
	s := strings.ToValidUTF8(string(o.pending), "\uFFFD")
	o.pending = o.pending[:0]
	return s
}

// flushBytes pushes b and flushes: text that ended before any stop string
// could match.
func (o *textOutput) flushBytes(b []byte) string {
	text, _, stopped := o.push(b)
	if stopped {
		return text
	}
	return text + o.flush()
}

// stopPrefix is the length of the longest end of pending that begins a stop
// string.
func (o *textOutput) stopPrefix() int {
	longest := 0
	for _, s := range o.stops {
		for k := min(len(s)-1, len(o.pending)); k > longest; k-- {
			if bytes.HasSuffix(o.pending, s[:k]) {
				longest = k
				break
			}
		}
	}
	return longest
}

// utf8Boundary moves cut back so that b[:cut] does not end inside a UTF-8
// character that may still be completed by later bytes.
func utf8Boundary(b []byte, cut int) int {
	for back := 1; back <= utf8.UTFMax && back <= cut; back++ {
		c := b[cut-back]
		if c < utf8.RuneSelf {
			return cut // ASCII: nothing open
		}
		if utf8.RuneStart(c) {
			if need := seqLen(c); need > back {
				return cut - back // incomplete: hold it back
			}
			return cut
		}
	}
	return cut
}

// seqLen is the length of the UTF-8 sequence that leading byte c starts.
func seqLen(c byte) int {
	switch {
	case c >= 0xF0:
		return 4
	case c >= 0xE0:
		return 3
	case c >= 0xC0:
		return 2
	}
	return 1
}
