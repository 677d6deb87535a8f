// Package ratelimit admits requests under per-key limits and accounts for
// what they cost: a request's Tier (requests, input tokens and output
// tokens per minute per key, and a maximum monthly spend per account),
// each account's monthly usage, and a code-review Plan's monthly quotas.
// It is pure Go, and holds no product's tiers or plans: a request
// brings its Tier, a quota request its Plan, and a product's tables are a
// Ladder and a Plans, such as the hosted Inference API's in package
// policy (which imports this one, never the reverse).
//
// # Windows
//
// Each limit counts over a sliding window of one minute: a request
// admitted at t counts until t+Window, so no minute, wherever it starts,
// ever holds more than a limit (a fixed window would allow twice a limit
// across its edge, a token bucket a burst and a refill). Reserve admits a
// request and holds one request, its input tokens and its maximum output
// tokens (capped at the tier's output limit, so that a large max_tokens
// can still run on an idle key); Settle replaces the reservation by the
// real counts, which stay in the window at the admission time; Cancel
// removes it. A dimension a request does not use never refuses it: a
// request without output tokens passes an exhausted output limit. The
// status a reservation or refusal carries (limit, remaining, time until
// whole again) feeds the x-ratelimit-* headers.
//
// Everything a request uses counts at its admission time, however long it
// runs: a generation that outlasts the minute counts its output in the
// minute it was admitted, and none after. The per-minute limits bound how
// much work a key may start in a minute; the monthly spend cap, which
// charges every token, bounds what it may use in all.
//
// # Spend
//
// Money is exact: int64 nano-dollars (catalog prices are decimal strings
// per token, parsed by ParseMoney), never floats. Prices.Cost prices a
// Usage (input, cached input, output, per request, per image). Spend is
// kept per account (Request.Account: the keys of one account share it; a
// key without one is its own account) per calendar month in UTC: a
// reservation charges the cost of its input and of every requested output
// token at admission, Settle replaces it by the real cost, once, in the
// month of admission. A request that would take its account's month past
// its tier's MaxMonthlySpend is refused with ErrSpendCap until the month
// turns (NextMonth); requests that cost nothing (the model catalog) still
// pass. A tier without limits (policy.Unlimited) has no cap either: it
// admits everything and still counts spend and usage.
//
// Prepaid credit is not this package's: package account's prepaid
// billing (account.Accounts.Limiter) wraps a Limiter, holds each
// admitted reservation's Cost from its account's balance and draws the
// settled cost, refusing with ErrNoCredit what the balance cannot pay.
//
// # Usage
//
// Settle also counts, per account and month, the requests, input tokens,
// cached input tokens and output tokens used; Limiter.Usage returns them
// with the month's spend as a MonthUsage, for consoles and billing.
//
// # Quotas
//
// Quotas.UseQuota takes reviews and summaries from an account's Plan for
// the month and counts its distinct users in the month; an exhausted
// quota is refused with ErrQuotaExhausted and its Error says which. Zero
// quotas are unlimited (policy.Enterprise).
//
// # Implementations
//
// Limiter and Quotas are the interfaces a backend implements: Memory
// (NewMemory) is exact within one process; NewDurableMemory writes its
// monthly counters (spend, usage, quotas) through to a Ledger, such as an
// account store, so that they survive a restart while the windows stay in
// memory; package redislimit keeps the same counts in Redis, one Lua
// script per operation, so that several replicas share them exactly.
// Package ratelimittest is the suite they pass (Run, RunQuotas). Every
// call takes the time it happens at, which tests set freely.
//
// # Decisions and other request kinds
//
// A request that generates nothing, such as a decision evaluation,
// reserves its input tokens with MaxOutputTokens 0 and settles with the
// input it used; a request that reads a catalog reserves an empty Request
// (one request, nothing else) and settles with a zero Usage.
package ratelimit
