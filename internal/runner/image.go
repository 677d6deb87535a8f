package runner

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/inferkit/inferkit/internal/backend"
)

// ImageSpan is an image inside a prompt: its tokens' embeddings, decoded
// at the prompt positions Start to Start+Rows.Tokens(). Rows must be set.
type ImageSpan struct {
	Start int
	Rows  *backend.Embeddings
	// Whole: the tokens are decoded in one batch with causal attention
	// off (backend.Projector.NonCausal).
	Whole bool
}

// End is the prompt index just after the image's tokens.
func (sp ImageSpan) End() int { return sp.Start + sp.Rows.Tokens() }

// PosAt is the position of a prompt's i-th token, or of what follows its
// first i tokens, given the prompt's images in order: i, less what the
// images before it save. An image on an M-RoPE model takes fewer
// positions than tokens: max(GridX, GridY).
func PosAt(images []ImageSpan, i int) int {
	pos := i
	for _, sp := range images {
		if sp.End() <= i {
			pos -= sp.Rows.Tokens() - sp.Rows.Positions
		}
	}
	return pos
}

// ImageTokens are the stand-ins of an image's n tokens in a prompt. They
// are negative, so never a vocabulary id, and drawn from a hash of the
// image's bytes, so that the prompt cache matches an image only to itself:
// a different image differs at its first token but with odds of 2^-31, and
// at every one of its tokens but with odds of 2^-31 per token.
func ImageTokens(img []byte, n int) []backend.Token {
	sum := sha256.Sum256(img)
	seed := binary.LittleEndian.Uint64(sum[:8])
	out := make([]backend.Token, n)
	for i := range out {
		// splitmix64 of the i-th step from the seed.
		x := seed + uint64(i+1)*0x9e3779b97f4a7c15
		x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
		x = (x ^ x>>27) * 0x94d049bb133111eb
		x ^= x >> 31
		out[i] = -1 - backend.Token(x>>33)
	}
	return out
}

// Reusable is how much of prompt a sequence holding cache can keep: their
// common prefix, at most limit, and never part of an image: a prefix that
// stops inside an image's tokens backs off to where the image starts, since
// an image's tokens are decoded together, from its embeddings.
func Reusable(cache, prompt []backend.Token, limit int) int {
	n := min(CommonPrefix(cache, prompt), limit)
	for n > 0 && n < len(prompt) && prompt[n] < 0 && prompt[n-1] < 0 {
		n--
	}
	return n
}
