//go:build cgo

package goengine

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/inferkit/inferkit/internal/backend"
)

// controlTexts finds the texts of a vocabulary's control tokens in a
// string, longest first at each position.
type controlTexts struct {
	ids     map[string]backend.Token
	lengths []int     // the texts' distinct lengths, longest first
	starts  [256]bool // the texts' first bytes
}

func newControlTexts(ids map[string]backend.Token) controlTexts {
	c := controlTexts{ids: map[string]backend.Token{}}
	for s, id := range ids {
		if s == "" {
			continue
		}
		c.ids[s] = id
		c.starts[s[0]] = true
		if !slices.Contains(c.lengths, len(s)) {
			c.lengths = append(c.lengths, len(s))
		}
	}
	slices.SortFunc(c.lengths, func(a, b int) int { return b - a })
	return c
}

// next returns the first control text in s at or after byte from: its
// start, length and token, or -1.
func (c *controlTexts) next(s string, from int) (at, n int, id backend.Token) {
	for i := from; i < len(s); i++ {
		if !c.starts[s[i]] {
			continue
		}
		for _, l := range c.lengths {
			if i+l <= len(s) {
				if id, ok := c.ids[s[i:i+l]]; ok {
					return i, l, id
				}
			}
		}
	}
	return -1, 0, 0
}

// chunk is the most bytes of plain text encoded at once, cut before a
// space where there is one, so that a limit stops the work early.
const chunk = 4096

// TokenizeSegments tokenizes segs: the text of control tokens becomes those
// tokens outside data segments only; user-defined tokens' text becomes
// those tokens everywhere.
func (m *Model) TokenizeSegments(segs []backend.Segment, addBOS bool, limit int) ([]backend.Token, error) {
	var out []backend.Token
	if addBOS && m.AddsBOS() {
		out = append(out, m.vocab.BOS[0])
	}
	for _, s := range segs {
		var err error
		if s.Data {
			out, err = m.encodeData(out, s.Text, limit)
		} else {
			out, err = m.encodePlain(out, s.Text, limit)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Tokenize tokenizes text alone, the text of control tokens becoming
// those tokens when special is set.
func (m *Model) Tokenize(text string, special bool) ([]backend.Token, error) {
	return m.TokenizeSegments([]backend.Segment{{Text: text, Data: !special}}, false, 0)
}

// encodeData appends the tokens of request text: a control token's text
// is cut after its first character, so that the tokenizer, which matches
// every special token's text, sees none.
func (m *Model) encodeData(out []backend.Token, s string, limit int) ([]backend.Token, error) {
	var err error
	for s != "" {
		at, _, _ := m.control.next(s, 0)
		if at < 0 {
			return m.encodePlain(out, s, limit)
		}
		_, size := utf8.DecodeRuneInString(s[at:])
		if out, err = m.encodePlain(out, s[:at+size], limit); err != nil {
			return nil, err
		}
		s = s[at+size:]
	}
	return out, nil
}

// encodePlain appends the tokens of s, in chunks, stopping with
// ErrTooManyTokens past limit (when limit > 0).
func (m *Model) encodePlain(out []backend.Token, s string, limit int) ([]backend.Token, error) {
	for s != "" {
		n := len(s)
		if n > chunk {
			n = chunk
			if sp := strings.LastIndexByte(s[:n], ' '); sp > 0 {
				n = sp
			} else {
				for n > 0 && !utf8.RuneStart(s[n]) {
					n--
				}
			}
		}
		ids, err := m.tok.Encode(s[:n], false)
		if err != nil {
			return nil, fmt.Errorf("goengine: tokenizing: %w", err)
		}
		out = append(out, ids...)
		if limit > 0 && len(out) > limit {
			return nil, fmt.Errorf("goengine: %w (%d)", backend.ErrTooManyTokens, limit)
		}
		s = s[n:]
	}
	return out, nil
}

// ReplaceControlText replaces the text of every control token in text with
// repl's string for it.
func (m *Model) ReplaceControlText(text string, repl func(backend.Token) string) string {
	var b strings.Builder
	from := 0
	for {
		at, n, id := m.control.next(text, from)
		if at < 0 {
			if from == 0 {
				return text
			}
			b.WriteString(text[from:])
			return b.String()
		}
		b.WriteString(text[from:at])
		b.WriteString(repl(id))
		from = at + n
	}
}
