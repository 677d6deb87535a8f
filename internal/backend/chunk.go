package backend

import (
	"unicode"
	"unicode/utf8"
)

// Cutting long texts into chunks.
//
// Both backends hand their library's tokenizer the text between special
// tokens in chunks of bounded size, so that a limit on tokens stops the
// work early and no library sees a run long enough to hurt it (llama.cpp's
// std::regex recurses once per character of a match). A chunk ends where
// the pre-tokenizer splits words anyway, so that the chunks give the
// tokens of the whole text, and both backends cut a text at the same
// places, so that they agree on its tokens even where a cut is forced.

// Chunk sizes, in bytes, by the vocabulary's kind: byte-level BPE, whose
// pre-tokenizer splits words, and SentencePiece, whose chunks only bound
// the work done past a limit.
const (
	BPEChunk = 2048
	SPMChunk = 64 << 10
)

// ChunkEnd returns where to end the first chunk of text, at most max
// bytes, at a place where the pre-tokenizer splits words anyway. It
// prefers the last space after a word (every pre-tokenizer starts a word
// there), then, but for SentencePiece (spm), the end of a run of letters;
// failing both, the last character boundary, and it reports that the cut
// is forced; failing that too (no UTF-8), max. spm restricts the first to
// a space after a letter or digit (SentencePiece vocabularies have a few
// pieces such as ">▁</"). A text of at most max bytes is one chunk.
func ChunkEnd(text string, max int, spm bool) (n int, forced bool) {
	if len(text) <= max {
		return len(text), false
	}
	var wordAt, boundary int
	for i := max; i > 0; {
		r, size := utf8.DecodeLastRuneInString(text[:i])
		if boundary == 0 && utf8.RuneStart(text[i]) {
			boundary = i
		}
		next, _ := utf8.DecodeRuneInString(text[i:])
		if next == ' ' && !unicode.IsSpace(r) && (!spm || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return i, false
		}
		if !spm && wordAt == 0 && endsWord(r, next) {
			wordAt = i
		}
		i -= size
	}
	switch {
	case wordAt > 0:
		return wordAt, false
	case boundary > 0:
		return boundary, true
	}
	return max, true
}

// WordBreak reports whether byte-level BPE pre-tokenizers end a word
// between r and next: before a space that follows another character, or
// at the end of a run of letters followed by what no word continues with.
func WordBreak(r, next rune) bool {
	return next == ' ' && !unicode.IsSpace(r) || endsWord(r, next)
}

// endsWord reports whether a word of letters ends between r and next:
// next is not a letter, a mark, an apostrophe (contractions) or a space.
func endsWord(r, next rune) bool {
	return unicode.IsLetter(r) && !unicode.IsLetter(next) && !unicode.Is(unicode.M, next) &&
		next != '\'' && next != '’' && !unicode.IsSpace(next)
}
