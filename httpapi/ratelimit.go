package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/ratelimit"
)

// Rate limits, when Config.Limiter is set.
//
// Every authenticated request takes one reservation of its key, at the
// Tier of its Identity: 401s have no key and count nowhere. The
// generation routes reserve the request, its prompt tokens (counted by
// Engine.CountTokens, as generation renders and tokenizes them) and its
// maximum output tokens, and the cost of all of them at the model's
// catalog prices, before the engine starts; the end settles the
// reservation with the engine's usage: at the result, after an error, or
// when the client goes away mid-stream (with the tokens streamed so far).
// A request that the engine refused before any work (a full queue, a
// prompt too long) settles with no tokens and no cost, but still counts as
// a request; one whose client left before its first token is charged its
// prompt, which the engine may already have processed. A request refused
// before its model is
// known (malformed JSON, an unknown model) counts as one request without
// tokens. The other routes (catalog, stored responses) reserve one
// request without tokens or cost.
//
// Each such response carries x-ratelimit-limit-*, x-ratelimit-remaining-*
// and x-ratelimit-reset-* headers (reset: the time until the limit is
// whole again, such as "1s" or "59.5s") for requests, input-tokens,
// output-tokens, and tokens (whichever of input and output tokens is
// closer to its limit), for each limit the tier has. A refusal is a 429
// in the route's family: rate_limit_exceeded (rate_limit_error for
// messages) with Retry-After, or insufficient_quota when the monthly spend
// cap would be passed, with Retry-After until the month turns (UTC).
//
// The decision routes reserve like generation, with no output tokens: an
// estimate of their input (the state's tokens and a margin per question),
// settled with the input they used, at the decision model's prices.
// POST /v1/embeddings reserves its inputs' exact token count, with no
// output tokens, at the embedding model's prices.

// tokenRoutes are the routes whose handlers reserve tokens themselves.
var tokenRoutes = map[string]bool{
	"POST /v1/web/chat/completions": true,
	"POST /v1/chat/completions":     true,
	"POST /v1/messages":             true,
	"POST /v1/responses":            true,
	"POST /v1/system":               true,
	"POST /v1/systemone":            true,
	"POST /v1/embeddings":           true,
}

// admissionKey is the context key of a token route's *admission.
type admissionKey struct{}

// admission is one request's reservation.
type admission struct {
	h     *Handler
	key   string
	tier  ratelimit.Tier
	tried bool // a reservation was asked for
	held  bool // res is reserved, neither settled nor cancelled
	res   ratelimit.Reservation
}

// admissionFrom returns the admission of a token route's request, or nil
// when there are no limits.
func admissionFrom(r *http.Request) *admission {
	a, _ := r.Context().Value(admissionKey{}).(*admission)
	return a
}

// rateLimit limits the route of pattern: a request reservation before the
// handler, or, on token routes, an admission for the handler to reserve.
func (h *Handler) rateLimit(pattern string, next http.Handler) http.Handler {
	if h.limits == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := IdentityFrom(r.Context())
		tier := id.Tier
		if tier == (ratelimit.Tier{}) {
			tier = ratelimit.Default
		}
		a := &admission{h: h, key: id.KeyID, tier: tier}
		if !tokenRoutes[pattern] {
			if err := a.reserve(w, r, ratelimit.Request{}); err != nil {
				h.fail(w, r, err)
				return
			}
			defer a.settle(r, ratelimit.Usage{})
			next.ServeHTTP(w, r)
			return
		}
		defer a.cancel(r) // a handler that forgot its reservation frees it
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), admissionKey{}, a)))
	})
}

// countFailure is called by fail: a token route that fails before it
// reserved counts as one request without tokens, and gets the headers,
// even when its client has gone. It keeps its own error: over the limit
// it is not counted (a request that is invalid stays a 400 whatever the
// key's tier, since waiting would not make it valid), and a limiter that
// fails is logged.
func (h *Handler) countFailure(w http.ResponseWriter, r *http.Request, err error) error {
	a := admissionFrom(r)
	if a == nil || a.tried {
		return err
	}
	r = r.WithContext(context.WithoutCancel(r.Context()))
	var refused *formats.Error
	switch lerr := a.reserve(w, r, ratelimit.Request{}); {
	case lerr == nil:
		a.settle(r, ratelimit.Usage{})
	case errors.As(lerr, &refused) && refused.Status == http.StatusTooManyRequests:
	default:
		h.log.LogAttrs(r.Context(), slog.LevelError, "httpapi: counting a refused request failed",
			slog.String("key_id", a.key), slog.Any("err", lerr))
	}
	return err
}

// reserve reserves want (its Key and Tier filled in) at the Handler's
// clock and sets the rate-limit headers. It returns the 429 to write
// when the key is over a limit, or the limiter's failure.
func (a *admission) reserve(w http.ResponseWriter, r *http.Request, want ratelimit.Request) error {
	a.tried = true
	want.Key, want.Tier = a.key, a.tier
	res, err := a.h.limits.Reserve(r.Context(), want, a.h.now())
	var le *ratelimit.Error
	switch {
	case errors.As(err, &le):
		setRateHeaders(w.Header(), le.Status)
		return refusal(le, a.h.now())
	case err != nil:
		return fmt.Errorf("httpapi: rate limiter: %w", err)
	}
	a.res, a.held = res, true
	setRateHeaders(w.Header(), res.Status)
	return nil
}

// settle settles the reservation with used, even if the client has gone.
func (a *admission) settle(r *http.Request, used ratelimit.Usage) {
	if !a.held {
		return
	}
	a.held = false
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	if err := a.h.limits.Settle(ctx, a.res, used); err != nil {
		a.h.log.LogAttrs(r.Context(), slog.LevelError, "httpapi: settling a rate-limit reservation failed",
			slog.String("key_id", a.key), slog.Any("err", err))
	}
}

// cancel undoes the reservation, if it is still held.
func (a *admission) cancel(r *http.Request) {
	if !a.held {
		return
	}
	a.held = false
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	if err := a.h.limits.Cancel(ctx, a.res); err != nil {
		a.h.log.LogAttrs(r.Context(), slog.LevelError, "httpapi: cancelling a rate-limit reservation failed",
			slog.String("key_id", a.key), slog.Any("err", err))
	}
}

// refusal is the 429 of a limiter's refusal, in words for the client.
func refusal(e *ratelimit.Error, now time.Time) *formats.Error {
	var out *formats.Error
	switch {
	case errors.Is(e.Err, ratelimit.ErrSpendCap):
		out = formats.QuotaExceeded(fmt.Sprintf(
			"You exceeded your maximum monthly spend of %s USD: %s USD spent this month, and this request may cost up to %s USD. It renews on %s.",
			ratelimit.Money(e.Max), e.Status.Spent, ratelimit.Money(e.Requested), ratelimit.NextMonth(now).Format("2006-01-02")))
		out.RetryAfter = e.RetryAfter
	case errors.Is(e.Err, ratelimit.ErrTooLarge):
		// Waiting cannot help: no Retry-After.
		out = formats.RateLimited(0, fmt.Sprintf(
			"Request too large: it needs %d %s, more than your limit of %d per minute. Shorten the prompt.",
			e.Requested, limitWords(e.Limit), e.Max))
	default:
		out = formats.RateLimited(max(e.RetryAfter, time.Millisecond), fmt.Sprintf(
			"Rate limit reached for %s per minute: limit %d, requested %d. Please retry after %s.",
			limitWords(e.Limit), e.Max, e.Requested, resetText(e.RetryAfter)))
	}
	out.Err = e
	return out
}

// limitWords names a limit for people.
func limitWords(limit string) string {
	switch limit {
	case ratelimit.LimitInputTokens:
		return "input tokens"
	case ratelimit.LimitOutputTokens:
		return "output tokens"
	}
	return limit
}

// setRateHeaders writes the rate-limit headers of st.
func setRateHeaders(h http.Header, st ratelimit.Status) {
	set := func(name string, b ratelimit.Budget) {
		if b.Limit <= 0 {
			return
		}
		h.Set("X-Ratelimit-Limit-"+name, strconv.FormatInt(b.Limit, 10))
		h.Set("X-Ratelimit-Remaining-"+name, strconv.FormatInt(b.Remaining, 10))
		h.Set("X-Ratelimit-Reset-"+name, resetText(b.Reset))
	}
	set("Requests", st.Requests)
	set("Input-Tokens", st.InputTokens)
	set("Output-Tokens", st.OutputTokens)
	tokens := st.InputTokens
	if tokens.Limit <= 0 || (st.OutputTokens.Limit > 0 &&
		st.OutputTokens.Remaining*tokens.Limit < tokens.Remaining*st.OutputTokens.Limit) {
		tokens = st.OutputTokens
	}
	set("Tokens", tokens)
}

// resetText writes a duration as the x-ratelimit-reset-* headers do,
// rounded up to the millisecond: "0s", "250ms", "1s", "59.5s", "1m0s".
func resetText(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	return ((d + time.Millisecond - 1) / time.Millisecond * time.Millisecond).String()
}

// prices returns the rate limiter's prices of a catalog entry. The
// catalog holds plain decimal strings, which Validate checked; cached
// input without a price of its own costs as much as input.
func prices(p catalog.Pricing) (ratelimit.Prices, error) {
	var out ratelimit.Prices
	for _, f := range []struct {
		s string
		m *ratelimit.Money
	}{{p.Prompt, &out.Input}, {p.InputCacheReads, &out.CachedInput}, {p.Completion, &out.Output}, {p.Request, &out.Request}, {p.Image, &out.Image}} {
		m, err := ratelimit.ParseMoney(f.s)
		if err != nil {
			return ratelimit.Prices{}, fmt.Errorf("httpapi: catalog price: %w", err)
		}
		*f.m = m
	}
	if p.InputCacheReads == "" {
		out.CachedInput = out.Input
	}
	return out, nil
}

// checkPrices checks, under rate limits, that the limiter can charge
// every price of the catalog (nine decimals at most).
func (h *Handler) checkPrices() error {
	if h.limits == nil {
		return nil
	}
	for _, m := range h.models {
		if _, err := prices(m.Pricing); err != nil {
			return fmt.Errorf("%w (model %q)", err, m.ID)
		}
	}
	return nil
}

// images counts the images of req.
func images(req inference.Request) int64 {
	var n int64
	for _, m := range req.Messages {
		for _, p := range m.Content {
			if p.Image != nil {
				n++
			}
		}
	}
	return n
}

// usageOf is what a finished generation used.
func usageOf(req inference.Request, u inference.Usage) ratelimit.Usage {
	return ratelimit.Usage{Requests: 1, InputTokens: int64(u.PromptTokens), CachedInputTokens: int64(u.CachedTokens),
		OutputTokens: int64(u.CompletionTokens), Images: images(req)}
}
