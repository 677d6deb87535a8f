package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/inferkit/inferkit/formats"
)

// The middleware stages of a Handler's routes, each a
// func(http.Handler) http.Handler that a caller may also put in front
// of handlers of its own (package httpapi/admin does). A Handler wraps
// each route, outermost first, in ErrorStyle, AccessLog, BodyDeadline,
// Authenticate, LimitBody, its rate limits and Config.Middleware (see
// Handler.wrap).

// ErrorStyle returns the stage that records f as the error style of the
// requests it passes on, for WriteError and Fail. Outside it, errors
// take the chat style's shape.
func ErrorStyle(f formats.Style) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), styleKey{}, f)))
		})
	}
}

// LimitBody returns the stage that caps request bodies at n bytes: a
// read past them fails with an *http.MaxBytesError, which Fail answers
// 413.
func LimitBody(n int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body != nil {
				r.Body = http.MaxBytesReader(w, r.Body, n)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// BodyDeadline returns the stage that puts a read deadline of d on a
// request's body, lifted once the body has been read to its end: a
// read past it fails, and Fail answers the request 408 and closes its
// connection. A request without a body gets none: the server is
// already waiting, in the background, for its client to go away, and a
// deadline would end that wait and cancel the request. A negative d
// means no deadline; so does a ResponseWriter without deadlines (such
// as a test's recorder).
func BodyDeadline(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if d < 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
				next.ServeHTTP(w, r)
				return
			}
			rc := http.NewResponseController(w)
			if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
				next.ServeHTTP(w, r)
				return
			}
			b := &deadlineBody{ReadCloser: r.Body, rc: rc, timeout: d}
			r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, b))
			r.Body = b
			next.ServeHTTP(w, r)
		})
	}
}

// bodyKey is the context key of a request's *deadlineBody.
type bodyKey struct{}

// deadlineBody is a request body under a read deadline, which it lifts
// at the body's end. It is read by its handler's goroutine only.
type deadlineBody struct {
	io.ReadCloser
	rc       *http.ResponseController
	timeout  time.Duration
	done     bool // the end was read and the deadline lifted
	timedOut bool // a read hit the deadline
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF && !b.done:
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		b.timedOut = true
		err = fmt.Errorf("httpapi: the request body did not arrive within %v: %w", b.timeout, err)
	}
	return n, err
}

// bodyTimedOut returns r's body deadline when reading the body hit it.
func bodyTimedOut(r *http.Request) (time.Duration, bool) {
	b, _ := r.Context().Value(bodyKey{}).(*deadlineBody)
	if b == nil || !b.timedOut {
		return 0, false
	}
	return b.timeout, true
}

// SkipBody prepares a response that does not read the request's body,
// such as a 401 or a 404: over HTTP/1, a connection whose body has not
// been read closes after the response instead of waiting for the rest
// of the body, which a stalled client may never send. Call it before
// writing the response.
func SkipBody(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor != 1 || r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	if b, _ := r.Context().Value(bodyKey{}).(*deadlineBody); b != nil && b.done {
		return
	}
	w.Header().Set("Connection", "close")
	// The server still reads what is left of the body once the handler
	// returns; a deadline already passed ends that read at once.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

// statusClientClosedRequest is the status that the access log records
// for a request whose client went away before it was answered: nginx's
// 499, "client closed request". It is never sent.
const statusClientClosedRequest = 499

// clientGone reports whether r's client went away: its context was
// cancelled while the handler ran.
func clientGone(r *http.Request) bool { return errors.Is(r.Context().Err(), context.Canceled) }

// AccessLog configures the access-log stage (see Stage). The zero value
// logs at info level to slog.Default() on the wall clock.
type AccessLog struct {
	// Logger receives the lines. Nil means slog.Default().
	Logger *slog.Logger
	// Level is the lines' level.
	Level slog.Level
	// Now is the clock of the durations. Nil means time.Now.
	Now func() time.Time
	// Observe, when set, is called once per request once it is
	// answered, with its route, its status as logged and the identity
	// that Authenticate found (the zero Identity without one), from the
	// request's goroutine.
	Observe func(route string, status int, id Identity)
}

// Stage returns the stage that logs one line per request once it is
// answered (method, path, status, duration, the key's id, never the
// key, and the end user the request names, Identity.EndUser) as route's (a route's pattern, say). A request whose client went
// away before it was answered (the handler wrote nothing, or the server
// error that the cancellation caused) is logged with status 499.
func (a AccessLog) Stage(route string) func(http.Handler) http.Handler {
	log, now := a.Logger, a.Now
	if log == nil {
		log = slog.Default()
	}
	if now == nil {
		now = time.Now
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := now()
			rec := &recorder{ResponseWriter: w}
			ident := &Identity{}
			next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), identitySlotKey{}, ident)))
			status := rec.status
			switch {
			case (status == 0 || status >= 500) && clientGone(r):
				status = statusClientClosedRequest
			case status == 0:
				status = http.StatusOK
			}
			if a.Observe != nil {
				a.Observe(route, status, *ident)
			}
			attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", status),
				slog.Duration("duration", now().Sub(start)), slog.String("key_id", ident.KeyID)}
			if ident.EndUser != "" {
				attrs = append(attrs, slog.String("end_user", ident.EndUser))
			}
			log.LogAttrs(r.Context(), a.Level, "httpapi: request", attrs...)
		})
	}
}

// recorder remembers the status a handler wrote. Unwrap lets
// http.ResponseController reach the underlying writer to flush.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Fail writes err as the error response of the route serving r, in its
// style's shape (see ErrorStyle and formats.ErrorOf), and logs it on log
// (nil: slog.Default()): server errors at error level with their cause,
// the rest at debug level. A request whose body did not arrive within
// its BodyDeadline is answered 408, whatever its handler made of the
// failed read, and its connection is closed; an error of a store that
// cannot be reached (account, ratelimit or cache's ErrUnavailable) is a
// 503 with Retry-After. It is for errors before anything was written.
func Fail(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	if timeout, ok := bodyTimedOut(r); ok {
		err = &formats.Error{Status: http.StatusRequestTimeout, Code: "request_timeout",
			Message: fmt.Sprintf("the request body did not arrive within %v", timeout), Err: err}
		w.Header().Set("Connection", "close")
	}
	if storeUnavailable(err) {
		err = &formats.Error{Status: http.StatusServiceUnavailable, Code: "service_unavailable", RetryAfter: UnavailableRetryAfter,
			Message: "the server cannot reach the store it keeps its state in; retry shortly", Err: err}
	}
	if log == nil {
		log = slog.Default()
	}
	logError(log, r, err)
	WriteError(w, r, err)
}

// WriteJSON writes v as a JSON body with status, without HTML escaping.
// It writes nothing and returns the error when v cannot be encoded.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
	return nil
}

// Clip shortens text quoted in an error message, such as a path or an
// id a client sent, to 200 bytes and "...".
func Clip(s string) string {
	const most = 200
	if len(s) > most {
		return s[:most] + "..."
	}
	return s
}
