package runner

import "github.com/inferkit/inferkit/internal/backend"

// The n-gram lengths that Ngram matches, longest first.
const (
	ngramMax = 4
	ngramMin = 2
)

// Ngram is a Drafter that needs no second model: it proposes the tokens
// that followed the most recent earlier occurrence, in the sequence's own
// prompt and output, of its last few tokens (prompt lookup decoding). It
// drafts well where the output copies its prompt (quoting, editing,
// summarising, code) or repeats itself, and proposes nothing elsewhere,
// which costs nothing. Its zero value is ready to use; it keeps no
// state, and Close does nothing.
type Ngram struct{}

// Draft appends the up to k tokens that followed the latest earlier
// occurrence of the longest of tokens' last 4, 3 or 2 tokens.
func (Ngram) Draft(_ int, tokens []backend.Token, k int, buf []backend.Token) []backend.Token {
	for n := min(ngramMax, len(tokens)-1); n >= ngramMin; n-- {
		tail := tokens[len(tokens)-n:]
		// Occurrences ending before the last token, latest first.
		for end := len(tokens) - 1; end >= n; end-- {
			if !equalTokens(tokens[end-n:end], tail) {
				continue
			}
			for _, t := range tokens[end:min(len(tokens), end+k)] {
				if t < 0 {
					break // an image's place holds no token
				}
				buf = append(buf, t)
			}
			return buf
		}
	}
	return buf
}

// Close does nothing.
func (Ngram) Close() {}

func equalTokens(a, b []backend.Token) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}
