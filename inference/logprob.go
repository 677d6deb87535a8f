package inference

// MaxTopLogprobs is the most alternatives Request.TopLogprobs may ask for
// at each token.
const MaxTopLogprobs = 20

// MaxChoices is the most completions one Request may ask for
// (Request.Choices).
const MaxChoices = 16

// TokenLogprob is one generated token and its log-probability under the
// model: a log-softmax of the token's logits over the whole vocabulary,
// in float64, before sampling's temperature, penalties and truncation,
// so that it does not depend on how the token was sampled.
type TokenLogprob struct {
	// Token is the vocabulary entry's id.
	Token int
	// Bytes are the bytes the token stands for; a token may hold part of
	// a UTF-8 character.
	Bytes []byte
	// Logprob is the token's natural-log probability, at most 0.
	Logprob float64
	// Top are the most likely tokens at this position, most likely first
	// (ties by lower id), as many as the request's TopLogprobs.
	Top []TopLogprob
}

// TopLogprob is one of the most likely tokens at a position.
type TopLogprob struct {
	Token   int
	Bytes   []byte
	Logprob float64
}
