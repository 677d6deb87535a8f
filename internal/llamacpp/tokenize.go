package llamacpp

/*
#include "llama.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/inferkit/inferkit/internal/backend"
)

// Tokenizing safely.
//
// llama.cpp's llama_tokenize is not safe for text from a request:
//
//   - Most BPE pre-tokenizers (Qwen2, DeepSeek, GPT-4o, ...) run
//     libstdc++'s std::regex, which recurses once per character of a
//     match: a run of about 27,000 characters of one class (spaces,
//     letters, CJK) overflows the thread's stack.
//   - Its special-token partition walks a linked list from its head for
//     every match: m occurrences of a special token's text cost O(m²).
//   - With parse_special it turns control-token text such as <|im_end|>
//     into those tokens, wherever the text came from.
//
// So the special tokens are matched here, in one pass over the text, and
// llama.cpp only ever sees plain text without them, in chunks of bounded
// size cut where the pre-tokenizer splits words anyway: the tokens are
// those of one call on the whole text, but for runs longer than a chunk
// with nowhere to cut, which no real text has. Tokenizing stops as soon
// as the tokens pass the caller's limit, so the cost of a text is bounded
// by the limit rather than by its length.

// Segment is a piece of prompt text (backend.Segment): Data marks text
// from a request, whose control tokens' text stays text.
type Segment = backend.Segment

// ErrTooManyTokens is returned, wrapped, when a text gives more tokens
// than the limit given to Model.TokenizeSegments (backend.ErrTooManyTokens).
var ErrTooManyTokens = backend.ErrTooManyTokens

// vocabulary is what tokenizing needs of a model's vocabulary, read once.
type vocabulary struct {
	specials backend.Specials
	kind     C.enum_llama_vocab_type
	// spacePrefix: the tokenizer puts a space before the text of every
	// call (SPM's add_space_prefix).
	spacePrefix bool
	// chunk is the most bytes given to llama_tokenize at once, 0 for no
	// limit: a BPE chunk (backend.BPEChunk) bounds the depth of
	// std::regex's recursion (a few hundred bytes of stack a character);
	// SPM runs no regex, and its chunks only bound the work done past the
	// limit.
	chunk int
}

func (m *Model) vocabulary() *vocabulary {
	m.tok.once.Do(func() {
		v := &vocabulary{kind: C.llama_vocab_type(m.vocab)}
		for t := range Token(m.nVocab) {
			attr := C.llama_vocab_get_attr(m.vocab, C.llama_token(t))
			if attr&(C.LLAMA_TOKEN_ATTR_CONTROL|C.LLAMA_TOKEN_ATTR_USER_DEFINED|C.LLAMA_TOKEN_ATTR_UNKNOWN) == 0 {
				continue
			}
			kind := backend.UserDefined
			switch {
			case attr&C.LLAMA_TOKEN_ATTR_UNKNOWN != 0:
				kind = backend.Unknown
			case attr&C.LLAMA_TOKEN_ATTR_CONTROL != 0:
				kind = backend.Control
			}
			v.specials.Add(m.TokenText(t), backend.Special{
				ID:     t,
				Kind:   kind,
				LStrip: attr&C.LLAMA_TOKEN_ATTR_LSTRIP != 0,
				RStrip: attr&C.LLAMA_TOKEN_ATTR_RSTRIP != 0,
			})
		}
		switch v.kind {
		case C.LLAMA_VOCAB_TYPE_BPE:
			v.chunk = backend.BPEChunk
		case C.LLAMA_VOCAB_TYPE_SPM:
			v.chunk = backend.SPMChunk
			if toks, err := m.tokenizeChunk("a", nil, false); err == nil && len(toks) > 0 {
				v.spacePrefix = len(m.Piece(toks[0], false)) > 0 && m.Piece(toks[0], false)[0] == ' '
			}
		}
		m.tok.vocab = v
	})
	return m.tok.vocab
}

// TokenizeSegments tokenizes the text of segs, in order, as one text:
// special tokens are matched as Segment says, and the text between them
// is tokenized plainly. addBOS puts BOS first when the model wants one
// and the text does not start with it. With limit > 0, a text that gives
// more than limit tokens fails with an error wrapping ErrTooManyTokens as
// soon as that is known.
func (m *Model) TokenizeSegments(segs []Segment, addBOS bool, limit int) ([]Token, error) {
	t := tokenizing{m: m, v: m.vocabulary(), limit: limit}
	return t.run(segs, addBOS)
}

func (t *tokenizing) run(segs []Segment, addBOS bool) ([]Token, error) {
	m, limit := t.m, t.limit
	t.atStart = true
	if bos := m.BOS(); addBOS && m.AddsBOS() && bos >= 0 {
		t.bos = bos
	} else {
		t.bos = -1
	}
	for _, s := range segs {
		if err := t.segment(s); err != nil {
			return nil, err
		}
	}
	if err := t.flush(); err != nil {
		return nil, err
	}
	if t.bos >= 0 && (len(t.out) == 0 || t.out[0] != t.bos) {
		t.out = append([]Token{t.bos}, t.out...)
		if limit > 0 && len(t.out) > limit {
			return nil, t.tooMany()
		}
	}
	return t.out, nil
}

// Tokenize tokenizes text: its special-token text becomes those tokens
// when special is set, and stays text (but for user-defined tokens)
// otherwise. No BOS is added.
func (m *Model) Tokenize(text string, special bool) ([]Token, error) {
	return m.TokenizeSegments([]Segment{{Text: text, Data: !special}}, false, 0)
}

// tokenizing is one call of TokenizeSegments.
type tokenizing struct {
	m     *Model
	v     *vocabulary
	limit int
	bos   Token
	out   []Token
	// plain is text waiting to be tokenized: what follows the last special
	// token (and may continue in the next segment).
	plain []byte
	// rstrip: the last special token swallows the whitespace after it.
	rstrip bool
	// atStart: nothing has been tokenized yet, or the last thing was a
	// special token (SPM then puts a space before the next text).
	atStart bool
	// For tests: the bytes given to llama_tokenize, and the chunks cut
	// where no word ends.
	sent, forced int
}

func (t *tokenizing) tooMany() error {
	return fmt.Errorf("%w: more than %d", ErrTooManyTokens, t.limit)
}

// segment matches the special tokens of s and queues the text between.
func (t *tokenizing) segment(s Segment) error {
	text := s.Text
	from := 0 // start of the text not yet queued
	for i := 0; i < len(text); {
		if t.rstrip {
			if isSpaceByte(text[i]) {
				i++
				from = i
				continue
			}
			t.rstrip = false
		}
		if !t.v.specials.Begins(text[i]) {
			i++
			continue
		}
		sp, n := t.v.specials.Longest(text[i:], s.Data)
		if n == 0 {
			i++
			continue
		}
		t.plain = append(t.plain, text[from:i]...)
		if sp.LStrip {
			for len(t.plain) > 0 && isSpaceByte(t.plain[len(t.plain)-1]) {
				t.plain = t.plain[:len(t.plain)-1]
			}
		}
		if err := t.flush(); err != nil {
			return err
		}
		if err := t.emit(sp.ID); err != nil {
			return err
		}
		t.atStart, t.rstrip = true, sp.RStrip
		i += n
		from = i
	}
	t.plain = append(t.plain, text[from:]...)
	return nil
}

func (t *tokenizing) emit(toks ...Token) error {
	t.out = append(t.out, toks...)
	if t.limit > 0 && len(t.out) > t.limit {
		return t.tooMany()
	}
	return nil
}

// flush tokenizes the queued text, chunk by chunk.
func (t *tokenizing) flush() error {
	text := string(t.plain)
	t.plain = t.plain[:0]
	for len(text) > 0 {
		n := len(text)
		if t.v.chunk > 0 && n > t.v.chunk {
			var forced bool
			n, forced = backend.ChunkEnd(text, t.v.chunk, t.v.kind == C.LLAMA_VOCAB_TYPE_SPM)
			if forced {
				t.forced++
			}
		}
		chunk := text[:n]
		text = text[n:]
		if !t.atStart && t.v.spacePrefix && chunk[0] == ' ' {
			// The tokenizer puts back the space it takes from the start of
			// every call.
			chunk = chunk[1:]
		}
		if chunk == "" {
			continue
		}
		toks, err := t.m.tokenizeChunk(chunk, t.out, false)
		if err != nil {
			return err
		}
		t.sent += len(chunk)
		t.out = toks
		t.atStart = false
		if t.limit > 0 && len(t.out) > t.limit {
			return t.tooMany()
		}
	}
	return nil
}

// tokenizeChunk appends the tokens of text to out as llama_tokenize gives
// them: none added, and special tokens parsed only with parseSpecial,
// which tests use to compare with llama.cpp's own parsing.
func (m *Model) tokenizeChunk(text string, out []Token, parseSpecial bool) ([]Token, error) {
	if len(text) > 1<<30 {
		return nil, fmt.Errorf("llamacpp: tokenize: text of %d bytes", len(text))
	}
	if !utf8.ValidString(text) && C.llama_vocab_type(m.vocab) != C.LLAMA_VOCAB_TYPE_SPM {
		// The tokenizers but SPM decode the text as UTF-8 and throw, which
		// aborts the process, on a code point past U+10FFFF: every byte
		// of an invalid sequence becomes U+FFFD first, as in Ollama's
		// tokenizers. (SPM spells such bytes in byte tokens.)
		var b strings.Builder
		for _, r := range text {
			b.WriteRune(r)
		}
		text = b.String()
	}
	n := len(text) + 2
	for range 2 {
		out = append(out, make([]Token, n)...)
		buf := out[len(out)-n:]
		got := C.llama_tokenize(m.vocab, (*C.char)(unsafe.Pointer(unsafe.StringData(text))), C.int32_t(len(text)),
			(*C.llama_token)(unsafe.Pointer(&buf[0])), C.int32_t(n), false, C.bool(parseSpecial))
		out = out[:len(out)-n]
		if got >= 0 {
			return append(out, buf[:got]...), nil
		}
		n = int(-got)
	}
	return nil, errors.New("llamacpp: tokenize failed")
}

func isSpaceByte(b byte) bool {
	switch b {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// vocabState is the part of Model that tokenizing reads once.
type vocabState struct {
	once  sync.Once
	vocab *vocabulary
}

// ReplaceControlText returns text with the text of every control token in
// it replaced by repl(token).
func (m *Model) ReplaceControlText(text string, repl func(Token) string) string {
	return m.vocabulary().specials.ReplaceMarkup(text, repl)
}
