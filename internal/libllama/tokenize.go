package libllama

/*
#include "api.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/inferkit/inferkit/internal/backend"
)

// vocabulary is what tokenizing needs of a model's vocabulary, read once.
type vocabulary struct {
	backend.Vocab
	kind C.int32_t
}

func (m *Model) vocabulary() *vocabulary {
	m.vocabOnce.Do(func() {
		kind := C.ikl_llama_vocab_type(m.api, m.vocab)
		attr := func(t Token) int32 { return int32(C.ikl_llama_vocab_get_attr(m.api, m.vocab, C.llama_token(t))) }
		m.tokVocab = &vocabulary{kind: kind, Vocab: backend.LlamaVocab(m.nVocab, int32(kind), attr, m.TokenText, m.firstPiece)}
	})
	return m.tokVocab
}

// firstPiece is the piece of the first token of "a", or nil.
func (m *Model) firstPiece() []byte {
	toks, err := m.tokenizeChunk("a", nil, false)
	if err != nil || len(toks) == 0 {
		return nil
	}
	return m.Piece(toks[0], false)
}

// TokenizeSegments tokenizes the text of segs as one text; request text
// (Data) never becomes control tokens (backend.Tokenizing).
func (m *Model) TokenizeSegments(segs []backend.Segment, addBOS bool, limit int) ([]Token, error) {
	return m.tokenizing(m.vocabulary(), limit, addBOS).Run(segs)
}

func (m *Model) tokenizing(v *vocabulary, limit int, addBOS bool) *backend.Tokenizing {
	t := &backend.Tokenizing{Vocab: &v.Vocab, Limit: limit, BOS: -1, Plain: func(text string, out []Token) ([]Token, error) {
		return m.tokenizeChunk(text, out, false)
	}}
	if bos := m.BOS(); addBOS && m.AddsBOS() && bos >= 0 {
		t.BOS = bos
	}
	return t
}

// Tokenize tokenizes text alone; special makes control tokens' text
// those tokens. No BOS is added.
func (m *Model) Tokenize(text string, special bool) ([]Token, error) {
	return m.TokenizeSegments([]backend.Segment{{Text: text, Data: !special}}, false, 0)
}

// ReplaceControlText replaces the text of every control token in text.
func (m *Model) ReplaceControlText(text string, repl func(Token) string) string {
	return m.vocabulary().Specials.ReplaceMarkup(text, repl)
}

// tokenizeChunk appends the tokens of text to out as llama_tokenize gives
// them: nothing added, special tokens parsed only with parseSpecial
// (tests compare with the library's own parsing).
func (m *Model) tokenizeChunk(text string, out []Token, parseSpecial bool) ([]Token, error) {
	if len(text) > 1<<30 {
		return nil, fmt.Errorf("libllama: tokenize: text of %d bytes", len(text))
	}
	if !utf8.ValidString(text) && C.ikl_llama_vocab_type(m.api, m.vocab) != C.IKL_VOCAB_SPM {
		// The tokenizers but SPM throw on invalid UTF-8, which aborts
		// the process: every byte of an invalid sequence becomes U+FFFD
		// first.
		var b strings.Builder
		for _, r := range text {
			b.WriteRune(r)
		}
		text = b.String()
	}
	if text == "" {
		return out, nil
	}
	n := len(text) + 2
	for range 2 {
		out = append(out, make([]Token, n)...)
		buf := out[len(out)-n:]
		got := C.ikl_llama_tokenize(m.api, m.vocab, (*C.char)(unsafe.Pointer(unsafe.StringData(text))), C.int32_t(len(text)),
			(*C.llama_token)(unsafe.Pointer(&buf[0])), C.int32_t(n), false, C.bool(parseSpecial))
		out = out[:len(out)-n]
		if got >= 0 {
			return append(out, buf[:got]...), nil
		}
		if got == -1<<31 {
			break
		}
		n = int(-got)
	}
	return nil, errors.New("libllama: tokenize failed")
}
