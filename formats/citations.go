package formats

import "unicode/utf8"

// charIndex converts a byte offset in text, as inference.Citation and
// inference.SearchCall.At give them, into the character (code point)
// index that the OpenAI styles' start_index and end_index count.
func charIndex(text string, off int) int {
	off = min(max(off, 0), len(text))
	return utf8.RuneCountInString(text[:off])
}
