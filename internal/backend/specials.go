package backend

import "iter"

// SpecialKind is the kind of a special token, which says where its text is
// matched in prompts.
type SpecialKind uint8

// The kinds of special tokens.
const (
	// UserDefined tokens' texts are matched everywhere, request data
	// included, as Hugging Face tokenizers do.
	UserDefined SpecialKind = iota
	// Control tokens' texts (<|im_end|>, <start_of_turn>) are matched
	// outside request data only.
	Control
	// Unknown is the vocabulary's unknown token, matched as Control.
	Unknown
)

// Special is a token whose text is matched in prompts.
type Special struct {
	ID   Token
	Kind SpecialKind
	// LStrip and RStrip: the token swallows the whitespace before or after
	// it (llama.cpp's token attributes).
	LStrip, RStrip bool
}

// MarkupOnly reports whether sp's text is matched outside request data
// only: it is a control or the unknown token.
func (sp Special) MarkupOnly() bool { return sp.Kind != UserDefined }

// Specials is the special tokens of a vocabulary, found by their texts at
// the start of a text: a trie of their bytes. The zero value is empty and
// ready to use; it is not safe to Add while other goroutines read.
type Specials struct {
	nodes []specialNode
	first [256]bool // the texts' first bytes
}

type specialNode struct {
	edges []specialEdge
	sp    Special
	ok    bool // a text ends here: sp's
}

type specialEdge struct {
	b    byte
	node int32
}

func (s *Specials) child(n int, b byte) int {
	for _, e := range s.nodes[n].edges {
		if e.b == b {
			return int(e.node)
		}
	}
	return -1
}

// Add adds sp with its text. A text keeps the first token added with it,
// and an empty text matches nothing: Add reports whether sp was added.
func (s *Specials) Add(text string, sp Special) bool {
	if text == "" {
		return false
	}
	if len(s.nodes) == 0 {
		s.nodes = append(s.nodes, specialNode{})
	}
	n := 0
	for i := 0; i < len(text); i++ {
		c := s.child(n, text[i])
		if c < 0 {
			c = len(s.nodes)
			s.nodes[n].edges = append(s.nodes[n].edges, specialEdge{text[i], int32(c)})
			s.nodes = append(s.nodes, specialNode{})
		}
		n = c
	}
	if s.nodes[n].ok {
		return false
	}
	s.nodes[n].sp, s.nodes[n].ok = sp, true
	s.first[text[0]] = true
	return true
}

// Begins reports whether some token's text begins with b: where it does
// not, no token is found at that byte, which a scan tests first.
func (s *Specials) Begins(b byte) bool { return s.first[b] }

// Longest returns the token with the longest text that text starts with,
// and the length of that text, 0 for none. In request data (data),
// tokens that are MarkupOnly are not matched.
func (s *Specials) Longest(text string, data bool) (sp Special, n int) {
	node := 0
	for i := 0; i < len(text) && len(s.nodes) > 0; i++ {
		if node = s.child(node, text[i]); node < 0 {
			break
		}
		if nd := &s.nodes[node]; nd.ok && !(data && nd.sp.MarkupOnly()) {
			sp, n = nd.sp, i+1
		}
	}
	return sp, n
}

// Prefixes yields every token whose text text starts with, the shortest
// first, with the length of its text.
func (s *Specials) Prefixes(text string) iter.Seq2[Special, int] {
	return func(yield func(Special, int) bool) {
		node := 0
		for i := 0; i < len(text) && len(s.nodes) > 0; i++ {
			if node = s.child(node, text[i]); node < 0 {
				return
			}
			if nd := &s.nodes[node]; nd.ok && !yield(nd.sp, i+1) {
				return
			}
		}
	}
}

// ReplaceMarkup returns text with the text of every MarkupOnly token in
// it replaced by repl(token), matched as in markup: the longest text at
// each place, from the left.
func (s *Specials) ReplaceMarkup(text string, repl func(Token) string) string {
	var b []byte
	from := 0
	for i := 0; i < len(text); {
		if !s.first[text[i]] {
			i++
			continue
		}
		sp, n := s.Longest(text[i:], false)
		if n == 0 || !sp.MarkupOnly() {
			i++
			continue
		}
		b = append(b, text[from:i]...)
		b = append(b, repl(sp.ID)...)
		i += n
		from = i
	}
	if b == nil {
		return text
	}
	return string(append(b, text[from:]...))
}
