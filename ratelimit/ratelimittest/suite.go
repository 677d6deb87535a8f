// Package ratelimittest checks that an implementation of
// ratelimit.Limiter keeps the package's rules (windows, tiers,
// reservations and their settling exactly once, spend caps per account,
// monthly usage, and exactness under concurrency), and that an
// implementation of ratelimit.Quotas keeps the plan quotas'. Run them
// from a test of the implementation:
//
//	func TestLimiter(t *testing.T) {
//		ratelimittest.Run(t, func(t *testing.T) ratelimit.Limiter { return newEmptyLimiter(t) })
//		ratelimittest.RunQuotas(t, func(t *testing.T) ratelimit.Quotas { return newEmptyLimiter(t) })
//	}
package ratelimittest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// t0 is the suite's clock start, in the middle of a month, on a whole
// second (implementations need only millisecond precision).
var t0 = time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)

// Run runs the suite of a Limiter. newLimiter returns an empty Limiter
// for each subtest; the subtests pass the times of a fake clock to it.
func Run(t *testing.T, newLimiter func(t *testing.T) ratelimit.Limiter) {
	t.Run("Tiers", func(t *testing.T) { testTiers(t, newLimiter(t)) })
	t.Run("SlidingWindow", func(t *testing.T) { testSliding(t, newLimiter(t)) })
	t.Run("Tokens", func(t *testing.T) { testTokens(t, newLimiter(t)) })
	t.Run("Settle", func(t *testing.T) { testSettle(t, newLimiter(t)) })
	t.Run("Cancel", func(t *testing.T) { testCancel(t, newLimiter(t)) })
	t.Run("Status", func(t *testing.T) { testStatus(t, newLimiter(t)) })
	t.Run("KeysApart", func(t *testing.T) { testKeysApart(t, newLimiter(t)) })
	t.Run("SpendCap", func(t *testing.T) { testSpendCap(t, newLimiter(t)) })
	t.Run("SpendSettleAcrossMonths", func(t *testing.T) { testSpendMonths(t, newLimiter(t)) })
	t.Run("UsageOfPastMonth", func(t *testing.T) { testUsagePastMonth(t, newLimiter(t)) })
	t.Run("ClockBehindAcrossMonths", func(t *testing.T) { testClockBehind(t, newLimiter(t)) })
	t.Run("AccountSpend", func(t *testing.T) { testAccountSpend(t, newLimiter(t)) })
	t.Run("Usage", func(t *testing.T) { testUsage(t, newLimiter(t)) })
	t.Run("Unlimited", func(t *testing.T) { testUnlimited(t, newLimiter(t)) })
	t.Run("Saturated", func(t *testing.T) { testSaturated(t, newLimiter(t)) })
	t.Run("Cancelled", func(t *testing.T) { testCancelledContext(t, newLimiter(t)) })
	t.Run("ConcurrentRequests", func(t *testing.T) { testConcurrentRequests(t, newLimiter(t)) })
	t.Run("ConcurrentTokens", func(t *testing.T) { testConcurrentTokens(t, newLimiter(t)) })
	t.Run("ConcurrentSpend", func(t *testing.T) { testConcurrentSpend(t, newLimiter(t)) })
	t.Run("ConcurrentAccountSpend", func(t *testing.T) { testConcurrentAccountSpend(t, newLimiter(t)) })
	t.Run("ConcurrentSettle", func(t *testing.T) { testConcurrentSettle(t, newLimiter(t)) })
}

// RunQuotas runs the suite of a Quotas. newQuotas returns an empty
// Quotas for each subtest; the subtests pass the times of a fake clock to
// it.
func RunQuotas(t *testing.T, newQuotas func(t *testing.T) ratelimit.Quotas) {
	t.Run("Quotas", func(t *testing.T) { testQuotas(t, newQuotas(t)) })
	t.Run("QuotaUsers", func(t *testing.T) { testQuotaUsers(t, newQuotas(t)) })
	t.Run("QuotaAccountsApart", func(t *testing.T) { testQuotaAccountsApart(t, newQuotas(t)) })
	t.Run("ConcurrentQuota", func(t *testing.T) { testConcurrentQuota(t, newQuotas(t)) })
	t.Run("PlanFee", func(t *testing.T) { testPlanFee(t, newQuotas(t)) })
}

// reserve admits r at now or fails the test.
func reserve(t *testing.T, l ratelimit.Limiter, r ratelimit.Request, now time.Time) ratelimit.Reservation {
	t.Helper()
	res, err := l.Reserve(context.Background(), r, now)
	if err != nil {
		t.Fatalf("Reserve(%+v) at %s: %v", r, now.Sub(t0), err)
	}
	return res
}

// refused checks that r is refused at now with sentinel and limit, and
// returns the error.
func refused(t *testing.T, l ratelimit.Limiter, r ratelimit.Request, now time.Time, sentinel error, limit string) *ratelimit.Error {
	t.Helper()
	_, err := l.Reserve(context.Background(), r, now)
	var e *ratelimit.Error
	if !errors.As(err, &e) || !errors.Is(err, sentinel) || e.Limit != limit {
		t.Fatalf("Reserve(%+v) at %s = %v, want an *Error wrapping %v for %s", r, now.Sub(t0), err, sentinel, limit)
	}
	return e
}

func testTiers(t *testing.T, l ratelimit.Limiter) {
	for _, tier := range []ratelimit.Tier{policy.Default, policy.Tier2, policy.Tier3} {
		t.Run(tier.Name, func(t *testing.T) {
			r := ratelimit.Request{Key: "key-" + tier.Name, Tier: tier}
			for range tier.Requests {
				reserve(t, l, r, t0)
			}
			e := refused(t, l, r, t0.Add(30*time.Second), ratelimit.ErrRateLimited, ratelimit.LimitRequests)
			if e.RetryAfter != 30*time.Second || e.Max != tier.Requests || e.Status.Requests.Remaining != 0 {
				t.Errorf("refusal: RetryAfter %s, Max %d, remaining %d; want 30s, %d, 0", e.RetryAfter, e.Max, e.Status.Requests.Remaining, tier.Requests)
			}
			reserve(t, l, r, t0.Add(ratelimit.Window))
		})
	}
}

func testSliding(t *testing.T, l ratelimit.Limiter) {
	r := ratelimit.Request{Key: "k", Tier: policy.Default} // 20 per minute
	for range 10 {
		reserve(t, l, r, t0)
	}
	for range 10 {
		reserve(t, l, r, t0.Add(30*time.Second))
	}
	e := refused(t, l, r, t0.Add(59*time.Second), ratelimit.ErrRateLimited, ratelimit.LimitRequests)
	if e.RetryAfter != time.Second {
		t.Errorf("RetryAfter = %s, want 1s", e.RetryAfter)
	}
	// At t0+60s the first ten leave the window, the other ten stay.
	for range 10 {
		reserve(t, l, r, t0.Add(60*time.Second))
	}
	e = refused(t, l, r, t0.Add(60*time.Second), ratelimit.ErrRateLimited, ratelimit.LimitRequests)
	if e.RetryAfter != 30*time.Second {
		t.Errorf("RetryAfter = %s, want 30s", e.RetryAfter)
	}
}

func testTokens(t *testing.T, l ratelimit.Limiter) {
	tier := policy.Default // 30,000 in, 8,000 out
	reserve(t, l, ratelimit.Request{Key: "k", Tier: tier, InputTokens: 20_000}, t0)
	e := refused(t, l, ratelimit.Request{Key: "k", Tier: tier, InputTokens: 15_000}, t0.Add(time.Second), ratelimit.ErrRateLimited, ratelimit.LimitInputTokens)
	if e.RetryAfter != 59*time.Second || e.Requested != 15_000 {
		t.Errorf("input refusal: RetryAfter %s, Requested %d", e.RetryAfter, e.Requested)
	}
	reserve(t, l, ratelimit.Request{Key: "k", Tier: tier, InputTokens: 10_000}, t0.Add(time.Second))

	// A prompt over the whole limit can never pass.
	_, err := l.Reserve(context.Background(), ratelimit.Request{Key: "k2", Tier: tier, InputTokens: 30_001}, t0)
	if !errors.Is(err, ratelimit.ErrTooLarge) {
		t.Errorf("a 30,001-token prompt: %v, want ErrTooLarge", err)
	}
	// A maximum output over the limit reserves the limit.
	res := reserve(t, l, ratelimit.Request{Key: "k3", Tier: tier, MaxOutputTokens: 100_000}, t0)
	if res.Reserved.OutputTokens != 8_000 {
		t.Errorf("reserved output = %d, want 8000", res.Reserved.OutputTokens)
	}
	refused(t, l, ratelimit.Request{Key: "k3", Tier: tier, MaxOutputTokens: 1}, t0, ratelimit.ErrRateLimited, ratelimit.LimitOutputTokens)
	// A request that wants no output passes the exhausted output limit.
	res = reserve(t, l, ratelimit.Request{Key: "k3", Tier: tier, InputTokens: 10}, t0)
	if res.Status.OutputTokens.Remaining != 0 || res.Status.Requests.Remaining != 18 {
		t.Errorf("status %+v", res.Status)
	}
}

func testSettle(t *testing.T, l ratelimit.Limiter) {
	ctx := context.Background()
	tier := policy.Default
	r := ratelimit.Request{Key: "k", Tier: tier, InputTokens: 100, MaxOutputTokens: 5_000}
	first := reserve(t, l, r, t0)
	refused(t, l, r, t0.Add(time.Second), ratelimit.ErrRateLimited, ratelimit.LimitOutputTokens)
	if err := l.Settle(ctx, first, ratelimit.Usage{Requests: 1, InputTokens: 100, OutputTokens: 120}); err != nil {
		t.Fatal(err)
	}
	second := reserve(t, l, r, t0.Add(time.Second))
	if got := second.Status.OutputTokens.Remaining; got != 8_000-120-5_000 {
		t.Errorf("remaining output after a settled request = %d, want %d", got, 8_000-120-5_000)
	}
	// Settling again changes nothing.
	if err := l.Settle(ctx, first, ratelimit.Usage{Requests: 1, InputTokens: 100, OutputTokens: 7_000}); err != nil {
		t.Fatal(err)
	}
	third := reserve(t, l, ratelimit.Request{Key: "k", Tier: tier, MaxOutputTokens: 2_880}, t0.Add(2*time.Second))
	if third.Status.OutputTokens.Remaining != 0 {
		t.Errorf("remaining = %d, want 0", third.Status.OutputTokens.Remaining)
	}
	// A settle above the reservation counts in full (the window may go over).
	if err := l.Settle(ctx, second, ratelimit.Usage{Requests: 1, InputTokens: 100, OutputTokens: 6_000}); err != nil {
		t.Fatal(err)
	}
	e := refused(t, l, ratelimit.Request{Key: "k", Tier: tier, MaxOutputTokens: 1}, t0.Add(3*time.Second), ratelimit.ErrRateLimited, ratelimit.LimitOutputTokens)
	if e.Status.OutputTokens.Remaining != 0 || e.RetryAfter != 58*time.Second {
		t.Errorf("after an overrun: remaining %d, RetryAfter %s; want 0, 58s", e.Status.OutputTokens.Remaining, e.RetryAfter)
	}
}

func testCancel(t *testing.T, l ratelimit.Limiter) {
	ctx := context.Background()
	tier := ratelimit.Tier{Name: "one", Requests: 1, MaxMonthlySpend: ratelimit.Dollar}
	prices := ratelimit.Prices{Request: ratelimit.Dollar}
	r := ratelimit.Request{Key: "k", Tier: tier, Prices: prices}
	res := reserve(t, l, r, t0)
	refused(t, l, r, t0, ratelimit.ErrSpendCap, ratelimit.LimitSpend)
	if err := l.Cancel(ctx, res); err != nil {
		t.Fatal(err)
	}
	res = reserve(t, l, r, t0) // the request and the dollar are back
	if err := l.Settle(ctx, res, ratelimit.Usage{}); err != nil {
		t.Fatal(err)
	}
	// Settled with nothing billed: the dollar is back, the request is not.
	refused(t, l, r, t0, ratelimit.ErrRateLimited, ratelimit.LimitRequests)
	if err := l.Cancel(ctx, res); err != nil { // after Settle: nothing
		t.Fatal(err)
	}
	refused(t, l, r, t0, ratelimit.ErrRateLimited, ratelimit.LimitRequests)
	reserve(t, l, r, t0.Add(ratelimit.Window))
}

func testStatus(t *testing.T, l ratelimit.Limiter) {
	tier := policy.Default
	reserve(t, l, ratelimit.Request{Key: "k", Tier: tier, InputTokens: 1_000, MaxOutputTokens: 500}, t0)
	res := reserve(t, l, ratelimit.Request{Key: "k", Tier: tier, InputTokens: 2_000}, t0.Add(10*time.Second))
	want := ratelimit.Status{
		Requests:     ratelimit.Budget{Limit: 20, Remaining: 18, Reset: ratelimit.Window},
		InputTokens:  ratelimit.Budget{Limit: 30_000, Remaining: 27_000, Reset: ratelimit.Window},
		OutputTokens: ratelimit.Budget{Limit: 8_000, Remaining: 7_500, Reset: 50 * time.Second},
		MaxSpend:     100 * ratelimit.Dollar,
	}
	if res.Status != want {
		t.Errorf("status:\n got %+v\nwant %+v", res.Status, want)
	}
	unlimited := reserve(t, l, ratelimit.Request{Key: "u", Tier: ratelimit.Tier{Name: "unlimited"}, InputTokens: 1 << 40}, t0)
	if unlimited.Status != (ratelimit.Status{}) {
		t.Errorf("status of an unlimited tier = %+v, want zero", unlimited.Status)
	}
}

func testKeysApart(t *testing.T, l ratelimit.Limiter) {
	tier := ratelimit.Tier{Name: "one", Requests: 1}
	reserve(t, l, ratelimit.Request{Key: "a", Tier: tier}, t0)
	reserve(t, l, ratelimit.Request{Key: "b", Tier: tier}, t0)
	refused(t, l, ratelimit.Request{Key: "a", Tier: tier}, t0, ratelimit.ErrRateLimited, ratelimit.LimitRequests)
}

func testSpendCap(t *testing.T, l ratelimit.Limiter) {
	ctx := context.Background()
	tier := policy.Default // 100 USD
	prices := ratelimit.Prices{Input: 2 * ratelimit.MicroDollar, Output: 8 * ratelimit.MicroDollar, Request: ratelimit.Cent}
	r := ratelimit.Request{Key: "k", Tier: tier, InputTokens: 1_000, MaxOutputTokens: 1_000, Prices: prices}
	res := reserve(t, l, r, t0)
	// 0.01 + 1000×0.000002 + 1000×0.000008 = 0.02 USD reserved.
	if res.Cost != 2*ratelimit.Cent || res.Status.Spent != 2*ratelimit.Cent {
		t.Errorf("reserved cost %s, spent %s; want 0.02, 0.02", res.Cost, res.Status.Spent)
	}
	// Cached input at its own price; 10 output tokens.
	prices.CachedInput = ratelimit.MicroDollar
	res.Prices = prices
	if err := l.Settle(ctx, res, ratelimit.Usage{Requests: 1, InputTokens: 1_000, CachedInputTokens: 400, OutputTokens: 10}); err != nil {
		t.Fatal(err)
	}
	// Spend up to about 0.01 below the cap: 0.01 + 12,496,000 × 0.000008.
	big := ratelimit.Request{Key: "k", Tier: ratelimit.Tier{Name: "spend", MaxMonthlySpend: tier.MaxMonthlySpend},
		MaxOutputTokens: 12_496_000, Prices: prices}
	res2 := reserve(t, l, big, t0.Add(time.Second))
	// Spent: 0.01 + 0.0012 + 0.0004 + 0.00008 = 0.01168, plus 99.978.
	wantSpent := ratelimit.Money(99_989_680_000)
	if res2.Status.Spent != wantSpent {
		t.Errorf("spent = %s, want %s", res2.Status.Spent, wantSpent)
	}
	e := refused(t, l, r, t0.Add(2*time.Second), ratelimit.ErrSpendCap, ratelimit.LimitSpend)
	if want := ratelimit.NextMonth(t0).Sub(t0.Add(2 * time.Second)); e.RetryAfter != want {
		t.Errorf("RetryAfter = %s, want %s (the month's end)", e.RetryAfter, want)
	}
	// Requests that cost nothing still pass.
	reserve(t, l, ratelimit.Request{Key: "k", Tier: tier}, t0.Add(2*time.Second))
	// Settling the big one low frees the cap.
	if err := l.Settle(ctx, res2, ratelimit.Usage{Requests: 1, OutputTokens: 1}); err != nil {
		t.Fatal(err)
	}
	reserve(t, l, r, t0.Add(3*time.Second))
	// The month turns: spend starts from zero.
	res3 := reserve(t, l, big, ratelimit.NextMonth(t0))
	if res3.Status.Spent != res3.Cost {
		t.Errorf("spent in the new month = %s, want %s", res3.Status.Spent, res3.Cost)
	}
}

func testSpendMonths(t *testing.T, l ratelimit.Limiter) {
	ctx := context.Background()
	tier := ratelimit.Tier{Name: "cap", MaxMonthlySpend: ratelimit.Dollar}
	prices := ratelimit.Prices{Output: ratelimit.Cent}
	end := ratelimit.NextMonth(t0).Add(-time.Second)
	old := reserve(t, l, ratelimit.Request{Key: "k", Tier: tier, MaxOutputTokens: 100, Prices: prices}, end)
	next := ratelimit.NextMonth(t0)
	cur := reserve(t, l, ratelimit.Request{Key: "k", Tier: tier, MaxOutputTokens: 100, Prices: prices}, next)
	// Settling last month's reservation charges last month only.
	if err := l.Settle(ctx, old, ratelimit.Usage{Requests: 1, OutputTokens: 100}); err != nil {
		t.Fatal(err)
	}
	refused(t, l, ratelimit.Request{Key: "k", Tier: tier, MaxOutputTokens: 1, Prices: prices}, next, ratelimit.ErrSpendCap, ratelimit.LimitSpend)
	if err := l.Settle(ctx, cur, ratelimit.Usage{Requests: 1, OutputTokens: 50}); err != nil {
		t.Fatal(err)
	}
	res := reserve(t, l, ratelimit.Request{Key: "k", Tier: tier, MaxOutputTokens: 50, Prices: prices}, next)
	if res.Status.Spent != ratelimit.Dollar {
		t.Errorf("spent = %s, want 1", res.Status.Spent)
	}
}

// testUsagePastMonth: reading a past month's usage forgets nothing of
// this month's: the reservation settles to its cost, and the cap holds.
func testUsagePastMonth(t *testing.T, l ratelimit.Limiter) {
	ctx := context.Background()
	tier := ratelimit.Tier{Name: "cap", MaxMonthlySpend: ratelimit.Dollar}
	prices := ratelimit.Prices{Output: ratelimit.Cent}
	r := ratelimit.Request{Key: "k", Account: "acct", Tier: tier, MaxOutputTokens: 80, Prices: prices}
	res := reserve(t, l, r, t0)
	october := time.Date(2026, 10, 20, 0, 0, 0, 0, time.UTC)
	if u := usage(t, l, "acct", october); u != (ratelimit.MonthUsage{Month: "2026-10"}) {
		t.Errorf("usage of October = %+v, want zero", u)
	}
	if u := usage(t, l, "acct", t0.Add(time.Second)); u.Spent != 80*ratelimit.Cent || u.Held != 80*ratelimit.Cent {
		t.Errorf("usage of November after reading October = %+v, want 0.8 spent and held", u)
	}
	if err := l.Settle(ctx, res, ratelimit.Usage{Requests: 1, OutputTokens: 50}); err != nil {
		t.Fatal(err)
	}
	want := ratelimit.MonthUsage{Month: "2026-11", Spent: 50 * ratelimit.Cent, Requests: 1, OutputTokens: 50}
	if u := usage(t, l, "acct", t0.Add(2*time.Second)); u != want {
		t.Errorf("usage after settling:\n got %+v\nwant %+v", u, want)
	}
	reserve(t, l, ratelimit.Request{Key: "k", Account: "acct", Tier: tier, MaxOutputTokens: 50, Prices: prices}, t0.Add(3*time.Second))
	refused(t, l, ratelimit.Request{Key: "k", Account: "acct", Tier: tier, MaxOutputTokens: 1, Prices: prices}, t0.Add(4*time.Second),
		ratelimit.ErrSpendCap, ratelimit.LimitSpend)
}

// testClockBehind: callers read their clocks before the limiter orders
// their calls, so a call may come with a time a little before the last
// one's, across a month's end. The new month's spend stays counted: it
// settles, cancels and caps as it should.
func testClockBehind(t *testing.T, l ratelimit.Limiter) {
	ctx := context.Background()
	tier := ratelimit.Tier{Name: "cap", MaxMonthlySpend: ratelimit.Dollar}
	prices := ratelimit.Prices{Output: ratelimit.Cent}
	dec := ratelimit.NextMonth(t0).Add(5 * time.Millisecond) // 2026-12-01 00:00:00.005
	nov := dec.Add(-10 * time.Millisecond)                   // 2026-11-30 23:59:59.995
	r := ratelimit.Request{Key: "k", Account: "acct", Tier: tier, MaxOutputTokens: 60, Prices: prices}
	a := reserve(t, l, r, dec)
	b := reserve(t, l, r, nov) // November's own spend: 0.6 of its cap
	if b.Status.Spent != 60*ratelimit.Cent {
		t.Errorf("November's reservation: spent %s, want 0.6", b.Status.Spent)
	}
	if u := usage(t, l, "acct", dec); u.Spent != 60*ratelimit.Cent || u.Held != 60*ratelimit.Cent {
		t.Errorf("December after a call in November = %+v, want 0.6 spent and held", u)
	}
	refused(t, l, r, dec, ratelimit.ErrSpendCap, ratelimit.LimitSpend) // 1.2 > 1
	if err := l.Settle(ctx, a, ratelimit.Usage{Requests: 1, OutputTokens: 30}); err != nil {
		t.Fatal(err)
	}
	if err := l.Cancel(ctx, b); err != nil {
		t.Fatal(err)
	}
	want := ratelimit.MonthUsage{Month: "2026-12", Spent: 30 * ratelimit.Cent, Requests: 1, OutputTokens: 30}
	if u := usage(t, l, "acct", dec); u != want {
		t.Errorf("December after settling:\n got %+v\nwant %+v", u, want)
	}
	if u := usage(t, l, "acct", nov); u != (ratelimit.MonthUsage{Month: "2026-11"}) {
		t.Errorf("November after cancelling = %+v, want zero", u)
	}
	reserve(t, l, ratelimit.Request{Key: "k", Account: "acct", Tier: tier, MaxOutputTokens: 70, Prices: prices}, dec)
	refused(t, l, ratelimit.Request{Key: "k", Account: "acct", Tier: tier, MaxOutputTokens: 1, Prices: prices}, dec,
		ratelimit.ErrSpendCap, ratelimit.LimitSpend)
}

func testQuotas(t *testing.T, l ratelimit.Quotas) {
	ctx := context.Background()
	for _, plan := range []ratelimit.Plan{policy.Free, policy.Team, policy.Growth} {
		t.Run(plan.Name, func(t *testing.T) {
			q := ratelimit.QuotaRequest{Account: "acct-" + plan.Name, Plan: plan, User: "ann", Reviews: 1}
			var st ratelimit.QuotaStatus
			for i := range plan.Reviews {
				var err error
				if st, err = l.UseQuota(ctx, q, t0); err != nil {
					t.Fatalf("review %d: %v", i+1, err)
				}
			}
			if st.Reviews != (ratelimit.Budget{Limit: plan.Reviews, Remaining: 0, Reset: ratelimit.NextMonth(t0).Sub(t0)}) {
				t.Errorf("reviews budget = %+v", st.Reviews)
			}
			_, err := l.UseQuota(ctx, q, t0)
			var e *ratelimit.Error
			if !errors.As(err, &e) || !errors.Is(err, ratelimit.ErrQuotaExhausted) || e.Limit != ratelimit.LimitReviews || e.Max != plan.Reviews {
				t.Fatalf("review %d: %v, want ErrQuotaExhausted for reviews", plan.Reviews+1, err)
			}
			// Summaries are counted apart.
			sq := q
			sq.Reviews, sq.Summaries = 0, plan.Summaries
			if st, err = l.UseQuota(ctx, sq, t0); err != nil || st.Summaries.Remaining != 0 {
				t.Fatalf("summaries: %+v, %v", st.Summaries, err)
			}
			sq.Summaries = 1
			if _, err := l.UseQuota(ctx, sq, t0); !errors.Is(err, ratelimit.ErrQuotaExhausted) {
				t.Fatalf("summary over the quota: %v", err)
			}
			// Giving back one review lets one more through.
			back := q
			back.Reviews = -1
			if _, err := l.UseQuota(ctx, back, t0); err != nil {
				t.Fatal(err)
			}
			if _, err := l.UseQuota(ctx, q, t0); err != nil {
				t.Fatalf("after giving one back: %v", err)
			}
			// The month turns.
			if st, err := l.UseQuota(ctx, q, ratelimit.NextMonth(t0)); err != nil || st.Reviews.Remaining != plan.Reviews-1 {
				t.Fatalf("next month: %+v, %v", st.Reviews, err)
			}
		})
	}
	t.Run("enterprise", func(t *testing.T) {
		q := ratelimit.QuotaRequest{Account: "big", Plan: policy.Enterprise, User: "ann", Reviews: 100_000, Summaries: 100_000}
		for i := range 3 {
			q.User = fmt.Sprint("user", i)
			st, err := l.UseQuota(ctx, q, t0)
			if err != nil || st != (ratelimit.QuotaStatus{}) {
				t.Fatalf("enterprise: %+v, %v", st, err)
			}
		}
	})
}

func testQuotaUsers(t *testing.T, l ratelimit.Quotas) {
	ctx := context.Background()
	plan := ratelimit.Plan{Name: "two", Users: 2}
	for _, u := range []string{"ann", "bob", "ann", "bob", ""} {
		if _, err := l.UseQuota(ctx, ratelimit.QuotaRequest{Account: "a", Plan: plan, User: u, Reviews: 1}, t0); err != nil {
			t.Fatalf("user %q: %v", u, err)
		}
	}
	_, err := l.UseQuota(ctx, ratelimit.QuotaRequest{Account: "a", Plan: plan, User: "cy", Reviews: 1}, t0)
	var e *ratelimit.Error
	if !errors.As(err, &e) || e.Limit != ratelimit.LimitUsers || e.Max != 2 {
		t.Fatalf("a third user: %v, want the users quota", err)
	}
	st, err := l.UseQuota(ctx, ratelimit.QuotaRequest{Account: "a", Plan: plan, User: "cy"}, ratelimit.NextMonth(t0))
	if err != nil || st.Users.Remaining != 1 {
		t.Fatalf("next month: %+v, %v", st, err)
	}
}

func testCancelledContext(t *testing.T, l ratelimit.Limiter) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tier := ratelimit.Tier{Name: "one", Requests: 1}
	if _, err := l.Reserve(ctx, ratelimit.Request{Key: "k", Tier: tier}, t0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Reserve with a cancelled context: %v", err)
	}
	reserve(t, l, ratelimit.Request{Key: "k", Tier: tier}, t0) // nothing was held
}

// race runs n goroutines at once and returns how many f admitted.
func race(n int, f func(i int) error) (admitted int64, errs []error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		count atomic.Int64
		start = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-start
			err := f(i)
			if err == nil {
				count.Add(1)
				return
			}
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return count.Load(), errs
}

// onlyRefusals fails the test on an error that is no refusal.
func onlyRefusals(t *testing.T, errs []error, sentinel error) {
	t.Helper()
	for _, err := range errs {
		if !errors.Is(err, sentinel) {
			t.Fatalf("unexpected error: %v", err)
		}
	}
}

func testConcurrentRequests(t *testing.T, l ratelimit.Limiter) {
	ctx := context.Background()
	admitted, errs := race(100, func(i int) error {
		_, err := l.Reserve(ctx, ratelimit.Request{Key: "k", Tier: policy.Default}, t0.Add(time.Duration(i)*time.Millisecond))
		return err
	})
	onlyRefusals(t, errs, ratelimit.ErrRateLimited)
	if admitted != policy.Default.Requests {
		t.Fatalf("admitted %d of 100 racing requests, want %d", admitted, policy.Default.Requests)
	}
}

func testConcurrentTokens(t *testing.T, l ratelimit.Limiter) {
	ctx := context.Background()
	tier := ratelimit.Tier{Name: "tokens", InputTokens: 30_000, OutputTokens: 8_000}
	admitted, errs := race(60, func(i int) error {
		res, err := l.Reserve(ctx, ratelimit.Request{Key: "k", Tier: tier, InputTokens: 1_000, MaxOutputTokens: 400}, t0)
		if err == nil && i%2 == 0 { // settling concurrently must not break exactness
			err = l.Settle(ctx, res, ratelimit.Usage{Requests: 1, InputTokens: 1_000, OutputTokens: 400})
		}
		return err
	})
	onlyRefusals(t, errs, ratelimit.ErrRateLimited)
	if admitted != 20 { // 8,000 / 400
		t.Fatalf("admitted %d, want 20", admitted)
	}
}

func testConcurrentSpend(t *testing.T, l ratelimit.Limiter) {
	ctx := context.Background()
	tier := ratelimit.Tier{Name: "cap", MaxMonthlySpend: ratelimit.Dollar}
	admitted, errs := race(50, func(i int) error {
		_, err := l.Reserve(ctx, ratelimit.Request{Key: "k", Tier: tier, Prices: ratelimit.Prices{Request: 3 * ratelimit.Cent}}, t0)
		return err
	})
	onlyRefusals(t, errs, ratelimit.ErrSpendCap)
	if admitted != 33 { // 100 / 3
		t.Fatalf("admitted %d, want 33", admitted)
	}
}

func testConcurrentQuota(t *testing.T, l ratelimit.Quotas) {
	ctx := context.Background()
	admitted, errs := race(60, func(i int) error {
		_, err := l.UseQuota(ctx, ratelimit.QuotaRequest{Account: "a", Plan: policy.Free, User: "ann", Reviews: 1}, t0)
		return err
	})
	onlyRefusals(t, errs, ratelimit.ErrQuotaExhausted)
	if admitted != policy.Free.Reviews {
		t.Fatalf("admitted %d reviews, want %d", admitted, policy.Free.Reviews)
	}
}

// testPlanFee: racing calls that carry the plan's fee charge it once a
// month, to the month's spend (whatever the spend cap), and a refused
// call charges nothing. A Quotas that is also a Limiter reports the fee
// in its usage.
func testPlanFee(t *testing.T, l ratelimit.Quotas) {
	ctx := context.Background()
	team := policy.Team
	q := ratelimit.QuotaRequest{Account: "a", Plan: team, User: "ann", Reviews: 1, Fee: team.Price}
	var charged atomic.Int64
	admitted, errs := race(40, func(i int) error {
		st, err := l.UseQuota(ctx, q, t0)
		charged.Add(int64(st.Fee))
		return err
	})
	onlyRefusals(t, errs, ratelimit.ErrQuotaExhausted)
	if admitted != 40 || charged.Load() != int64(team.Price) {
		t.Fatalf("%d admitted, %s charged; want 40 and the fee %s once", admitted, ratelimit.Money(charged.Load()), team.Price)
	}
	lim, isLimiter := l.(ratelimit.Limiter)
	if isLimiter {
		if u := usage(t, lim, "a", t0); u.Spent != team.Price || u.PlanFee != team.Price {
			t.Errorf("usage after the fee: spent %s, plan fee %s; want %s", u.Spent, u.PlanFee, team.Price)
		}
	}
	// A refused call of a new account charges nothing.
	one := ratelimit.Plan{Name: "one", Users: 1, Price: team.Price}
	if _, err := l.UseQuota(ctx, ratelimit.QuotaRequest{Account: "b", Plan: one, User: "ann"}, t0); err != nil {
		t.Fatal(err)
	}
	if st, err := l.UseQuota(ctx, ratelimit.QuotaRequest{Account: "b", Plan: one, User: "bob", Fee: one.Price}, t0); !errors.Is(err, ratelimit.ErrQuotaExhausted) || st.Fee != 0 {
		t.Fatalf("a refused call: %+v %v", st, err)
	}
	if isLimiter {
		if u := usage(t, lim, "b", t0); u.Spent != 0 || u.PlanFee != 0 {
			t.Errorf("a refused call charged %s", u.Spent)
		}
	}
	// The next month charges it again, once.
	next := ratelimit.NextMonth(t0).Add(time.Hour)
	for want := team.Price; ; want = 0 {
		st, err := l.UseQuota(ctx, ratelimit.QuotaRequest{Account: "a", Plan: team, Fee: team.Price}, next)
		if err != nil || st.Fee != want {
			t.Fatalf("next month: charged %s (%v), want %s", st.Fee, err, want)
		}
		if want == 0 {
			break
		}
	}
	if _, err := l.UseQuota(ctx, ratelimit.QuotaRequest{Account: "a", Plan: team, Fee: -1}, next); err == nil {
		t.Error("a negative fee was taken")
	}
}

// usage returns the usage of account in the month of now or fails the
// test.
func usage(t *testing.T, l ratelimit.Limiter, account string, now time.Time) ratelimit.MonthUsage {
	t.Helper()
	u, err := l.Usage(context.Background(), account, now)
	if err != nil {
		t.Fatalf("Usage(%q) at %s: %v", account, now.Sub(t0), err)
	}
	return u
}

// testAccountSpend: the keys of one account share its monthly spend and
// cap, while each keeps its own per-minute window; a key without an
// account is its own.
func testAccountSpend(t *testing.T, l ratelimit.Limiter) {
	tier := ratelimit.Tier{Name: "two", Requests: 2, MaxMonthlySpend: ratelimit.Dollar}
	prices := ratelimit.Prices{Request: 30 * ratelimit.Cent}
	k1 := ratelimit.Request{Key: "k1", Account: "acct", Tier: tier, Prices: prices}
	k2 := ratelimit.Request{Key: "k2", Account: "acct", Tier: tier, Prices: prices}
	res := reserve(t, l, k1, t0)
	if res.Account != "acct" || res.Status.Spent != 30*ratelimit.Cent {
		t.Errorf("reservation of k1: account %q, spent %s; want acct, 0.3", res.Account, res.Status.Spent)
	}
	reserve(t, l, k1, t0)
	refused(t, l, k1, t0, ratelimit.ErrRateLimited, ratelimit.LimitRequests) // k1's window is full
	res = reserve(t, l, k2, t0)                                              // k2's is not
	if res.Status.Spent != 90*ratelimit.Cent || res.Status.Requests.Remaining != 1 {
		t.Errorf("reservation of k2: spent %s, requests left %d; want the account's 0.9 and k2's 1", res.Status.Spent, res.Status.Requests.Remaining)
	}
	e := refused(t, l, k2, t0, ratelimit.ErrSpendCap, ratelimit.LimitSpend) // 1.2 > 1: the account's cap
	if e.Account != "acct" || e.Key != "k2" || e.Status.Spent != 90*ratelimit.Cent {
		t.Errorf("refusal: account %q key %q spent %s; want acct, k2, 0.9", e.Account, e.Key, e.Status.Spent)
	}
	// Another account, and a key that is its own account, count apart.
	reserve(t, l, ratelimit.Request{Key: "k3", Account: "other", Tier: tier, Prices: prices}, t0)
	solo := reserve(t, l, ratelimit.Request{Key: "solo", Tier: tier, Prices: prices}, t0)
	if solo.Account != "solo" || solo.Status.Spent != 30*ratelimit.Cent {
		t.Errorf("a key without an account: account %q, spent %s; want solo, 0.3", solo.Account, solo.Status.Spent)
	}
	for _, c := range []struct {
		account string
		spent   ratelimit.Money
	}{{"acct", 90 * ratelimit.Cent}, {"other", 30 * ratelimit.Cent}, {"solo", 30 * ratelimit.Cent}, {"k1", 0}} {
		if u := usage(t, l, c.account, t0); u.Spent != c.spent || u.Held != c.spent {
			t.Errorf("usage of %s: spent %s, held %s; want %s held", c.account, u.Spent, u.Held, c.spent)
		}
	}
	// The cap is reached exactly: 0.1 more passes, then nothing that costs.
	reserve(t, l, ratelimit.Request{Key: "k2", Account: "acct", Tier: tier, Prices: ratelimit.Prices{Request: 10 * ratelimit.Cent}}, t0)
	refused(t, l, ratelimit.Request{Key: "k4", Account: "acct", Tier: tier, Prices: ratelimit.Prices{Request: 1}}, t0,
		ratelimit.ErrSpendCap, ratelimit.LimitSpend)
	if u := usage(t, l, "acct", t0); u.Spent != ratelimit.Dollar {
		t.Errorf("spent %s, want exactly the cap", u.Spent)
	}
}

// testUsage: an account's month counts what its settled requests used and
// cost; reservations hold their cost until they settle; cancelled and
// refused requests count nothing; each month starts from zero.
func testUsage(t *testing.T, l ratelimit.Limiter) {
	ctx := context.Background()
	tier := ratelimit.Tier{Name: "t", Requests: 3}
	prices := ratelimit.Prices{Input: 2 * ratelimit.MicroDollar, CachedInput: ratelimit.MicroDollar, Output: 8 * ratelimit.MicroDollar}
	r := ratelimit.Request{Key: "k", Account: "acct", Tier: tier, InputTokens: 1_000, MaxOutputTokens: 500, Prices: prices}
	if u := usage(t, l, "acct", t0); u != (ratelimit.MonthUsage{Month: "2026-11"}) {
		t.Errorf("usage of a new account = %+v, want zero in 2026-11", u)
	}
	res := reserve(t, l, r, t0)
	held := 1_000*2*ratelimit.MicroDollar + 500*8*ratelimit.MicroDollar
	if u := usage(t, l, "acct", t0); u.Spent != held || u.Held != held || u.Requests != 0 {
		t.Errorf("usage while reserved = %+v, want %s spent and held, no request", u, held)
	}
	used := ratelimit.Usage{Requests: 1, InputTokens: 1_000, CachedInputTokens: 600, OutputTokens: 20}
	if err := l.Settle(ctx, res, used); err != nil {
		t.Fatal(err)
	}
	cost := 400*2*ratelimit.MicroDollar + 600*ratelimit.MicroDollar + 20*8*ratelimit.MicroDollar // 0.00156
	want := ratelimit.MonthUsage{Month: "2026-11", Spent: cost, Requests: 1, InputTokens: 1_000, CachedInputTokens: 600, OutputTokens: 20}
	if u := usage(t, l, "acct", t0.Add(time.Second)); u != want {
		t.Errorf("usage after settling:\n got %+v\nwant %+v", u, want)
	}
	// Settling again changes nothing; nor do a cancelled request and a
	// refused one.
	if err := l.Settle(ctx, res, used); err != nil {
		t.Fatal(err)
	}
	c := reserve(t, l, r, t0)
	if err := l.Cancel(ctx, c); err != nil {
		t.Fatal(err)
	}
	reserve(t, l, ratelimit.Request{Key: "k", Account: "acct", Tier: tier}, t0)
	reserve(t, l, ratelimit.Request{Key: "k", Account: "acct", Tier: tier}, t0)
	refused(t, l, r, t0, ratelimit.ErrRateLimited, ratelimit.LimitRequests)
	if u := usage(t, l, "acct", t0); u != want {
		t.Errorf("usage after a second settle, a cancel and a refusal:\n got %+v\nwant %+v", u, want)
	}
	// A request settled without billing (the engine refused it) is not
	// counted as a request.
	next := ratelimit.NextMonth(t0)
	res = reserve(t, l, r, next)
	if err := l.Settle(ctx, res, ratelimit.Usage{}); err != nil {
		t.Fatal(err)
	}
	if u := usage(t, l, "acct", next); u != (ratelimit.MonthUsage{Month: "2026-12"}) {
		t.Errorf("usage of the next month = %+v, want zero", u)
	}
	if u := usage(t, l, "acct", t0); u != want {
		t.Errorf("usage of the last month changed: %+v", u)
	}
	if _, err := l.Usage(ctx, "", t0); err == nil {
		t.Error("Usage of an empty account succeeded")
	}
}

// testUnlimited: policy.Unlimited admits everything, reports no limit,
// and still counts spend and usage.
func testUnlimited(t *testing.T, l ratelimit.Limiter) {
	ctx := context.Background()
	prices := ratelimit.Prices{Input: ratelimit.MicroDollar, Output: 2 * ratelimit.MicroDollar}
	r := ratelimit.Request{Key: "u", Account: "local", Tier: policy.Unlimited, InputTokens: 1_000_000, MaxOutputTokens: 1_000_000, Prices: prices}
	for i := range 100 {
		res := reserve(t, l, r, t0)
		if i == 0 && res.Status != (ratelimit.Status{Spent: 3 * ratelimit.Dollar}) {
			t.Errorf("status = %+v, want no limit and 3 USD spent", res.Status)
		}
		if err := l.Settle(ctx, res, ratelimit.Usage{Requests: 1, InputTokens: 1_000_000, OutputTokens: 500_000}); err != nil {
			t.Fatal(err)
		}
	}
	want := ratelimit.MonthUsage{Month: "2026-11", Spent: 200 * ratelimit.Dollar, Requests: 100, InputTokens: 100_000_000, OutputTokens: 50_000_000}
	if u := usage(t, l, "local", t0); u != want {
		t.Errorf("usage:\n got %+v\nwant %+v", u, want)
	}
}

// testSaturated: spend and usage near the largest int64 saturate there
// rather than wrap or fail midway, and what a reservation charged is
// what its Cancel or Settle takes back.
func testSaturated(t *testing.T, l ratelimit.Limiter) {
	ctx := context.Background()
	const top = ratelimit.Money(math.MaxInt64)
	big := ratelimit.Request{Key: "k", Account: "acct", Tier: policy.Unlimited, Prices: ratelimit.Prices{Request: top - 10, Output: ratelimit.Dollar}}
	small := ratelimit.Request{Key: "k", Account: "acct", Tier: policy.Unlimited, Prices: ratelimit.Prices{Request: 100}}
	a := reserve(t, l, big, t0)
	if a.Status.Spent != top-10 {
		t.Errorf("spent %d, want %d", a.Status.Spent, top-10)
	}
	b := reserve(t, l, small, t0) // charges the 10 left
	if b.Status.Spent != top {
		t.Errorf("spent %d, want the largest Money", b.Status.Spent)
	}
	if u := usage(t, l, "acct", t0); u.Spent != top || u.Held != top {
		t.Errorf("usage %+v, want the largest Money spent and held", u)
	}
	c := reserve(t, l, small, t0) // charges nothing: nothing is left
	if err := l.Cancel(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := l.Cancel(ctx, b); err != nil {
		t.Fatal(err)
	}
	if u := usage(t, l, "acct", t0); u.Spent != top-10 || u.Held != top-10 {
		t.Errorf("usage after cancelling = %+v, want %d spent and held", u, top-10)
	}
	b = reserve(t, l, small, t0)
	// a costs more than it reserved, past the largest Money: it saturates,
	// b's 10 included; its usage too.
	used := ratelimit.Usage{Requests: 1, InputTokens: math.MaxInt64, OutputTokens: math.MaxInt64}
	if err := l.Settle(ctx, a, used); err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(ctx, b, ratelimit.Usage{Requests: 1, InputTokens: 5, OutputTokens: 5}); err != nil {
		t.Fatal(err)
	}
	want := ratelimit.MonthUsage{Month: "2026-11", Spent: top, Requests: 2, InputTokens: math.MaxInt64, OutputTokens: math.MaxInt64}
	if u := usage(t, l, "acct", t0); u != want {
		t.Errorf("usage after settling:\n got %+v\nwant %+v", u, want)
	}
}

// testConcurrentAccountSpend: keys of one account racing, some settling
// as they go, never pass the account's cap together.
func testConcurrentAccountSpend(t *testing.T, l ratelimit.Limiter) {
	ctx := context.Background()
	tier := ratelimit.Tier{Name: "cap", MaxMonthlySpend: ratelimit.Dollar}
	prices := ratelimit.Prices{Request: 3 * ratelimit.Cent}
	var settled atomic.Int64
	admitted, errs := race(60, func(i int) error {
		res, err := l.Reserve(ctx, ratelimit.Request{Key: fmt.Sprint("key", i%4), Account: "acct", Tier: tier, Prices: prices}, t0)
		if err == nil && i%2 == 0 { // settling at the same cost keeps the spend
			if err = l.Settle(ctx, res, ratelimit.Usage{Requests: 1}); err == nil {
				settled.Add(1)
			}
		}
		return err
	})
	onlyRefusals(t, errs, ratelimit.ErrSpendCap)
	if admitted != 33 { // 100 / 3
		t.Fatalf("four keys of one account admitted %d, want 33", admitted)
	}
	u := usage(t, l, "acct", t0)
	if u.Spent != 99*ratelimit.Cent || u.Requests != settled.Load() || u.Held != ratelimit.Money(33-settled.Load())*3*ratelimit.Cent {
		t.Fatalf("usage %+v; want 0.99 spent, %d requests settled", u, settled.Load())
	}
}

// testConcurrentSettle: a reservation settled by many at once is counted
// once, and a cancel racing them undoes nothing once it has settled.
func testConcurrentSettle(t *testing.T, l ratelimit.Limiter) {
	ctx := context.Background()
	prices := ratelimit.Prices{Input: ratelimit.MicroDollar, Output: 4 * ratelimit.MicroDollar}
	for round := range 5 {
		acct := fmt.Sprint("acct", round)
		res := reserve(t, l, ratelimit.Request{Key: "k", Account: acct, Tier: policy.Default, InputTokens: 100, MaxOutputTokens: 1_000, Prices: prices}, t0)
		used := ratelimit.Usage{Requests: 1, InputTokens: 100, OutputTokens: 10}
		_, errs := race(20, func(i int) error {
			if i == 0 {
				return l.Cancel(ctx, res)
			}
			return l.Settle(ctx, res, used)
		})
		for _, err := range errs {
			t.Fatalf("racing settles: %v", err)
		}
		u := usage(t, l, acct, t0)
		settledOnce := ratelimit.MonthUsage{Month: "2026-11", Spent: prices.Cost(used), Requests: 1, InputTokens: 100, OutputTokens: 10}
		if u != settledOnce && u != (ratelimit.MonthUsage{Month: "2026-11"}) { // cancelled first: nothing
			t.Fatalf("usage after 19 racing settles and a cancel: %+v, want one settle (%+v) or nothing", u, settledOnce)
		}
	}
}

// testQuotaAccountsApart: each account has its own quotas.
func testQuotaAccountsApart(t *testing.T, l ratelimit.Quotas) {
	ctx := context.Background()
	plan := ratelimit.Plan{Name: "one", Reviews: 1, Users: 1}
	for _, acct := range []string{"a", "b"} {
		if _, err := l.UseQuota(ctx, ratelimit.QuotaRequest{Account: acct, Plan: plan, User: "u-" + acct, Reviews: 1}, t0); err != nil {
			t.Fatalf("account %s: %v", acct, err)
		}
	}
	if _, err := l.UseQuota(ctx, ratelimit.QuotaRequest{Account: "a", Plan: plan, User: "u-a", Reviews: 1}, t0); !errors.Is(err, ratelimit.ErrQuotaExhausted) {
		t.Fatalf("a second review of a: %v, want ErrQuotaExhausted", err)
	}
}
