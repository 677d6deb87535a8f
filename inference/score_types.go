package inference

import "fmt"

// ScoreRequest asks for the probabilities of candidate next tokens at the
// end of several continuations (branches) of one prefix. The prefix is
// decoded once, reusing the prompt cache like a generation prompt; every
// branch continues it on a sequence of its own that shares the prefix's KV
// cells, and all branches decode in one batch as far as the batch size and
// Config.Branches allow. A branch never sees another branch: the numbers of
// a branch are the same whatever other branches come with it, up to float
// rounding.
type ScoreRequest struct {
	// Model is a model id or alias of the engine's configuration.
	Model string
	// Prefix is raw text; special-token text in it becomes those tokens,
	// and BOS is added where the model wants it and the text lacks it.
	// Each ImageMarker in it stands for the next of Images.
	Prefix string
	// Images are encoded image files (PNG, JPEG or GIF, at most
	// MaxImageSide pixels a side), read by models loaded with a projector
	// (see ModelInfo.Images); each takes the place of one ImageMarker in
	// Prefix, in order. An image's tokens count as prompt tokens, and an
	// identical image (the same bytes) at the same place is taken from the
	// prompt cache like text.
	Images [][]byte
	// Branches continue the prefix: 1 to 256 of them.
	Branches []Branch
}

// PreparedScore is a ScoreRequest that Engine.PrepareScore has checked and
// tokenized, for Engine.RunScore: admission control reads its count
// before any decoding. It holds no resources; run it at most once.
type PreparedScore struct {
	// Request is the request, as given to PrepareScore.
	Request ScoreRequest
	// InputTokens is the number of tokens of the prefix's text and of
	// every branch. Each image adds its tokens when RunScore encodes it.
	InputTokens int

	plan *scorePlan
}

// ImageMarker stands for an image in ScoreRequest.Prefix.
const ImageMarker = "<__media__>"

// ImageError reports an image of a request that the model cannot read.
type ImageError struct {
	// Index is the image's position in the request's Images.
	Index int
	// Reason says what is wrong, such as "not a readable image".
	Reason string
}

func (e *ImageError) Error() string {
	return fmt.Sprintf("inference: image %d: %s", e.Index, e.Reason)
}

// Unwrap makes an ImageError match ErrInvalidRequest.
func (e *ImageError) Unwrap() error { return ErrInvalidRequest }

// Branch is one continuation of a ScoreRequest's prefix.
type Branch struct {
	// Text follows the prefix (special-token text parsed); it must give at
	// least one token. The candidates are scored after its last token.
	Text string
	// Candidates are the continuations whose probabilities are wanted,
	// each a sequence of 1 to MaxCandidateTokens token ids (see
	// Engine.Tokenize); 1 to MaxCandidates of them. A candidate's
	// probability is the product of its tokens' next-token probabilities,
	// each after the branch and the candidate's tokens before it.
	// Candidates that start alike share the decoding of their common
	// tokens: they form a tree after the branch, whose inner nodes each
	// take a sequence of Config.Branches while the branch decodes (see
	// Engine.PrepareScore). A candidate that is a prefix of another gets
	// the probability of that prefix, which includes the other's.
	Candidates [][]int
}

// Bounds of a Branch's candidates.
const (
	MaxCandidates      = 1024
	MaxCandidateTokens = 16
)

// ScoreResult holds the scores of a ScoreRequest's branches, in order.
type ScoreResult struct {
	Branches []BranchScore
	// Usage counts the prefix and every branch as prompt tokens; its
	// CachedTokens is the part of the prefix taken from the prompt cache.
	// Nothing is generated.
	Usage Usage
}

// BranchScore is what the model predicts after one branch.
type BranchScore struct {
	// LogProbs are the natural logarithms of the candidates'
	// probabilities: each token's from a softmax over the whole
	// vocabulary, in float64, summed over the candidate's tokens.
	LogProbs []float64
	// Probabilities are exp(LogProbs).
	Probabilities []float64
}
