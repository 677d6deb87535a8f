package chat

import (
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
)

// Logprobs are a chat choice's log-probabilities: content's tokens.
// Refusal is always null: a model here never refuses apart from its
// answer.
type Logprobs struct {
	Content []formats.TokenLogprob `json:"content"`
	Refusal *[]struct{}            `json:"refusal"`
}

// logprobsOf returns a choice's logprobs object for entries, or nil (null)
// when the request did not ask for them.
func logprobsOf(req formats.Request, lps []inference.TokenLogprob) *Logprobs {
	if !req.Logprobs {
		return nil
	}
	return &Logprobs{Content: wire.TokenLogprobs(lps)}
}
