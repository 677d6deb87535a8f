package formats

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/inferkit/inferkit/inference"
)

// RequestError is a request that breaks a rule of the API: malformed JSON,
// a value of the wrong type or out of range, an unknown role. It maps to
// status 400 with type invalid_request_error.
type RequestError struct {
	// Param is the path of the offending parameter, such as "temperature"
	// or "messages[0].content"; empty when the body as a whole is wrong.
	Param string
	// Message says what is wrong, for the client.
	Message string
	// Code is a machine-readable reason such as "invalid_value",
	// "invalid_type", "missing_required_parameter" or "invalid_json";
	// empty means "invalid_value".
	Code string
	// Loc is the path to the parameter in the body, keys as strings and
	// indexes as ints, where Param cannot say it unambiguously (a key
	// holding a dot); empty means Param's path.
	Loc []any
}

// Error returns the message, prefixed with the package name.
func (e *RequestError) Error() string { return "formats: " + e.Message }

// Invalid returns a RequestError for a value of param that breaks a rule.
func Invalid(param, format string, args ...any) *RequestError {
	return &RequestError{Param: param, Code: "invalid_value", Message: fmt.Sprintf(format, args...)}
}

// Missing returns a RequestError for a required param that is absent.
func Missing(param string) *RequestError {
	return &RequestError{Param: param, Code: "missing_required_parameter", Message: "missing required parameter: " + param}
}

// Style is the wire style of a group of endpoints as its errors show
// it: the shape of the error body and its status. The names of the
// parameters an error points at are each style package's (see
// ParamNames).
type Style int

// The error styles.
const (
	// StyleChat is chat completions: {error:{message,type,param,code}}.
	StyleChat Style = iota
	// StyleMessages is messages: {type:"error", error:{type, message,
	// error:{type, message}}}, Anthropic's body with the spec's nested
	// copy of the type and message.
	StyleMessages
	// StyleResponses is responses, with the chat shape.
	StyleResponses
	// StyleModels is the model catalog, with the chat shape.
	StyleModels
	// StyleSystemOne is System One's decision API: a client error is a
	// 422 {detail:[{loc,msg,type}]}, FastAPI's, the rest
	// {detail:{error_type,message}}.
	StyleSystemOne
)

// Error is an error as the API reports it: a status and the fields every
// style's body is built from. The same Error gives each style's body, so
// the type is derived from the status and code per style (see Type).
type Error struct {
	// Status is the HTTP status.
	Status int
	// Code is the machine-readable reason: "invalid_api_key",
	// "model_not_found", "rate_limit_exceeded", "insufficient_quota",
	// "overloaded", "context_length_exceeded", "request_too_large",
	// "server_error", or a RequestError's code.
	Code string
	// Message is for the client.
	Message string
	// Param names the offending parameter, or is empty.
	Param string
	// Loc is Param as a path of keys and indexes, where Param cannot say
	// it unambiguously; empty means Param's path.
	Loc []any
	// RetryAfter, when positive, is sent as the Retry-After header.
	RetryAfter time.Duration
	// Err is the cause, if any; it is not shown to the client.
	Err error

	// field is the engine's path of the field at fault, for an
	// *inference.FieldError: each style names its own parameter (see in).
	field inference.Path
}

// Error returns the message, prefixed with the package name.
func (e *Error) Error() string {
	return fmt.Sprintf("formats: %d %s: %s", e.Status, e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Type returns the error type that style f writes for e.
//
// Chat, responses and models follow the spec: 400, 401, 404 and 413 are
// invalid_request_error (an invalid key has code invalid_api_key), 429 is
// rate_limit_error, 5xx is api_error. Messages and System One use only
// the types of Anthropic's documented list: overloaded_error (code
// "overloaded", whatever the status), authentication_error (401),
// billing_error (402), permission_error (403), not_found_error (404),
// timeout_error (504), request_too_large (413), rate_limit_error (429),
// api_error (other 5xx), and invalid_request_error for every other
// status, such as 408 for a request body that came too slowly: the
// client's fault, where Anthropic's timeout_error is the server's.
func (e *Error) Type(f Style) string {
	if f == StyleMessages || f == StyleSystemOne {
		switch {
		case e.Code == "overloaded":
			return "overloaded_error"
		case e.Status == http.StatusUnauthorized:
			return "authentication_error"
		case e.Status == http.StatusPaymentRequired:
			return "billing_error"
		case e.Status == http.StatusForbidden:
			return "permission_error"
		case e.Status == http.StatusNotFound:
			return "not_found_error"
		case e.Status == http.StatusGatewayTimeout:
			return "timeout_error"
		case e.Status == http.StatusRequestEntityTooLarge:
			return "request_too_large"
		case e.Status == http.StatusTooManyRequests:
			return "rate_limit_error"
		case e.Status >= 500:
			return "api_error"
		}
		return "invalid_request_error"
	}
	switch {
	case e.Status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case e.Status >= 500:
		return "api_error"
	}
	return "invalid_request_error"
}

// errorBody is the JSON error object of the chat, responses and models
// styles, and the inner object of a failed response.
type errorBody struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	// Param is null when no parameter is at fault.
	Param *string `json:"param"`
	Code  string  `json:"code"`
}

// errorEnvelope is {error: errorBody}.
type errorEnvelope struct {
	Error errorBody `json:"error"`
}

// messagesErrorBody is the error body of the messages style, for a
// status and for an in-stream `event: error`:
//
//	{"type":"error","error":{"type":T,"message":M,"error":{"type":T,"message":M}}}
//
// It is the Anthropic API's body {type:"error", error:{type, message}},
// whose error.type the Anthropic SDKs read as the error's type (such as
// anthropic.Error.Type), with the spec's nested error.error{type,
// message} kept for clients written to the spec. The spec's shape
// {error:{type:'error', error:{type, message}}} also fixes error.type to
// the word "error"; that part is not followed, since T must be one of
// Anthropic's documented types (see Error.Type) for the SDKs to report
// it: error.type and error.error.type are always the same documented
// type.
type messagesErrorBody struct {
	Type  string             `json:"type"`
	Error messagesErrorOuter `json:"error"`
}

// messagesErrorOuter is the "error" member of a messagesErrorBody: the
// Anthropic error object, with the spec's nested copy of its type and
// message.
type messagesErrorOuter struct {
	Type    string             `json:"type"`
	Message string             `json:"message"`
	Error   messagesErrorInner `json:"error"`
}

// messagesErrorInner carries the type (such as authentication_error) and
// message of a messages-style error.
type messagesErrorInner struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Body returns the JSON body of e in style f.
func (e *Error) Body(f Style) []byte {
	var v any
	if f == StyleSystemOne {
		v = e.systemOne()
	} else if f == StyleMessages {
		t := e.Type(f)
		v = messagesErrorBody{Type: "error", Error: messagesErrorOuter{
			Type: t, Message: e.Message,
			Error: messagesErrorInner{Type: t, Message: e.Message},
		}}
	} else {
		v = errorEnvelope{Error: e.object(f)}
	}
	b, err := Marshal(v)
	if err != nil { // cannot happen: the values are strings
		panic(err)
	}
	return b
}

// object returns the chat-shaped error object of e.
func (e *Error) object(f Style) errorBody {
	o := errorBody{Message: e.Message, Type: e.Type(f), Code: e.Code}
	if e.Param != "" {
		p := e.Param
		o.Param = &p
	}
	return o
}

// ErrorOf maps any error to the Error the API reports:
//
//   - *Error: itself;
//   - *RequestError: 400;
//   - inference.ErrInvalidRequest: 400, code invalid_value, with the
//     engine's reason; written in a style, its param is that style's
//     name of the field at fault, such as response_format.json_schema.schema
//     (chat), text.format.schema (responses) or
//     output_config.format.schema (messages) for a schema the engine
//     cannot enforce;
//   - inference.ErrContextLength: 400, code context_length_exceeded;
//   - inference.ErrModelNotFound: 400, code model_not_found, param model
//     (generation endpoints; GET /v1/models/{id} uses ModelNotFound, 404);
//   - inference.ErrOverloaded: 429, code overloaded, Retry-After 1s (the
//     spec lists 429, not 503, for the generation endpoints);
//   - *http.MaxBytesError: 413, code request_too_large;
//   - inference.ErrClosed, context errors and anything else: 500, code
//     server_error, with a generic message that leaks nothing.
func ErrorOf(err error) *Error {
	var e *Error
	var re *RequestError
	var fe *inference.FieldError
	var mb *http.MaxBytesError
	var ue *inference.UpstreamError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return e
	case errors.As(err, &re):
		code := re.Code
		if code == "" {
			code = "invalid_value"
		}
		return &Error{Status: http.StatusBadRequest, Code: code, Message: re.Message, Param: re.Param, Loc: re.Loc, Err: err}
	case errors.As(err, &mb):
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: "request_too_large",
			Message: "request body exceeds " + strconv.FormatInt(mb.Limit, 10) + " bytes", Err: err}
	case errors.As(err, &fe) && errors.Is(err, inference.ErrContextLength):
		return &Error{Status: http.StatusBadRequest, Code: "context_length_exceeded", field: fe.Path,
			Message: fe.Reason, Err: err}
	case errors.Is(err, inference.ErrContextLength):
		return &Error{Status: http.StatusBadRequest, Code: "context_length_exceeded", Param: "messages",
			Message: "the prompt and the requested output tokens exceed the model's context length", Err: err}
	case errors.As(err, &ue):
		return upstreamError(ue, err)
	case errors.Is(err, inference.ErrModelNotFound):
		return &Error{Status: http.StatusBadRequest, Code: "model_not_found", Param: "model",
			Message: "the model does not exist", Err: err}
	case errors.As(err, &fe):
		return &Error{Status: http.StatusBadRequest, Code: "invalid_value", Message: fe.Reason, Err: err, field: fe.Path}
	case errors.Is(err, inference.ErrInvalidRequest):
		reason := err.Error()
		if _, r, ok := strings.Cut(reason, inference.ErrInvalidRequest.Error()+": "); ok {
			reason = r
		}
		return &Error{Status: http.StatusBadRequest, Code: "invalid_value", Message: "invalid request: " + reason, Err: err}
	case errors.Is(err, inference.ErrOverloaded):
		return &Error{Status: http.StatusTooManyRequests, Code: "overloaded", RetryAfter: time.Second,
			Message: "the model is overloaded; retry shortly", Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Status: http.StatusInternalServerError, Code: "server_error", Message: "the request timed out", Err: err}
	}
	return &Error{Status: http.StatusInternalServerError, Code: "server_error",
		Message: "the server had an error while processing the request", Err: err}
}

// upstreamError is the Error of a remote model's upstream failure: 400
// for a request it refused as invalid, 503 with Retry-After when no
// replica can take it, 502 for the rest. The upstream's message is data,
// already cut and cleaned.
func upstreamError(ue *inference.UpstreamError, err error) *Error {
	switch {
	case errors.Is(ue.Err, inference.ErrInvalidRequest):
		return &Error{Status: http.StatusBadRequest, Code: "invalid_value", Message: "the model's upstream refused the request: " + ue.Message, Err: err}
	case errors.Is(ue.Err, inference.ErrUnavailable):
		return &Error{Status: http.StatusServiceUnavailable, Code: "upstream_unavailable", RetryAfter: ue.RetryAfter,
			Message: "the model's upstream cannot take the request now; retry shortly: " + ue.Message, Err: err}
	}
	return &Error{Status: http.StatusBadGateway, Code: "upstream_error", Message: "the model's upstream failed: " + ue.Message, Err: err}
}

// ParamNames maps the fields of the engine's requests (inference.Request,
// ScoreRequest, EmbedRequest) to one wire style's parameter names: each
// style keeps its table next to its request type. A key is an
// inference.Path with its indexes written "[]"; a name may hold "[]"
// too, filled with the path's indexes in order ("Tools[].Parameters" to
// "tools[].input_schema" names Tools[2].Parameters tools[2].input_schema).
// A path not found whole is looked up by its names before the first
// index, and the message then says the engine's path; a name not found
// is used as it is. It is read only, so safe for concurrent use.
type ParamNames map[string]string

// Error returns err as ErrorOf maps it, an engine's error about one
// field (an *inference.FieldError) naming n's parameter in Param and in
// its message. Each wire style calls it with its table (chat.Error,
// messages.Error, ...) before WriteError or Error.Body, which leave an
// Error as it is: unnamed, an engine's field error has no Param.
func (n ParamNames) Error(err error) *Error {
	return ErrorOf(err).named(n)
}

// name returns the parameter that names path p in n, and whether the
// name says all of p, its indexes included.
func (n ParamNames) name(p inference.Path) (string, bool) {
	var pattern, base strings.Builder
	var index []int
	for i, s := range p {
		switch {
		case s.Name == "":
			pattern.WriteString("[]")
			index = append(index, s.Index)
			continue
		case i > 0:
			pattern.WriteString(".")
		}
		pattern.WriteString(s.Name)
		if len(index) == 0 {
			if i > 0 {
				base.WriteString(".")
			}
			base.WriteString(s.Name)
		}
	}
	if name, ok := n[pattern.String()]; ok {
		return fill(name, index), true
	}
	if name, ok := n[base.String()]; ok {
		return name, len(index) == 0
	}
	return base.String(), len(index) == 0
}

// fill writes index into the "[]" of name, in order.
func fill(name string, index []int) string {
	var b strings.Builder
	for {
		before, after, ok := strings.Cut(name, "[]")
		b.WriteString(before)
		if !ok {
			return b.String()
		}
		if len(index) == 0 {
			b.WriteString("[]")
		} else {
			b.WriteString("[" + strconv.Itoa(index[0]) + "]")
			index = index[1:]
		}
		name = after
	}
}

// named returns e as a style with the parameter names n reports it: an
// engine's error about one field names n's parameter in Param and in
// its message.
func (e *Error) named(n ParamNames) *Error {
	if e == nil || len(e.field) == 0 || e.Param != "" {
		return e
	}
	param, whole := n.name(e.field)
	detail := e.Message
	if !whole {
		// The engine counts the system prompt among the messages: say
		// which message it means in its own words.
		detail = e.field.String() + " (counting the system prompt): " + detail
	}
	// The grammar checks' errors carry their package's name.
	detail = strings.ReplaceAll(detail, "grammar: invalid grammar: ", "")
	out := *e
	out.Param = param
	out.Message = param + ": " + detail
	return &out
}

// WriteError writes err as a response of style f: the status, the
// Content-Type, Retry-After when set, and the style's body. It is for
// errors before the headers are sent; after them, the stream encoders'
// Fail writes the in-stream error.
func WriteError(w http.ResponseWriter, f Style, err error) {
	e := ErrorOf(err)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.RetryAfter > 0 {
		secs := int64((e.RetryAfter + time.Second - 1) / time.Second)
		h.Set("Retry-After", strconv.FormatInt(secs, 10))
	}
	w.WriteHeader(e.StatusIn(f))
	_, _ = w.Write(e.Body(f))
}

// Unauthorized is the error of a missing or invalid API key: 401, code
// invalid_api_key (type authentication_error for messages).
func Unauthorized() *Error {
	return &Error{Status: http.StatusUnauthorized, Code: "invalid_api_key", Message: "invalid or missing API key"}
}

// UnknownModel is the error of a generation request naming a model the
// catalog does not serve: 400, code model_not_found, param model.
func UnknownModel(id string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "model_not_found", Param: "model",
		Message: fmt.Sprintf("the model %q does not exist", id)}
}

// ModelNotFound is the error of GET /v1/models/{id} for an unknown id: 404,
// code model_not_found.
func ModelNotFound(id string) *Error {
	return &Error{Status: http.StatusNotFound, Code: "model_not_found",
		Message: fmt.Sprintf("the model %q does not exist", id)}
}

// RateLimited is the error of a request over its key's limits: 429, code
// rate_limit_exceeded, with Retry-After.
func RateLimited(retryAfter time.Duration, message string) *Error {
	return &Error{Status: http.StatusTooManyRequests, Code: "rate_limit_exceeded", RetryAfter: retryAfter, Message: message}
}

// QuotaExceeded is the error of a key past its monthly spend cap: 429,
// code insufficient_quota.
func QuotaExceeded(message string) *Error {
	return &Error{Status: http.StatusTooManyRequests, Code: "insufficient_quota", Message: message}
}
