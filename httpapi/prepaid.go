package httpapi

import (
	"errors"
	"fmt"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/ratelimit"
)

// Prepaid billing, when Config.Accounts bill so (account.Prepaid).
//
// Every metered route admits its request through the accounts' Limiter
// (account.Accounts.Limiter around Config.Limiter): the same
// reservation that the rate limits take before the engine starts also
// holds the request's maximum cost (its prompt and every output token
// it may generate, at its model's prices) from the account's balance,
// and the settlement draws what it really cost. A request the balance
// cannot pay for, or of an account that has bought no tier yet, is
// refused before the engine decodes anything with a 429
// insufficient_quota in its route's style, without Retry-After (waiting
// does not help; a purchase does, at once).

// prepaid wraps the Handler's limiter for prepaid accounts, which need
// one.
func (h *Handler) prepaid(a *account.Accounts) error {
	if a.Billing() != account.Prepaid {
		return nil
	}
	if h.limits == nil {
		return errors.New("httpapi: Config.Accounts bill prepaid, which needs a Config.Limiter")
	}
	h.limits = a.Limiter(h.limits)
	return nil
}

// noCredit is the 429 of a prepaid refusal (ratelimit.ErrNoCredit).
func noCredit(e *ratelimit.Error) *formats.Error {
	if e.Limit == ratelimit.LimitTier {
		return formats.QuotaExceeded(fmt.Sprintf(
			"Your account has no tier yet: buy credits to start (a purchase of %s USD unlocks the first tier).",
			ratelimit.Money(e.Max)))
	}
	return formats.QuotaExceeded(fmt.Sprintf(
		"Your prepaid credit is too low: %s USD left, and this request may cost up to %s USD. Buy credits, or ask for fewer output tokens.",
		ratelimit.Money(e.Max), ratelimit.Money(e.Requested)))
}
