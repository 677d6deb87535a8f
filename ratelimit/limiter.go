package ratelimit

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"
)

// Limiter admits requests under their key's Tier and accounts for what
// they cost and used, per account and calendar month. Memory is the
// in-memory implementation; package ratelimit/redislimit shares the
// counts of several replicas through Redis; package
// ratelimit/ratelimittest checks any implementation. Implementations must
// be safe for concurrent use and exact under it: racing callers never get
// more admitted than a limit, and a reservation settles once.
//
// Every call takes the time it happens at, so that tests need no sleeps;
// implementations keep at least millisecond precision.
type Limiter interface {
	// Reserve admits r at time now, or refuses it with an *Error. An
	// admitted request holds its reservation (one request, its input
	// tokens, its maximum output tokens in its key's window, and their
	// cost in its account's month) until Settle or Cancel. If ctx ends
	// before the reservation is made, none is held.
	Reserve(ctx context.Context, r Request, now time.Time) (Reservation, error)
	// Settle replaces what res reserved by what the request used: the
	// window keeps counting the request at res.At, with used's tokens;
	// the month of res.At charges res.Account res.Prices.Cost(used)
	// instead of res.Cost, and counts used in its MonthUsage. Settling a
	// reservation twice, even concurrently, or one already cancelled,
	// does nothing.
	Settle(ctx context.Context, res Reservation, used Usage) error
	// Cancel undoes res as if it never was: for a request that did no
	// work, such as one whose client went away before it started.
	// Cancelling a settled reservation does nothing.
	Cancel(ctx context.Context, res Reservation) error
	// Usage returns what account spent and used in the calendar month
	// (UTC) of now. An account with nothing counted has a zero
	// MonthUsage with its Month set.
	Usage(ctx context.Context, account string, now time.Time) (MonthUsage, error)
}

// Quotas counts code-review plan quotas per account and calendar month
// (UTC). Memory and redislimit's Limiter implement it beside Limiter;
// package ratelimittest checks implementations (RunQuotas). They must be
// safe for concurrent use and exact under it.
type Quotas interface {
	// UseQuota takes q's reviews and summaries from the quotas of its
	// account's plan for the month of now, and counts q.User among the
	// month's users; or it refuses with an *Error wrapping
	// ErrQuotaExhausted and takes nothing. Negative counts give back
	// what an earlier call took (after a review that failed).
	UseQuota(ctx context.Context, q QuotaRequest, now time.Time) (QuotaStatus, error)
}

// MonthUsage is what an account spent and used in one calendar month
// (UTC). The zero value is a month with nothing counted.
type MonthUsage struct {
	// Month is the month, such as "2026-11" (see Month).
	Month string
	// Spent is what the month's spend cap counts: the cost of the
	// settled requests, plus Held.
	Spent Money
	// Held is the part of Spent that reservations hold until they
	// settle: requests in flight, and those abandoned without settling
	// (see Hold), whose reserved cost stays charged.
	Held Money
	// Requests counts the settled requests that were billed
	// (Usage.Requests).
	Requests int64
	// InputTokens counts the settled requests' prompt tokens, cached
	// ones included.
	InputTokens int64
	// CachedInputTokens is the part of InputTokens read from the cache.
	CachedInputTokens int64
	// OutputTokens counts the settled requests' generated tokens.
	OutputTokens int64
	// PlanFee is the part of Spent that is the code-review plan's price
	// for the month (QuotaRequest.Fee).
	PlanFee Money
}

// Request is one request to admit.
type Request struct {
	// Key is who the limits count for: an API key's id, never the key.
	Key string
	// Account is whose monthly spend the request counts in; "" means Key.
	Account string
	// Tier is the key's limits.
	Tier Tier
	// InputTokens is the prompt's length, counted with the model's
	// tokenizer. A prompt longer than the tier's input tokens per minute
	// can never be admitted: it is refused with ErrTooLarge.
	InputTokens int64
	// MaxOutputTokens is the most tokens the request may generate. The
	// window reserves at most the tier's output tokens per minute; the
	// spend cap reserves the cost of all of them.
	MaxOutputTokens int64
	// Images is the number of input images.
	Images int64
	// Prices are the model's prices; zero prices cost nothing, and a
	// request that costs nothing passes a spent cap.
	Prices Prices
}

// ChargedAccount returns the account whose month r is charged to:
// r.Account, or r.Key when that is empty.
func (r Request) ChargedAccount() string {
	if r.Account != "" {
		return r.Account
	}
	return r.Key
}

// Reservation is an admitted request. It is a value: Settle or Cancel it
// on the Limiter that made it.
type Reservation struct {
	// ID identifies the reservation within its key.
	ID string
	// Key is the request's key.
	Key string
	// Account is the account whose month is charged: Request.Account,
	// or Key when that is empty.
	Account string
	// At is when it was admitted: its place in the window and the month
	// it is charged to.
	At time.Time
	// Reserved is what the window holds for it: one request, the input
	// tokens, the output tokens (at most the tier's per-minute limit).
	Reserved Usage
	// Cost is what the month is charged until the request settles: the
	// cost of the input tokens and of every requested output token.
	Cost Money
	// Prices are the request's prices, which Settle charges.
	Prices Prices
	// Status is the key's state just after admission.
	Status Status
}

// Budget is the state of one limit.
type Budget struct {
	// Limit is the most allowed; 0 means no limit (and the other fields
	// are 0).
	Limit int64
	// Remaining is what is left now.
	Remaining int64
	// Reset is how long until the limit is whole again: until the last
	// use of it leaves the window, or until the month turns.
	Reset time.Duration
}

// Status is a key's state under its tier.
type Status struct {
	// Requests, InputTokens and OutputTokens are the per-minute limits.
	Requests, InputTokens, OutputTokens Budget
	// Spent is what the key's account has spent this month,
	// reservations included (MonthUsage.Spent).
	Spent Money
	// MaxSpend is the tier's cap; 0 means none.
	MaxSpend Money
}

// QuotaRequest is the use of plan quotas by one account.
type QuotaRequest struct {
	// Account is who the quotas count for: an organisation, a repository.
	Account string
	// Plan is the account's plan.
	Plan Plan
	// User is the person acting; "" counts no user.
	User string
	// Reviews and Summaries are the number taken (negative: given back).
	Reviews, Summaries int64
	// Fee is the plan's price for the month, charged to the account's
	// spend (MonthUsage.Spent and PlanFee) by the month's first
	// UseQuota of the account that carries one and is not refused;
	// later calls of the month charge nothing, however many race. A
	// fee is owed whatever the spend cap: it passes a spent cap. 0
	// charges nothing (a free plan, a trial).
	Fee Money
}

// QuotaStatus is an account's state under its plan in the current month.
type QuotaStatus struct {
	// Reviews, Summaries and Users: Reset is the time until the month
	// turns.
	Reviews, Summaries, Users Budget
	// Fee is what this call charged of QuotaRequest.Fee: all of it, or
	// 0 when the month's fee was charged before.
	Fee Money
}

// Sentinel errors, wrapped by an *Error.
var (
	// ErrRateLimited: a per-minute limit is reached; retry after
	// Error.RetryAfter.
	ErrRateLimited = errors.New("ratelimit: rate limit exceeded")
	// ErrTooLarge: the request alone exceeds a per-minute limit and can
	// never be admitted at its tier.
	ErrTooLarge = errors.New("ratelimit: request exceeds a per-minute limit by itself")
	// ErrSpendCap: the maximum monthly spend of the key's tier would be
	// exceeded by its account; it lasts until the month turns.
	ErrSpendCap = errors.New("ratelimit: maximum monthly spend reached")
	// ErrQuotaExhausted: a plan quota of the month is used up.
	ErrQuotaExhausted = errors.New("ratelimit: plan quota exhausted")
	// ErrNoCredit: under prepaid billing (account.Config.Billing), the
	// account's balance cannot pay for the request's maximum cost
	// (Limit LimitBalance), or the account has bought no tier yet
	// (Limit LimitTier). Waiting does not help; a purchase does.
	ErrNoCredit = errors.New("ratelimit: prepaid credit exhausted")
	// ErrUnavailable: a shared limiter's store could not be reached
	// (Redis down or restarting); it is wrapped with the client's error.
	// Nothing was admitted: try again shortly.
	ErrUnavailable = errors.New("ratelimit: the limiter's store is unavailable")
)

// Limit names, as in Error.Limit.
const (
	LimitRequests     = "requests"
	LimitInputTokens  = "input_tokens"
	LimitOutputTokens = "output_tokens"
	LimitSpend        = "monthly_spend"
	LimitReviews      = "reviews"
	LimitSummaries    = "summaries"
	LimitUsers        = "users"
	// LimitBalance: a prepaid balance (Error.Max is what is left of it,
	// in nano-dollars).
	LimitBalance = "balance"
	// LimitTier: no tier yet (Error.Max is the purchase, in
	// nano-dollars, that unlocks the first).
	LimitTier = "tier"
)

// Error is a refusal. errors.Is matches it with its Err sentinel.
type Error struct {
	// Err is ErrRateLimited, ErrTooLarge, ErrSpendCap, ErrNoCredit or
	// ErrQuotaExhausted.
	Err error
	// Key is the refused key, or the account of a quota.
	Key string
	// Account is the account of the refused key, whose spend reached
	// the cap for ErrSpendCap; "" for quotas.
	Account string
	// Limit names the limit reached, such as LimitRequests.
	Limit string
	// Max is that limit (in nano-dollars for LimitSpend).
	Max int64
	// Requested is what the request asked of it.
	Requested int64
	// RetryAfter is how long until the request could be admitted if
	// nothing else used the key: within the window for ErrRateLimited,
	// until the month turns for ErrSpendCap and ErrQuotaExhausted, 0 for
	// ErrTooLarge.
	RetryAfter time.Duration
	// Status is the key's state when refused (zero for quotas).
	Status Status
}

// Error says which limit refused the request.
func (e *Error) Error() string {
	switch {
	case errors.Is(e.Err, ErrSpendCap):
		return fmt.Sprintf("ratelimit: account %s has spent %s of its %s USD monthly maximum; this request may cost up to %s USD; retry after %s",
			e.Account, e.Status.Spent, Money(e.Max), Money(e.Requested), e.RetryAfter.Round(time.Second))
	case errors.Is(e.Err, ErrTooLarge):
		return fmt.Sprintf("ratelimit: %s: the request needs %d %s, more than the limit of %d per minute",
			e.Key, e.Requested, e.Limit, e.Max)
	case errors.Is(e.Err, ErrNoCredit) && e.Limit == LimitTier:
		return fmt.Sprintf("ratelimit: account %s has no tier yet: a purchase of %s USD unlocks the first", e.Account, Money(e.Max))
	case errors.Is(e.Err, ErrNoCredit):
		return fmt.Sprintf("ratelimit: account %s has %s USD of prepaid credit left; this request may cost up to %s USD",
			e.Account, Money(e.Max), Money(e.Requested))
	case errors.Is(e.Err, ErrQuotaExhausted):
		return fmt.Sprintf("ratelimit: %s has used its %d %s of the month; the quota renews in %s",
			e.Key, e.Max, e.Limit, e.RetryAfter.Round(time.Second))
	}
	return fmt.Sprintf("ratelimit: %s reached its limit of %d %s per minute; retry after %s",
		e.Key, e.Max, e.Limit, e.RetryAfter.Round(time.Millisecond))
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// NewID returns a random reservation id: implementations may use it.
func NewID() string { return rand.Text() }

// Month returns the calendar month of t in UTC, such as "2026-11": what
// spend, usage and quotas are counted by.
func Month(t time.Time) string { return t.UTC().Format("2006-01") }

// NextMonth returns the start of the month after t's, in UTC: when the
// month's spend and quotas start again from zero.
func NextMonth(t time.Time) time.Time {
	y, m, _ := t.UTC().Date()
	return time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC)
}

// Hold is how long an unsettled reservation is kept: a request that has
// neither settled nor cancelled after it is taken for abandoned, and its
// reserved cost stays charged.
const Hold = 24 * time.Hour

// Lease is how long a shared limiter (redislimit) holds a reservation's
// reserved cost against its account's spend cap: an unsettled
// reservation older than Lease (its process killed, say) gives its cost
// back, at the account's next Reserve. A request still running after
// Lease is not refused: its Settle charges its whole cost then, as the
// cost was given back.
const Lease = time.Hour

// Prepare checks r and returns what its reservation holds: the input
// tokens, the output tokens capped at the tier's limit, and the cost of
// the input and of every requested output token. It returns an *Error
// wrapping ErrTooLarge for a prompt longer than the tier allows per
// minute. Implementations of Limiter call it first, and charge the
// account r.ChargedAccount().
func Prepare(r Request) (in, out int64, cost Money, err error) {
	if r.Key == "" {
		return 0, 0, 0, errors.New("ratelimit: Request.Key is empty")
	}
	if r.InputTokens < 0 || r.MaxOutputTokens < 0 || r.Images < 0 {
		return 0, 0, 0, fmt.Errorf("ratelimit: negative counts in the request of %s", r.Key)
	}
	t := r.Tier
	if t.InputTokens > 0 && r.InputTokens > t.InputTokens {
		return 0, 0, 0, &Error{Err: ErrTooLarge, Key: r.Key, Limit: LimitInputTokens, Max: t.InputTokens, Requested: r.InputTokens}
	}
	out = r.MaxOutputTokens
	if t.OutputTokens > 0 {
		out = min(out, t.OutputTokens)
	}
	cost = r.Prices.Cost(Usage{Requests: 1, InputTokens: r.InputTokens, OutputTokens: r.MaxOutputTokens, Images: r.Images})
	return r.InputTokens, out, cost, nil
}
