package inference

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/runner"
)

// imageSpan is an image inside a prompt: its tokens' embeddings, decoded
// at the prompt positions start to start+rows.Tokens().
type imageSpan struct {
	start int
	rows  *backend.Embeddings
	// whole: the tokens are decoded in one batch with causal attention
	// off (backend.Projector.NonCausal).
	whole bool
}

func (sp imageSpan) end() int { return sp.start + sp.rows.Tokens() }

// posAt is the position of the prompt's i-th token, or of what follows its
// first i tokens: i, less what the images before it save. An image on an
// M-RoPE model takes fewer positions than tokens: max(GridX, GridY).
func (w *work) posAt(i int) int {
	pos := i
	for _, sp := range w.images {
		if sp.end() <= i {
			pos -= sp.rows.Tokens() - sp.rows.Positions
		}
	}
	return pos
}

// imageTokens are the stand-ins of an image's n tokens in a prompt. They
// are negative, so never a vocabulary id, and drawn from a hash of the
// image's bytes, so that the prompt cache matches an image only to itself:
// a different image differs at its first token but with odds of 2^-31, and
// at every one of its tokens but with odds of 2^-31 per token.
func imageTokens(img []byte, n int) []backend.Token {
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

// reusable is how much of prompt a sequence holding cache can keep: their
// common prefix, at most limit, and never part of an image: a prefix that
// stops inside an image's tokens backs off to where the image starts, since
// an image's tokens are decoded together, from its embeddings.
func reusable(cache, prompt []backend.Token, limit int) int {
	n := min(runner.CommonPrefix(cache, prompt), limit)
	for n > 0 && n < len(prompt) && prompt[n] < 0 && prompt[n-1] < 0 {
		n--
	}
	return n
}
