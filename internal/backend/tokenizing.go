package backend

import "fmt"

// Tokenizing safely with llama.cpp's tokenizer.
//
// llama.cpp's llama_tokenize, in every build, is not safe for text from a
// request:
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
// by the limit rather than by its length. The llama.cpp backends share
// this driver (Tokenizing) and give it their library's call.

// Vocab is what Tokenizing needs of a vocabulary, read once per model.
type Vocab struct {
	Specials Specials
	// SPM: a SentencePiece vocabulary (its chunks are cut at spaces
	// only; see ChunkEnd).
	SPM bool
	// SpacePrefix: the tokenizer puts a space before the text of every
	// call (SPM's add_space_prefix).
	SpacePrefix bool
	// Chunk is the most bytes given to the library at once, 0 for no
	// limit: BPEChunk bounds the depth of std::regex's recursion;
	// SPMChunk only bounds the work done past the limit.
	Chunk int
}

// Tokenizing is one tokenization of a prompt: set its fields, then call
// Run once. It is not safe for concurrent use.
type Tokenizing struct {
	Vocab *Vocab
	// Limit, when > 0, is the most tokens Run gives before it fails with
	// an error wrapping ErrTooManyTokens.
	Limit int
	// BOS is put first when it is >= 0 and the tokens do not start with
	// it.
	BOS Token
	// Plain appends to out the tokens of text, which holds no special
	// token's text that is to become that token: the library's tokenizer
	// with nothing added and no special tokens parsed.
	Plain func(text string, out []Token) ([]Token, error)

	// Sent is the bytes given to Plain, Forced the chunks cut where no
	// word ends; tests read them.
	Sent, Forced int

	out []Token
	// plain is text waiting to be tokenized: what follows the last special
	// token (and may continue in the next segment).
	plain []byte
	// rstrip: the last special token swallows the whitespace after it.
	rstrip bool
	// atStart: nothing has been tokenized yet, or the last thing was a
	// special token (SPM then puts a space before the next text).
	atStart bool
}

// Run tokenizes the text of segs, in order, as one text: special tokens
// are matched as Segment says, and the text between them is tokenized
// plainly.
func (t *Tokenizing) Run(segs []Segment) ([]Token, error) {
	t.atStart = true
	for _, s := range segs {
		if err := t.segment(s); err != nil {
			return nil, err
		}
	}
	if err := t.flush(); err != nil {
		return nil, err
	}
	if t.BOS >= 0 && (len(t.out) == 0 || t.out[0] != t.BOS) {
		t.out = append([]Token{t.BOS}, t.out...)
		if t.Limit > 0 && len(t.out) > t.Limit {
			return nil, t.tooMany()
		}
	}
	return t.out, nil
}

func (t *Tokenizing) tooMany() error {
	return fmt.Errorf("%w: more than %d", ErrTooManyTokens, t.Limit)
}

// segment matches the special tokens of s and queues the text between.
func (t *Tokenizing) segment(s Segment) error {
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
		if !t.Vocab.Specials.Begins(text[i]) {
			i++
			continue
		}
		sp, n := t.Vocab.Specials.Longest(text[i:], s.Data)
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
		t.out = append(t.out, sp.ID)
		if t.Limit > 0 && len(t.out) > t.Limit {
			return t.tooMany()
		}
		t.atStart, t.rstrip = true, sp.RStrip
		i += n
		from = i
	}
	t.plain = append(t.plain, text[from:]...)
	return nil
}

// flush tokenizes the queued text, chunk by chunk.
func (t *Tokenizing) flush() error {
	text := string(t.plain)
	t.plain = t.plain[:0]
	for len(text) > 0 {
		n := len(text)
		if t.Vocab.Chunk > 0 && n > t.Vocab.Chunk {
			var forced bool
			n, forced = ChunkEnd(text, t.Vocab.Chunk, t.Vocab.SPM)
			if forced {
				t.Forced++
			}
		}
		chunk := text[:n]
		text = text[n:]
		if !t.atStart && t.Vocab.SpacePrefix && chunk[0] == ' ' {
			// The tokenizer puts back the space it takes from the start of
			// every call.
			chunk = chunk[1:]
		}
		if chunk == "" {
			continue
		}
		toks, err := t.Plain(chunk, t.out)
		if err != nil {
			return err
		}
		t.Sent += len(chunk)
		t.out = toks
		t.atStart = false
		if t.Limit > 0 && len(t.out) > t.Limit {
			return t.tooMany()
		}
	}
	return nil
}

func isSpaceByte(b byte) bool {
	switch b {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}
