package inference

import (
	"errors"
	"fmt"
)

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

// FieldError is an invalid request whose fault lies in one field. It
// wraps ErrInvalidRequest; callers that speak a wire format map Field to
// their own parameter name.
type FieldError struct {
	// Field is the field's path in the Request or ScoreRequest, such as
	// "Temperature", "Format.Schema", "Tools[2].Parameters", "Messages[1]"
	// or "Branches[0].Text".
	Field string
	// Reason says what is wrong with it, for the client.
	Reason string
}

// Error returns "inference: invalid request: Field: Reason".
func (e *FieldError) Error() string {
	return ErrInvalidRequest.Error() + ": " + e.Field + ": " + e.Reason
}

// Unwrap returns ErrInvalidRequest.
func (e *FieldError) Unwrap() error { return ErrInvalidRequest }

// fieldError returns a *FieldError.
func fieldError(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
