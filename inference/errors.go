package inference

import "errors"

// Errors callers branch on. Errors returned by the engine wrap these.
var (
	// ErrModelNotFound: the request names no configured model.
	ErrModelNotFound = errors.New("inference: model not found")
	// ErrOverloaded: the model's queue is full; retry later.
	ErrOverloaded = errors.New("inference: overloaded")
	// ErrContextLength: the prompt and MaxTokens do not fit in a sequence's
	// context.
	ErrContextLength = errors.New("inference: context length exceeded")
	// ErrInvalidRequest: the request is malformed (no messages or prompt, a
	// bad sampling value).
	ErrInvalidRequest = errors.New("inference: invalid request")
	// ErrClosed: the engine is closed.
	ErrClosed = errors.New("inference: engine closed")
)
