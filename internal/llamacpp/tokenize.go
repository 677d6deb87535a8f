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

// Tokenizing: backend.Tokenizing matches the special tokens itself and
// gives llama_tokenize plain text only, in chunks of bounded size (see
// there for why).

// Segment is a piece of prompt text (backend.Segment): Data marks text
// from a request, whose control tokens' text stays text.
type Segment = backend.Segment

// ErrTooManyTokens is returned, wrapped, when a text gives more tokens
// than the limit given to Model.TokenizeSegments (backend.ErrTooManyTokens).
var ErrTooManyTokens = backend.ErrTooManyTokens

// vocabulary is what tokenizing needs of a model's vocabulary, read once.
type vocabulary struct {
	backend.Vocab
	kind C.enum_llama_vocab_type
}

func (m *Model) vocabulary() *vocabulary {
	m.tok.once.Do(func() {
		kind := C.llama_vocab_type(m.vocab)
		attr := func(t Token) int32 { return int32(C.llama_vocab_get_attr(m.vocab, C.llama_token(t))) }
		m.tok.vocab = &vocabulary{kind: kind, Vocab: backend.LlamaVocab(m.nVocab, int32(kind), attr, m.TokenText, m.firstPiece)}
	})
	return m.tok.vocab
}

// firstPiece is the piece of the first token of "a", or nil.
func (m *Model) firstPiece() []byte {
	toks, err := m.tokenizeChunk("a", nil, false)
	if err != nil || len(toks) == 0 {
		return nil
	}
	return m.Piece(toks[0], false)
}

// TokenizeSegments tokenizes the text of segs, in order, as one text:
// special tokens are matched as Segment says, and the text between them
// is tokenized plainly. addBOS puts BOS first when the model wants one
// and the text does not start with it. With limit > 0, a text that gives
// more than limit tokens fails with an error wrapping ErrTooManyTokens as
// soon as that is known.
func (m *Model) TokenizeSegments(segs []Segment, addBOS bool, limit int) ([]Token, error) {
	t := m.tokenizing(m.vocabulary(), limit, addBOS)
	return t.Run(segs)
}

// tokenizing sets up one tokenization with vocabulary v.
func (m *Model) tokenizing(v *vocabulary, limit int, addBOS bool) *backend.Tokenizing {
	t := &backend.Tokenizing{Vocab: &v.Vocab, Limit: limit, BOS: -1, Plain: func(text string, out []Token) ([]Token, error) {
		return m.tokenizeChunk(text, out, false)
	}}
	if bos := m.BOS(); addBOS && m.AddsBOS() && bos >= 0 {
		t.BOS = bos
	}
	return t
}

// Tokenize tokenizes text: its special-token text becomes those tokens
// when special is set, and stays text (but for user-defined tokens)
// otherwise. No BOS is added.
func (m *Model) Tokenize(text string, special bool) ([]Token, error) {
	return m.TokenizeSegments([]Segment{{Text: text, Data: !special}}, false, 0)
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

// vocabState is the part of Model that tokenizing reads once.
type vocabState struct {
	once  sync.Once
	vocab *vocabulary
}

// ReplaceControlText returns text with the text of every control token in
// it replaced by repl(token).
func (m *Model) ReplaceControlText(text string, repl func(Token) string) string {
	return m.vocabulary().Specials.ReplaceMarkup(text, repl)
}
