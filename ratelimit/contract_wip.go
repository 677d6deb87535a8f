package ratelimit

import (
	"context"
	"time"
)

// TODO(C): merge into tier.go / limiter.go and implement.

// Quotas counts code-review plan quotas; Memory and redislimit
// implement it.
type Quotas interface {
	UseQuota(ctx context.Context, q QuotaRequest, now time.Time) (QuotaStatus, error)
}

// MonthUsage is what an account used in a calendar month (UTC).
type MonthUsage struct {
	Month                                                  string
	Spent                                                  Money
	Requests, InputTokens, CachedInputTokens, OutputTokens int64
}

// Ledger keeps a Memory limiter's monthly counters durably.
type Ledger interface {
	// Load returns the counters of a month by name; absent ones are 0.
	Load(ctx context.Context, month string) (map[string]int64, error)
	// Add adds deltas to counters of a month, atomically and durably,
	// before it returns.
	Add(ctx context.Context, month string, deltas map[string]int64) error
}
