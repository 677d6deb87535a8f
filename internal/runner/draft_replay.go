package runner

import (
	"slices"

	"github.com/inferkit/inferkit/internal/backend"
)

// Replay is a Drafter for measuring speculative decoding at a chosen
// acceptance rate, in tests and benchmarks: it knows a sequence's
// continuation, Want (its prompt and the output of a run without
// drafting), and proposes its next tokens, each right at Percent of the
// positions (chosen by a hash of the position, so that runs agree) and
// another token at the others. A sequence that has left Want gets no
// proposal. With Want empty it proposes nothing and records, in Seen,
// the longest tokens it was asked to follow: the Want of a later run. It
// is not safe for concurrent use; set its fields between runs. Close
// does nothing.
type Replay struct {
	Want    []backend.Token
	Percent int
	Seen    []backend.Token
}

// Draft proposes Want's next up to k tokens after tokens.
func (d *Replay) Draft(_ int, tokens []backend.Token, k int, buf []backend.Token) []backend.Token {
	if len(d.Want) == 0 {
		if len(tokens) > len(d.Seen) {
			d.Seen = slices.Clone(tokens)
		}
		return buf
	}
	if len(tokens) > len(d.Want) || !slices.Equal(tokens, d.Want[:len(tokens)]) {
		return buf
	}
	for p := len(tokens); p < min(len(d.Want), len(tokens)+k); p++ {
		t := d.Want[p]
		if int(replayHash(uint64(p))%100) >= d.Percent {
			t ^= 1 // wrong, and still a token of the vocabulary
		}
		buf = append(buf, t)
	}
	return buf
}

// Close does nothing.
func (d *Replay) Close() {}

// replayHash is SplitMix64's finaliser.
func replayHash(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
