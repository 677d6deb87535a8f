//go:build cgo

package goengine

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/ollama/ollama/model"
	"github.com/ollama/ollama/tokenizer"
)

// Tokenizing as llama.cpp does, with Ollama's tokenizer.
//
// The tokens of a prompt are those the llama.cpp backend
// (internal/llamacpp) gives for the same file. That backend matches the
// special tokens of each segment itself, the longest at each place:
// control and unknown tokens outside request data only, user-defined ones
// everywhere. The text between them, carried across segments, goes to
// llama.cpp's tokenizer in chunks, which again takes user-defined tokens'
// texts for those tokens, the longest tokens first, but not control
// tokens'. Ollama's tokenizer differs from that in ways this file works
// around:
//
//   - Its Encode takes the text of every control and user-defined token
//     for that token, wherever it is, trying the tokens in vocabulary
//     order rather than the longest first (Gemma's user-defined "\n"
//     before "\n\n", "  " before "   "), and never the unknown token's.
//     Here the special tokens are matched as above, and Ollama's tokenizer
//     only encodes the text between them.
//   - That text may still hold a control token's text: in request data,
//     or across two segments. A SentencePiece vocabulary is encoded by a
//     tokenizer of its own that knows no special tokens, so that the text
//     stays text. Other vocabularies are encoded by the model's own
//     tokenizer, with the text cut inside each such place, at the end of a
//     run of letters ("<|im" + "_end|>"), where every byte-level
//     pre-tokenizer ends a word anyway, so that the cut changes no token;
//     failing one, after its first character.
//   - SentencePiece: llama.cpp puts a space in front of the text at the
//     start and after each special token where
//     tokenizer.ggml.add_space_prefix is set (or missing); Ollama's never
//     does. And llama.cpp spells with byte tokens the bytes it takes for a
//     character that is not valid UTF-8, where Ollama's spells U+FFFD:
//     here those bytes are spelled with byte tokens as llama.cpp groups
//     them.
//   - Pieces: Ollama's decoding drops the NUL byte from byte-level BPE
//     tokens, decodes user-defined tokens' texts, and gives unknown and
//     unused tokens their texts; here they are llama.cpp's.
//   - BOS is not added to a text that starts with it.
//
// Long texts are encoded in chunks cut where the llama.cpp backend cuts
// them, so that a limit stops the work early and a forced cut, in a run
// with nowhere to cut, falls where the other backend's does.
//
// What cannot be mended from outside Ollama's tokenizer, which the tests
// document (tokenize_test.go):
//   - Its byte-level BPE applies merges of equal rank in the order of a
//     heap, not leftmost first as llama.cpp and Hugging Face do, so that
//     runs of a repeated character or pair ("----------", "!!!!!!!!!!",
//     "bananana", long runs of spaces) can be split into other tokens,
//     which spell the same text.
//   - Its pre-tokenizers read \s as RE2 does, ASCII whitespace only,
//     where llama.cpp's take Unicode spaces too (U+0085, U+00A0, U+2003,
//     ...): a space before one of those joins it in Ollama's.

// textTokens is what tokenizing needs of a model's vocabulary, read at
// load.
type textTokens struct {
	specials backend.Specials
	// controlFirst are the first bytes of control tokens' texts, which
	// Ollama's tokenizer takes for those tokens.
	controlFirst [256]bool
	// userDefined are the user-defined tokens, the longest first, as
	// llama.cpp matches them in plain text.
	userDefined []userToken
	// plain encodes the text between special tokens. But for spm, it
	// takes control tokens' texts for those tokens, so texts are cut
	// there (cutControl).
	plain tokenizer.Tokenizer
	// spm: a SentencePiece vocabulary, spelling with byte tokens (bytes)
	// the characters it lacks; spacePrefix: a space goes before the text
	// at the start and after special tokens.
	spm         bool
	spacePrefix bool
	bytes       [256]backend.Token
	// chunk is the most bytes encoded at once (backend.BPEChunk or
	// SPMChunk, as in the llama.cpp backend); spmCuts: chunks are cut as
	// for SentencePiece (no pre-tokenizer splits the text).
	chunk   int
	spmCuts bool
}

type userToken struct {
	text string
	id   backend.Token
}

// readTextTokens reads the special tokens, picks the tokenizer of the text
// between them, and mends the pieces of tokens that Ollama decodes wrong.
func (m *Model) readTextTokens() {
	v, tt := m.vocab, &m.text
	for i, s := range v.Values {
		id := backend.Token(i)
		typ := m.typeOf(id)
		if s == "" || typ != tokenizer.TOKEN_TYPE_CONTROL && typ != tokenizer.TOKEN_TYPE_UNKNOWN && typ != tokenizer.TOKEN_TYPE_USER_DEFINED {
			continue
		}
		sp := backend.Special{ID: id, Kind: backend.UserDefined}
		switch typ {
		case tokenizer.TOKEN_TYPE_CONTROL:
			sp.Kind = backend.Control
		case tokenizer.TOKEN_TYPE_UNKNOWN:
			sp.Kind = backend.Unknown
		}
		if !tt.specials.Add(s, sp) {
			continue
		}
		switch sp.Kind {
		case backend.UserDefined:
			tt.userDefined = append(tt.userDefined, userToken{s, id})
		case backend.Control:
			tt.controlFirst[s[0]] = true
		}
	}
	slices.SortStableFunc(tt.userDefined, func(a, b userToken) int { return len(b.text) - len(a.text) })
	tt.plain, tt.chunk = m.tok, backend.BPEChunk
	kind := m.kv.String("tokenizer.ggml.model")
	if tt.spmCuts = kind != "gpt2"; tt.spmCuts {
		tt.chunk = backend.SPMChunk
	}
	m.mendPieces(kind == "gpt2")
	if _, ok := embeddedTokenizer(m.m).(tokenizer.SentencePiece); ok {
		tt.spm = true
		tt.plain = plainSentencePiece(v)
		prefix, set := m.kv.Value("tokenizer.ggml.add_space_prefix").(bool)
		tt.spacePrefix = prefix || !set
		for i := range tt.bytes {
			tt.bytes[i] = -1
		}
		for i, s := range v.Values {
			if len(s) == 6 && s[:3] == "<0x" && s[5] == '>' {
				if b, err := strconv.ParseUint(s[3:5], 16, 8); err == nil && tt.bytes[b] < 0 {
					tt.bytes[b] = backend.Token(i)
				}
			}
		}
	}
}

// mendPieces gives tokens the pieces llama.cpp gives them, where Ollama's
// decoding differs: a user-defined token's piece is its text as it is; an
// unknown token's is empty (Piece gives its text as a control token's, to
// special only); tokens of other kinds than normal, user-defined and, in
// SentencePiece, byte have none; and in byte-level BPE the NUL byte, which
// Ollama drops, is kept.
func (m *Model) mendPieces(byteLevel bool) {
	for i, s := range m.vocab.Values {
		switch m.typeOf(backend.Token(i)) {
		case tokenizer.TOKEN_TYPE_NORMAL:
			if byteLevel && strings.ContainsRune(s, 0x100) {
				m.pieces[i] = byteLevelText(s)
			}
		case tokenizer.TOKEN_TYPE_USER_DEFINED:
			m.pieces[i] = s
		case tokenizer.TOKEN_TYPE_BYTE:
			if byteLevel {
				m.pieces[i] = ""
			}
		default:
			m.pieces[i] = ""
		}
	}
}

// byteLevelText returns the bytes that a byte-level BPE token's text
// stands for, in GPT-2's encoding: the printable bytes stand for
// themselves, the others, in order, for U+0100 to U+0143; other code
// points stand for their UTF-8.
func byteLevelText(s string) string {
	var b []byte
	for _, r := range s {
		switch {
		case r < 0x100:
			b = append(b, byte(r))
		case r <= 0x120:
			b = append(b, byte(r-0x100)) // 0x00 to 0x20
		case r <= 0x142:
			b = append(b, byte(r-0x121+0x7f)) // 0x7F to 0xA0
		case r == 0x143:
			b = append(b, 0xad)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return string(b)
}

// embeddedTokenizer returns the tokenizer an Ollama model holds in its
// field Tokenizer, or nil.
func embeddedTokenizer(m model.Model) tokenizer.Tokenizer {
	v := reflect.ValueOf(m)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	f := v.FieldByName("Tokenizer")
	if !f.IsValid() || !f.CanInterface() {
		return nil
	}
	t, _ := f.Interface().(tokenizer.Tokenizer)
	return t
}

// plainSentencePiece makes a SentencePiece tokenizer of v that matches no
// special token's text: user-defined tokens are ordinary pieces, and
// control and unknown tokens have texts that no text spells (invalid
// UTF-8), so that neither a merge nor a whole text gives them.
func plainSentencePiece(v *tokenizer.Vocabulary) tokenizer.Tokenizer {
	values, types := slices.Clone(v.Values), slices.Clone(v.Types)
	for i, typ := range types {
		switch typ {
		case tokenizer.TOKEN_TYPE_CONTROL, tokenizer.TOKEN_TYPE_UNKNOWN:
			values[i] = "\xff" + strconv.Itoa(i)
			types[i] = tokenizer.TOKEN_TYPE_NORMAL
		case tokenizer.TOKEN_TYPE_USER_DEFINED:
			types[i] = tokenizer.TOKEN_TYPE_NORMAL
		}
	}
	return tokenizer.NewSentencePiece(&tokenizer.Vocabulary{Values: values, Types: types, Scores: v.Scores})
}

// TokenizeSegments tokenizes the text of segs, in order, as one text:
// special tokens are matched as backend.Segment says, and the text between
// them is tokenized plainly. addBOS puts BOS first when the model wants
// one and the text does not start with it. With limit > 0, a text that
// gives more than limit tokens fails with an error wrapping
// backend.ErrTooManyTokens as soon as that is known. A panic in Ollama's
// tokenizer is returned as an error.
func (m *Model) TokenizeSegments(segs []backend.Segment, addBOS bool, limit int) (_ []backend.Token, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("goengine: tokenizing: %v", r)
		}
	}()
	t := tokenizing{tt: &m.text, limit: limit, atStart: true}
	for _, s := range segs {
		if err := t.segment(s); err != nil {
			return nil, err
		}
	}
	if err := t.flush(); err != nil {
		return nil, err
	}
	if bos := m.BOS(); addBOS && m.AddsBOS() && (len(t.out) == 0 || t.out[0] != bos) {
		t.out = append([]backend.Token{bos}, t.out...)
		if limit > 0 && len(t.out) > limit {
			return nil, t.tooMany()
		}
	}
	return t.out, nil
}

// Tokenize tokenizes text alone, the text of control tokens becoming
// those tokens when special is set. No BOS is added.
func (m *Model) Tokenize(text string, special bool) ([]backend.Token, error) {
	return m.TokenizeSegments([]backend.Segment{{Text: text, Data: !special}}, false, 0)
}

// tokenizing is one call of TokenizeSegments.
type tokenizing struct {
	tt    *textTokens
	limit int
	out   []backend.Token
	// plain is the text after the last special token, not yet encoded.
	plain []byte
	// atStart: nothing is encoded yet, or a special token was last.
	atStart bool
}

func (t *tokenizing) tooMany() error {
	return fmt.Errorf("goengine: %w: more than %d", backend.ErrTooManyTokens, t.limit)
}

func (t *tokenizing) emit(toks ...backend.Token) error {
	t.out = append(t.out, toks...)
	if t.limit > 0 && len(t.out) > t.limit {
		return t.tooMany()
	}
	return nil
}

// segment matches the special tokens of s and queues the text between.
func (t *tokenizing) segment(s backend.Segment) error {
	text, from := s.Text, 0
	for i := 0; i < len(text); {
		if !t.tt.specials.Begins(text[i]) {
			i++
			continue
		}
		sp, n := t.tt.specials.Longest(text[i:], s.Data)
		if n == 0 {
			i++
			continue
		}
		t.plain = append(t.plain, text[from:i]...)
		if err := t.flush(); err != nil {
			return err
		}
		if err := t.emit(sp.ID); err != nil {
			return err
		}
		t.atStart = true
		i += n
		from = i
	}
	t.plain = append(t.plain, text[from:]...)
	return nil
}

// flush encodes the queued text, chunk by chunk.
func (t *tokenizing) flush() error {
	text := string(t.plain)
	t.plain = t.plain[:0]
	for text != "" {
		n := len(text)
		if n > t.tt.chunk {
			n, _ = backend.ChunkEnd(text, t.tt.chunk, t.tt.spmCuts)
		}
		if err := t.encodeChunk(text[:n]); err != nil {
			return err
		}
		text = text[n:]
		t.atStart = false
	}
	return nil
}

// encodeChunk encodes s as llama.cpp does text without special tokens
// parsed: user-defined tokens' texts become those tokens, the longest
// tokens first, and the text between is encoded plainly, after a space
// where the vocabulary wants one.
func (t *tokenizing) encodeChunk(s string) error {
	afterSpecial := t.atStart
	for _, f := range t.tt.partition(s) {
		if f.id >= 0 {
			if err := t.emit(f.id); err != nil {
				return err
			}
			afterSpecial = true
			continue
		}
		text := f.text
		if t.tt.spacePrefix && afterSpecial {
			text = " " + text
		}
		if err := t.encode(text); err != nil {
			return err
		}
		afterSpecial = false
	}
	return nil
}

// fragment is a piece of text (id < 0) or a user-defined token.
type fragment struct {
	text string
	id   backend.Token
}

// partition splits s into user-defined tokens and the text between, as
// llama.cpp does: each token in turn, the longest first, takes its text
// wherever it is left, from the left.
func (tt *textTokens) partition(s string) []fragment {
	var found map[backend.Token]bool
	for i := 0; i < len(s); i++ {
		if !tt.specials.Begins(s[i]) {
			continue
		}
		for sp := range tt.specials.Prefixes(s[i:]) {
			if sp.Kind == backend.UserDefined {
				if found == nil {
					found = map[backend.Token]bool{}
				}
				found[sp.ID] = true
			}
		}
	}
	frags := []fragment{{text: s, id: -1}}
	if found == nil {
		return frags
	}
	for _, u := range tt.userDefined {
		if !found[u.id] {
			continue
		}
		var next []fragment
		for _, f := range frags {
			for f.id < 0 && f.text != "" {
				at := strings.Index(f.text, u.text)
				if at < 0 {
					break
				}
				if at > 0 {
					next = append(next, fragment{text: f.text[:at], id: -1})
				}
				next = append(next, fragment{id: u.id})
				f.text = f.text[at+len(u.text):]
			}
			if f.id >= 0 || f.text != "" {
				next = append(next, f)
			}
		}
		frags = next
	}
	return frags
}

// encode appends the tokens of s, which holds no user-defined token's
// text.
func (t *tokenizing) encode(s string) error {
	if t.tt.spm {
		return t.encodeSentencePiece(s)
	}
	for s != "" {
		c, err := t.tt.cutControl(s)
		if err != nil {
			return err
		}
		if c < 0 {
			break
		}
		if err := t.encodePlain(s[:c]); err != nil {
			return err
		}
		s = s[c:]
	}
	return t.encodePlain(s)
}

// encodeSentencePiece encodes s as llama.cpp's SentencePiece does: with a
// space written "▁", character by character, where a character is as
// many bytes as its first byte says; one that is not valid UTF-8 is spelled
// with byte tokens, and no piece spans it.
func (t *tokenizing) encodeSentencePiece(s string) error {
	b := []byte(strings.ReplaceAll(s, " ", "▁"))
	from := 0
	for i := 0; i < len(b); {
		n := min(leadLength(b[i]), len(b)-i)
		if r, size := utf8.DecodeRune(b[i:]); size == n && (r != utf8.RuneError || size > 1) {
			i += n
			continue
		}
		if err := t.encodePlain(string(b[from:i])); err != nil {
			return err
		}
		for _, c := range b[i : i+n] {
			if id := t.tt.bytes[c]; id >= 0 {
				if err := t.emit(id); err != nil {
					return err
				}
			}
		}
		i += n
		from = i
	}
	return t.encodePlain(string(b[from:]))
}

// leadLength is the length of a UTF-8 sequence by its first byte, as
// llama.cpp reads it: 1 for ASCII and continuation bytes, 4 from 0xF0.
func leadLength(c byte) int {
	switch {
	case c < 0xC0:
		return 1
	case c < 0xE0:
		return 2
	case c < 0xF0:
		return 3
	}
	return 4
}

// encodePlain appends the tokens of s by the plain tokenizer.
func (t *tokenizing) encodePlain(s string) error {
	if s == "" {
		return nil
	}
	ids, err := t.tt.plain.Encode(s, false)
	if err != nil {
		return fmt.Errorf("goengine: tokenizing: %w", err)
	}
	return t.emit(ids...)
}

// cutControl returns where to cut s so that neither side holds a control
// token's text, which the plain tokenizer would take for the token:
// inside the occurrence that ends first, at the end of a word. It returns
// -1 when s holds none.
func (tt *textTokens) cutControl(s string) (int, error) {
	start, end := -1, -1
	for q := 0; q < len(s) && (end < 0 || q < end); q++ {
		if !tt.controlFirst[s[q]] {
			continue
		}
		if n := tt.shortestControl(s[q:]); n > 0 && (end < 0 || q+n < end) {
			start, end = q, q+n
		}
	}
	if start < 0 {
		return -1, nil
	}
	c := wordEnd(s[start:end])
	if c <= 0 {
		return 0, fmt.Errorf("goengine: tokenizing: Ollama's tokenizer takes %q for a control token, and it is one character", s[start:end])
	}
	return start + c, nil
}

// shortestControl returns the length of the shortest text of a control
// token that s starts with, or 0.
func (tt *textTokens) shortestControl(s string) int {
	for sp, n := range tt.specials.Prefixes(s) {
		if sp.Kind == backend.Control {
			return n
		}
	}
	return 0
}

// wordEnd returns a place inside x where byte-level pre-tokenizers end a
// word: before a space that follows another character, or at the end of a
// run of letters followed by what no word continues with; failing both,
// after the first character, or 0 when x is one character.
func wordEnd(x string) int {
	r, size := utf8.DecodeRuneInString(x)
	first := size
	for i := size; i < len(x); i += size {
		next, n := utf8.DecodeRuneInString(x[i:])
		if backend.WordBreak(r, next) {
			return i
		}
		r, size = next, n
	}
	if first < len(x) {
		return first
	}
	return 0
}

// ReplaceControlText returns text with the text of every control (or
// unknown) token in it replaced by repl(token), matched as in markup.
func (m *Model) ReplaceControlText(text string, repl func(backend.Token) string) string {
	return m.text.specials.ReplaceMarkup(text, repl)
}
