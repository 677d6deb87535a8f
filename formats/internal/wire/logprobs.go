package wire

import (
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
			top[k] = formats.TopLogprob{Token: formats.TokenText(t.Bytes), Logprob: t.Logprob, Bytes: byteValues(t.Bytes)}
		}
		out[i] = formats.TokenLogprob{Token: formats.TokenText(lp.Bytes), Logprob: lp.Logprob, Bytes: byteValues(lp.Bytes), TopLogprobs: top}
	}
	return out
}
