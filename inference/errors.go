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

// FieldError is a request refused for one of its fields. Callers that
// speak a wire format map Field to their own parameter name.
type FieldError struct {
	// Field is the field's path in the Request or ScoreRequest, such as
	// "Temperature", "Format.Schema", "Tools[2].Parameters", "Messages[1]"
	// or "Branches[0].Text".
	Field string
	// Reason says what is wrong with it, for the client.
	Reason string
	// Err is the sentinel it wraps: ErrContextLength for a prompt
	// (Field "Messages" or "Prompt") or an output limit ("MaxTokens")
	// that does not fit in the context; nil means ErrInvalidRequest.
	Err error
}

// Error returns the sentinel's message, then "Field: Reason".
func (e *FieldError) Error() string {
	return e.Unwrap().Error() + ": " + e.Field + ": " + e.Reason
}

// Unwrap returns Err, or ErrInvalidRequest.
func (e *FieldError) Unwrap() error {
	if e.Err != nil {
		return e.Err
	}
	return ErrInvalidRequest
}

// fieldError returns a *FieldError.
func fieldError(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
