package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// A request reserves its prompt and its maximum output, then settles with
// what it used; past a limit, the Error says when to retry.
func Example() {
	ctx := context.Background()
	l := ratelimit.NewMemory()
	now := time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)
	input, _ := ratelimit.ParseMoney("0.0000005") // 0.50 USD per 1M tokens
	output, _ := ratelimit.ParseMoney("0.000002")
	req := ratelimit.Request{
		Key: "key_1", Tier: policy.Default, InputTokens: 1_200, MaxOutputTokens: 4_000,
		Prices: ratelimit.Prices{Input: input, CachedInput: input, Output: output},
	}

	res, err := l.Reserve(ctx, req, now)
	if err != nil {
		panic(err)
	}
	fmt.Println("reserved", res.Cost, "USD; output tokens left", res.Status.OutputTokens.Remaining)
	_ = l.Settle(ctx, res, ratelimit.Usage{Requests: 1, InputTokens: 1_200, OutputTokens: 150})

	res, _ = l.Reserve(ctx, req, now.Add(time.Second))
	fmt.Println("after settling, output tokens left", res.Status.OutputTokens.Remaining)

	_, err = l.Reserve(ctx, req, now.Add(2*time.Second))
	var e *ratelimit.Error
	if errors.As(err, &e) && errors.Is(err, ratelimit.ErrRateLimited) {
		fmt.Println("refused on", e.Limit, "retry after", e.RetryAfter)
	}
	// Output:
	// reserved 0.0086 USD; output tokens left 4000
	// after settling, output tokens left 3850
	// refused on output_tokens retry after 58s
}

// Plan quotas: the Free plan's 25 reviews a month.
func ExampleMemory_UseQuota() {
	ctx := context.Background()
	l := ratelimit.NewMemory()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	q := ratelimit.QuotaRequest{Account: "acme", Plan: policy.Free, User: "ann", Reviews: 1}
	for range 25 {
		if _, err := l.UseQuota(ctx, q, now); err != nil {
			panic(err)
		}
	}
	_, err := l.UseQuota(ctx, q, now)
	fmt.Println(err)
	st, _ := l.UseQuota(ctx, q, ratelimit.NextMonth(now))
	fmt.Println("next month:", st.Reviews.Remaining, "reviews left")
	// Output:
	// ratelimit: acme has used its 25 reviews of the month; the quota renews in 12h0m0s
	// next month: 24 reviews left
}

// The keys of one account share its month: Usage sums what their settled
// requests used and cost.
func ExampleMemory_Usage() {
	ctx := context.Background()
	l := ratelimit.NewMemory()
	now := time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)
	prices := ratelimit.Prices{Input: 500, CachedInput: 250, Output: 2_000} // nano-dollars per token
	for _, key := range []string{"key_1", "key_2"} {
		req := ratelimit.Request{Key: key, Account: "acme", Tier: policy.Default, InputTokens: 1_000, MaxOutputTokens: 500, Prices: prices}
		res, err := l.Reserve(ctx, req, now)
		if err != nil {
			panic(err)
		}
		if err := l.Settle(ctx, res, ratelimit.Usage{Requests: 1, InputTokens: 1_000, CachedInputTokens: 400, OutputTokens: 100}); err != nil {
			panic(err)
		}
	}
	u, _ := l.Usage(ctx, "acme", now)
	fmt.Printf("%s: %d requests, %d input tokens (%d cached), %d output tokens, %s USD\n",
		u.Month, u.Requests, u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.Spent)
	// Output:
	// 2026-11: 2 requests, 2000 input tokens (800 cached), 200 output tokens, 0.0012 USD
}
