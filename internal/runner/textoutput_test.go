package runner

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/inferkit/inferkit/internal/family"
)

// run feeds pieces through a textOutput and returns the emitted text, the
// matched stop string, and every emitted piece.
func run(stops []string, pieces ...string) (text, stop string, emitted []string) {
	o := newTextOutput(stops)
	var b strings.Builder
	for _, p := range pieces {
		e, s, ok := o.push([]byte(p))
		if e != "" {
			emitted = append(emitted, e)
		}
		b.WriteString(e)
		if ok {
			return b.String(), s, emitted
		}
	}
	if rest := o.flush(); rest != "" {
		emitted = append(emitted, rest)
		b.WriteString(rest)
	}
	return b.String(), "", emitted
}

func TestTextOutputStops(t *testing.T) {
	tests := []struct {
		name     string
		stops    []string
		pieces   []string
		wantText string
		wantStop string
	}{
		{"no stops", nil, []string{"Once", " upon"}, "Once upon", ""},
		{"stop in one piece", []string{"END"}, []string{"abc", "END", "more"}, "abc", "END"},
		{"stop across pieces", []string{"<|end|>"}, []string{"hi <|", "en", "d|> tail"}, "hi ", "<|end|>"},
		{"stop inside a piece", []string{"\n\n"}, []string{"line\n\nnext"}, "line", "\n\n"},
		{"false start is emitted", []string{"STOP"}, []string{"ST", "OP"}, "", "STOP"},
		{"partial prefix released", []string{"STOP"}, []string{"ST", "ART"}, "START", ""},
		{"prefix held at end is text", []string{"STOP"}, []string{"go ST"}, "go ST", ""},
		{"earliest of two stops", []string{"b", "ab"}, []string{"xab"}, "x", "ab"},
		{"empty stop ignored", []string{""}, []string{"a"}, "a", ""},
		{"multibyte stop split", []string{"。"}, []string{"好\xe3\x80", "\x82后"}, "好", "。"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, stop, _ := run(tt.stops, tt.pieces...)
			if text != tt.wantText || stop != tt.wantStop {
				t.Errorf("got (%q, %q), want (%q, %q)", text, stop, tt.wantText, tt.wantStop)
			}
		})
	}
}

func TestTextOutputNeverEmitsStopPrefixEarly(t *testing.T) {
	// "ST" must not be emitted while it may still become "STOP".
	_, _, emitted := run([]string{"STOP"}, "a", "S", "T", "O", "P")
	if len(emitted) != 1 || emitted[0] != "a" {
		t.Fatalf("emitted %q, want only \"a\"", emitted)
	}
}

func TestTextOutputUTF8(t *testing.T) {
	const s = "héllo, 世界 🙂!"
	// Feed one byte at a time: every emitted piece must be valid UTF-8 and
	// the whole must come back unchanged.
	var pieces []string
	for i := range len(s) {
		pieces = append(pieces, s[i:i+1])
	}
	text, _, emitted := run(nil, pieces...)
	if text != s {
		t.Fatalf("text %q, want %q", text, s)
	}
	for _, e := range emitted {
		if !utf8.ValidString(e) {
			t.Errorf("emitted invalid UTF-8 %q", e)
		}
	}
}

func TestTextOutputInvalidBytes(t *testing.T) {
	text, _, emitted := run(nil, "a\x9a", "b\xe4", "c")
	if text != "a\uFFFDb\uFFFDc" {
		t.Fatalf("got %q", text)
	}
	for _, e := range emitted {
		if !utf8.ValidString(e) {
			t.Errorf("emitted invalid UTF-8 %q", e)
		}
	}
}

func TestTextOutputTruncatedCharacter(t *testing.T) {
	text, _, _ := run(nil, "ok\xe4\xb8")
	if text != "ok\uFFFD" {
		t.Fatalf("got %q", text)
	}
}

func FuzzTextOutput(f *testing.F) {
	f.Add("hello STOP world", "STOP", 3)
	f.Add("日本語テキスト", "テ", 2)
	f.Fuzz(func(t *testing.T, s, stop string, size int) {
		if size <= 0 || size > 16 {
			size = 1
		}
		var pieces []string
		for i := 0; i < len(s); i += size {
			pieces = append(pieces, s[i:min(i+size, len(s))])
		}
		text, got, emitted := run([]string{stop}, pieces...)
		want := s
		if stop != "" {
			if i := strings.Index(s, stop); i >= 0 {
				want = s[:i]
				if got != stop {
					t.Fatalf("stop %q not reported", stop)
				}
			}
		}
		if utf8.ValidString(s) && text != want {
			t.Fatalf("text %q, want %q", text, want)
		}
		for _, e := range emitted {
			if !utf8.ValidString(e) {
				t.Fatalf("invalid piece %q", e)
			}
		}
	})
}

// boundCall cuts a call of the bound tool once past MaxCall: the tool is
// the offered one whose name comes first in the call's text (the longer
// where two start at the same place), so that the arguments of another
// tool's call may name it freely.
func TestBoundCall(t *testing.T) {
	w := &Work{MaxCall: 20, BoundCall: "search", Tools: []family.Tool{{Name: "search"}, {Name: "search_docs"}, {Name: "note"}}}
	long := strings.Repeat("x", 20)
	for _, c := range []struct {
		call string
		want bool
	}{
		{`{"name": "search", "arguments": {"query": "` + long, true},
		{`{"name": "search"`, false}, // within the bound
		{`{"name": "note", "arguments": {"text": "search ` + long, false},
		{`{"name": "search_docs", "arguments": {"q": "` + long, false},
		{`{"arguments": {"query": "` + long, false}, // no name yet: not known to be the bound tool's
	} {
		if got := boundCall(w, c.call); got != c.want {
			t.Errorf("%q: %v, want %v", c.call, got, c.want)
		}
	}
}
