package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/inferkit/inferkit/formats"
)

// familyKey is the context key of a route's error family.
type familyKey struct{}

// withFamily records the error family of a route in its requests'
// context.
func withFamily(f formats.Family, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), familyKey{}, f)))
	})
}

// familyOf returns the error family of the route serving r: chat outside
// a Handler's routes.
func familyOf(r *http.Request) formats.Family {
	f, _ := r.Context().Value(familyKey{}).(formats.Family)
	return f
}

// WriteError writes err as the error response of the route serving r,
// in its family's shape (see formats.ErrorOf for the status of each
// error): for middleware of Config.Middleware, such as a rate limiter
// answering formats.RateLimited. It is for errors before anything was
// written.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	formats.WriteError(w, familyOf(r), err)
}

// fail is the one place where a handler's error becomes a response: it
// logs server errors with their cause and writes the family's body.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	err = h.countFailure(w, r, err)
	h.logError(r, err)
	WriteError(w, r, err)
}

// logError logs err at a level fitting its status: server errors at
// error level, unless the client has gone, the rest at debug level.
func (h *Handler) logError(r *http.Request, err error) {
	e := formats.ErrorOf(err)
	level := slog.LevelDebug
	if e.Status >= 500 && r.Context().Err() == nil {
		level = slog.LevelError
	}
	h.log.LogAttrs(r.Context(), level, "httpapi: request failed",
		slog.String("path", r.URL.Path), slog.Int("status", e.Status), slog.String("code", e.Code), slog.Any("err", err))
}

// writeJSON writes v as a 200 JSON body, without HTML escaping.
func (h *Handler) writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b.Bytes())
}
