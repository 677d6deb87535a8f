package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/cache"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/chat"
	"github.com/inferkit/inferkit/formats/messages"
	"github.com/inferkit/inferkit/formats/responses"
	"github.com/inferkit/inferkit/ratelimit"
)

// styleKey is the context key of a route's error style (see ErrorStyle).
type styleKey struct{}

// styleOf returns the error style of the route serving r: chat outside
// a Handler's routes.
func styleOf(r *http.Request) formats.Style {
	f, _ := r.Context().Value(styleKey{}).(formats.Style)
	return f
}

// WriteError writes err as the error response of the route serving r,
// in its style's shape (see formats.ErrorOf for the status of each
// error): for middleware of Config.Middleware, such as a rate limiter
// answering formats.RateLimited. It is for errors before anything was
// written.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	f := styleOf(r)
	formats.WriteError(w, f, named(f, err))
}

// named returns err as style f names the fields of the engine's
// requests, by the table of f's package: an engine's error about one
// field (an *inference.FieldError) names the style's parameter. Models
// and System One refuse no engine field of their own, and answer in
// chat's names, as legacy completions and embeddings do.
func named(f formats.Style, err error) error {
	switch {
	case err == nil:
		return nil
	case f == formats.StyleMessages:
		return messages.Error(err)
	case f == formats.StyleResponses:
		return responses.Error(err)
	}
	return chat.Error(err)
}

// fail is the one place where a handler's error becomes a response:
// a token route that failed before it reserved counts as one request
// (countFailure), and Fail writes and logs the error.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	err = h.countFailure(w, r, err)
	Fail(w, r, h.log, err)
}

// UnavailableRetryAfter is the Retry-After of a 503 answered while a
// store the Handler depends on (accounts, the rate limiter, stored
// responses: Redis, when the server shares it) cannot be reached.
const UnavailableRetryAfter = 5 * time.Second

// storeUnavailable reports whether err says that a store could not be
// reached: account, ratelimit or cache's ErrUnavailable, which the Redis
// stores wrap their client's errors with.
func storeUnavailable(err error) bool {
	return errors.Is(err, account.ErrUnavailable) || errors.Is(err, ratelimit.ErrUnavailable) || errors.Is(err, cache.ErrUnavailable)
}

// logError logs err at a level fitting its status: server errors at
// error level, the rest at debug level. A server error of a request
// whose client has gone (its context cancelled: a request cancelled
// while it waited in the engine's queue, or mid-generation) is the
// cancellation's doing, not the server's: it is logged at debug level as
// a cancellation, with status 499 (see accessLog).
func logError(log *slog.Logger, r *http.Request, err error) {
	e := formats.ErrorOf(err)
	msg, status, code, level := "httpapi: request failed", e.Status, e.Code, slog.LevelDebug
	switch {
	case e.Status >= 500 && clientGone(r):
		msg, status, code = "httpapi: request cancelled by the client", statusClientClosedRequest, "client_closed_request"
	case e.Status >= 500 && r.Context().Err() == nil:
		level = slog.LevelError
	}
	log.LogAttrs(r.Context(), level, msg,
		slog.String("path", r.URL.Path), slog.Int("status", status), slog.String("code", code), slog.Any("err", err))
}

// writeJSON writes v as a 200 JSON body, without HTML escaping.
func (h *Handler) writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	h.writeJSONStatus(w, r, http.StatusOK, v)
}

// writeJSONStatus writes v as a JSON body with status, without HTML
// escaping (WriteJSON), or fails.
func (h *Handler) writeJSONStatus(w http.ResponseWriter, r *http.Request, status int, v any) {
	if err := WriteJSON(w, status, v); err != nil {
		h.fail(w, r, err)
	}
}
