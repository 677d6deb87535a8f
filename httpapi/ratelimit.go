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
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// Rate limits, when Config.Limiter is set.
//
// Every authenticated request takes one reservation of its key, at the
// Tier of its Identity, charged to its Identity's Account (the key itself
// when a KeyStore sets none): the per-minute limits count per key, the
// monthly spend and its cap per account, so the keys of one account share
// them. 401s have no key and count nowhere. The route table says how each
// route counts (route.meter): every route that runs the engine
// (generation, embeddings, decisions) is meterTokens, and its handler
// reserves the request, its prompt tokens (counted as the engine prepared
// them) and its maximum output tokens, and the cost of all of them at the
// model's catalog prices, before the engine starts; the end settles the
// reservation, exactly once, with the engine's usage: at the result,
// after an error, or when the client goes away mid-stream (with the
// tokens streamed so far). A request that the engine refused before any
// work (a full queue, a prompt too long) settles with no tokens and no
// cost, but still counts as a request; one whose client left before its
// first token is charged its prompt, which the engine may already have
// processed. A request refused before its model is known (malformed JSON,
// an unknown model) counts as one request without tokens. The other
// routes (catalog, stored responses, counting tokens) are meterRequest:
// one request without tokens or cost, reserved before the handler runs.
//
// Cached input tokens cost the catalog entry's input_cache_reads price,
// or, for an entry without one, half its input price (rounded up to the
// nano-dollar): the spec's discount of 50%.
//
// Each such response carries x-ratelimit-limit-*, x-ratelimit-remaining-*
// and x-ratelimit-reset-* headers (reset: the time until the limit is
// whole again, such as "1s" or "59.5s") for requests, input-tokens,
// output-tokens, and tokens (whichever of input and output tokens is
// closer to its limit), for each limit the tier has. When the tier caps
// the monthly spend, three more tell where the account stands:
//
//	x-ratelimit-limit-spend-usd: the cap, in USD, such as "100"
//	x-ratelimit-remaining-spend-usd: what the account may still spend
//	  this month, in USD, such as "99.99625" (reservations in flight
//	  count as spent)
//	x-ratelimit-reset-spend: the time until the month turns (UTC) and the
//	  spend starts again from zero, as the other resets, such as
//	  "743h59m59s"
//
// A key on a tier without limits (policy.Unlimited) gets none of these
// headers; its requests still count in its account's spend and usage.
//
// A refusal is a 429 in the route's style: rate_limit_exceeded
// (rate_limit_error for messages) with Retry-After, or insufficient_quota
// when the monthly spend cap would be passed, with Retry-After until the
// month turns (UTC) and a message that gives the cap, the month's spend
// so far and the instant the month turns (RFC 3339, UTC).
//
// The decision routes reserve like generation, with no output tokens: an
// estimate of their input (the state's tokens and a margin per question),
// settled with the input they used, at the decision model's prices.
// POST /v1/embeddings reserves its inputs' exact token count, with no
// output tokens, at the embedding model's prices.

// metering is how rate limits count a route's requests.
type metering int

const (
	// meterRequest: one request without tokens or cost, reserved before
	// the handler runs and settled after it.
	meterRequest metering = iota
	// meterTokens: the handler runs the engine (it generates, embeds or
	// decides), reserves the request itself (Handler.reserve) on its
	// prepared token counts at its model's prices, and settles it on
	// what the engine used.
	meterTokens
	// meterNone: no limits (the operators' routes).
	meterNone
)

// admissionKey is the context key of a token route's *admission.
type admissionKey struct{}

// admission is one request's reservation.
type admission struct {
	h       *Handler
	key     string
	account string // "": the key's own
	tier    ratelimit.Tier
	tried   bool // a reservation was asked for
	held    bool // res is reserved, neither settled nor cancelled
	res     ratelimit.Reservation
}

// admissionFrom returns the admission of a token route's request, or nil
// when there are no limits.
func admissionFrom(r *http.Request) *admission {
	a, _ := r.Context().Value(admissionKey{}).(*admission)
	return a
}

// rateLimit limits a route as its meter says: a request reservation
// before the handler, or, on meterTokens routes, an admission for the
// handler to reserve.
func (h *Handler) rateLimit(rt route, next http.Handler) http.Handler {
	if h.limits == nil || rt.meter == meterNone {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := IdentityFrom(r.Context())
		tier := id.Tier
		if tier == (ratelimit.Tier{}) {
			tier = policy.Default
		}
		a := &admission{h: h, key: id.KeyID, account: id.Account, tier: tier}
		if rt.meter != meterTokens {
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

// reserve reserves want (its Key, Account and Tier filled in) at the
// Handler's clock and sets the rate-limit headers. It returns the 429 to
// write when the key is over a limit, or the limiter's failure.
func (a *admission) reserve(w http.ResponseWriter, r *http.Request, want ratelimit.Request) error {
	a.tried = true
	want.Key, want.Account, want.Tier = a.key, a.account, a.tier
	now := a.h.now()
	end := a.h.traceAdmission(r.Context())
	res, err := a.h.limits.Reserve(r.Context(), want, now)
	end(err)
	var le *ratelimit.Error
	switch {
	case errors.As(err, &le):
		setRateHeaders(w.Header(), le.Status, now)
		return refusal(le, now)
	case err != nil:
		return fmt.Errorf("httpapi: rate limiter: %w", err)
	}
	a.res, a.held = res, true
	setRateHeaders(w.Header(), res.Status, now)
	return nil
}

// settleBackoff is the wait before each retry of a Settle that failed;
// all of them fit in settle's 5 s.
var settleBackoff = []time.Duration{50 * time.Millisecond, 200 * time.Millisecond, 800 * time.Millisecond}

// settle settles the reservation with used, even if the client has gone.
// A limiter's error may be brief (a connection reset, a failover), and
// a reservation left unsettled keeps its whole reserved cost charged
// for the month, so settle retries a failed Settle, backing off, within
// 5 s, before it logs the failure. A Limiter settles a reservation
// once, so a retry of a Settle that was applied (its reply lost) does
// nothing more.
func (a *admission) settle(r *http.Request, used ratelimit.Usage) {
	if !a.held {
		return
	}
	a.held = false
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	err := a.h.limits.Settle(ctx, a.res, used)
	for _, wait := range settleBackoff {
		if err == nil {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
			err = a.h.limits.Settle(ctx, a.res, used)
			continue
		}
		break
	}
	if err != nil {
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
	case errors.Is(e.Err, ratelimit.ErrNoCredit):
		out = noCredit(e)
	case errors.Is(e.Err, ratelimit.ErrSpendCap):
		out = formats.QuotaExceeded(fmt.Sprintf(
			"You exceeded your maximum monthly spend of %s USD: %s USD spent this month, and this request may cost up to %s USD. The spend resets when the month turns, at %s.",
			ratelimit.Money(e.Max), e.Status.Spent, ratelimit.Money(e.Requested), ratelimit.NextMonth(now).Format(time.RFC3339)))
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

// setRateHeaders writes the rate-limit headers of st at now.
func setRateHeaders(h http.Header, st ratelimit.Status, now time.Time) {
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
	if st.MaxSpend > 0 {
		h.Set("X-Ratelimit-Limit-Spend-Usd", st.MaxSpend.String())
		h.Set("X-Ratelimit-Remaining-Spend-Usd", max(st.MaxSpend-st.Spent, 0).String())
		h.Set("X-Ratelimit-Reset-Spend", resetText(ratelimit.NextMonth(now).Sub(now)))
	}
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
// input without a price of its own costs half the input price (the
// spec's 50% discount), rounded up to the nano-dollar.
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
		out.CachedInput = (out.Input + 1) / 2
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
