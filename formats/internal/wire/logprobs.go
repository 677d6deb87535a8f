package wire

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
)

// byteValues returns b as numbers, never null.
func byteValues(b []byte) []int {
	out := make([]int, len(b))
	for i, c := range b {
		out[i] = int(c)
	}
	return out
}

// TokenLogprobs converts the engine's entries, never to null.
func TokenLogprobs(lps []inference.TokenLogprob) []formats.TokenLogprob {
	out := make([]formats.TokenLogprob, len(lps))
	for i, lp := range lps {
		top := make([]formats.TopLogprob, len(lp.Top))
		for k, t := range lp.Top {
			top[k] = formats.TopLogprob{Token: TokenText(t.Bytes), Logprob: t.Logprob, Bytes: byteValues(t.Bytes)}
		}
		out[i] = formats.TokenLogprob{Token: TokenText(lp.Bytes), Logprob: lp.Logprob, Bytes: byteValues(lp.Bytes), TopLogprobs: top}
	}
	return out
}

// TokenText is how a token's bytes are written as text: the text itself
// when the bytes are valid UTF-8, else "bytes:" and each byte as \xNN, as
// OpenAI writes a token that holds part of a character.
func TokenText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var s strings.Builder
	s.WriteString("bytes:")
	for _, c := range b {
		fmt.Fprintf(&s, `\x%02x`, c)
	}
	return s.String()
}
