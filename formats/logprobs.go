package formats

import (
	"github.com/inferkit/inferkit/inference"
)

// TokenLogprob is one token of an answer and its log-probability, as the
// chat and responses styles write it: the token's text, its bytes as
// numbers (a token may hold part of a UTF-8 character) and the most
// likely tokens at its position.
type TokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []TopLogprob `json:"top_logprobs"`
}

// TopLogprob is one of the most likely tokens at a position.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// SetLogprobs sets r's Logprobs and TopLogprobs from a style's
// logprobs switch and its number of alternatives: top (the parameter
// named topParam), 0 to inference.MaxTopLogprobs, needs logprobs true,
// as OpenAI has it. It fails with a *RequestError on topParam.
func (r *Request) SetLogprobs(on *bool, top *int, topParam string) error {
	r.Logprobs = on != nil && *on
	if top == nil {
		return nil
	}
	if *top < 0 || *top > inference.MaxTopLogprobs {
		return Invalid(topParam, "%s must be 0 to %d, got %d", topParam, inference.MaxTopLogprobs, *top)
	}
	if *top > 0 && !r.Logprobs {
		return Invalid(topParam, "%s needs logprobs to be true", topParam)
	}
	r.TopLogprobs = *top
	return nil
}
