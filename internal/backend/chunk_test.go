package backend

import "testing"

// Chunks end where the text allows it: after a word and before a space
// first, at the end of a run of letters next, inside a run only when
// nothing else is left, and never inside a character.
func TestChunkEnd(t *testing.T) {
	tests := []struct {
		text   string
		max    int
		spm    bool
		want   int
		forced bool
	}{
		{"hello world foo", 12, false, 11, false},
		{"hello world foo", 5, false, 5, false},
		{"a.b.c.d.e.f", 6, false, 5, false},
		{"aaaaaaaaaa", 4, false, 4, true},
		{"中中中中", 7, false, 6, true},
		{"x  y", 2, false, 1, false},
		{"a's b", 3, false, 3, false},
		{"ab'cd", 3, false, 3, true},
		{">  </", 3, true, 3, true},
		{"ab cd", 4, true, 2, false},
		{"a.b.c.d.e.f", 6, true, 6, true}, // SentencePiece: no word ends at "."
		{"\xff\xff\xff\xff", 2, false, 2, true},
		{"short", 5, false, 5, false},
		{"", 4, true, 0, false},
	}
	for _, tt := range tests {
		n, forced := ChunkEnd(tt.text, tt.max, tt.spm)
		if n != tt.want || forced != tt.forced {
			t.Errorf("ChunkEnd(%q, %d, spm=%v) = %d, %v; want %d, %v", tt.text, tt.max, tt.spm, n, forced, tt.want, tt.forced)
		}
	}
}

func TestWordBreak(t *testing.T) {
	tests := []struct {
		r, next rune
		want    bool
	}{
		{'a', ' ', true},   // a space after a word
		{'.', ' ', true},   // after any other character
		{' ', ' ', false},  // a run of spaces goes on
		{'\n', ' ', false}, // as does whitespace
		{'a', '.', true},   // a run of letters ends
		{'é', '|', true},
		{'a', 'b', false},
		{'a', '\u0301', false}, // a combining mark continues the word
		{'a', '\'', false},     // contractions
		{'a', '’', false},
		{'a', '\n', false},
		{'1', '.', false}, // digits are not letters
		{'.', '.', false},
	}
	for _, tt := range tests {
		if got := WordBreak(tt.r, tt.next); got != tt.want {
			t.Errorf("WordBreak(%q, %q) = %v, want %v", tt.r, tt.next, got, tt.want)
		}
	}
}
