package inference

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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
// speak a wire format map Path to their own parameter name.
type FieldError struct {
	// Path is the field's path in the Request, ScoreRequest or
	// EmbedRequest, such as Temperature, Format.Schema,
	// Tools[2].Parameters, Messages[1] or Branches[0].Text.
	Path Path
	// Reason says what is wrong with it, for the client.
	Reason string
	// Err is the sentinel it wraps: ErrContextLength for a prompt
	// (Path Messages or Prompt) or an output limit (MaxTokens) that does
	// not fit in the context; nil means ErrInvalidRequest.
	Err error
}

// Error returns the sentinel's message, then "Path: Reason".
func (e *FieldError) Error() string {
	return e.Unwrap().Error() + ": " + e.Path.String() + ": " + e.Reason
}

// Unwrap returns Err, or ErrInvalidRequest.
func (e *FieldError) Unwrap() error {
	if e.Err != nil {
		return e.Err
	}
	return ErrInvalidRequest
}

// fieldError returns a *FieldError.
func fieldError(p Path, format string, args ...any) error {
	return &FieldError{Path: p, Reason: fmt.Sprintf(format, args...)}
}

// Path locates a field of a request as data: its steps in order, each a
// field name or a list index. Field("Tools").At(2).Dot("Parameters") is
// Tools[2].Parameters. Wire styles map a Path to their own parameter
// names from its steps, never by parsing String. The zero value is the
// empty path. A Path is a value: At and Dot return a new Path and leave
// the one they are called on as it was, so it is safe to share.
type Path []PathStep

// PathStep is one step of a Path: the field Name, or, where Name is
// empty, the Index into a list.
type PathStep struct {
	// Name is a field's name, such as "Tools"; empty for an index.
	Name string
	// Index is a list's index, counted from 0, where Name is empty.
	Index int
}

// Field returns the path of a field, one step a name: Field("Format",
// "Schema") is Format.Schema.
func Field(names ...string) Path {
	p := make(Path, len(names))
	for i, n := range names {
		p[i] = PathStep{Name: n}
	}
	return p
}

// At returns p followed by the index i.
func (p Path) At(i int) Path {
	return append(p[:len(p):len(p)], PathStep{Index: i})
}

// Dot returns p followed by the field name.
func (p Path) Dot(name string) Path {
	return append(p[:len(p):len(p)], PathStep{Name: name})
}

// String writes p as Go writes a selector: names joined by dots, each
// index in brackets, such as "Tools[2].Parameters".
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		switch {
		case s.Name == "":
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
		case i > 0:
			b.WriteString("." + s.Name)
		default:
			b.WriteString(s.Name)
		}
	}
	return b.String()
}
