package ratelimit

import (
	"slices"
	"time"
)

// Window is the span of every rate limit: one minute.
const Window = time.Minute

// Tier is the set of limits a key is on. A zero limit is no limit, so the
// zero Tier limits nothing. A product's tiers, such as the hosted
// Inference API's in package policy, form a Ladder.
type Tier struct {
	// Name identifies the tier, such as "default", "tier2" or "tier3".
	Name string
	// Requests is the number of requests per Window.
	Requests int64
	// InputTokens is the number of prompt tokens per Window.
	InputTokens int64
	// OutputTokens is the number of generated tokens per Window.
	OutputTokens int64
	// MaxMonthlySpend caps what a key spends in a calendar month (UTC).
	MaxMonthlySpend Money
	// Credits is the cumulative purchase that unlocks the tier.
	Credits Money
}

// Plan is a code-review plan: how many reviews and summaries an account
// may run per calendar month (UTC), and how many distinct users may use
// it in a month. A zero quota is no limit, so the zero Plan limits
// nothing. A product's plans, such as the hosted Inference API's in
// package policy, are a Plans.
type Plan struct {
	// Name identifies the plan, such as "free" or "team".
	Name string
	// Reviews is the number of reviews per month.
	Reviews int64
	// Summaries is the number of summaries per month.
	Summaries int64
	// Users is the number of distinct users per month.
	Users int64
	// Price is the monthly price; 0 for a free plan or a custom price.
	Price Money
	// Trial is the length of the plan's free trial; 0 for none.
	Trial time.Duration
	// Features are the capabilities the plan includes.
	Features []Feature
}

// Feature is a code-review capability that plans gate, such as
// "security_scan".
type Feature string

// Has reports whether the plan includes a feature.
func (p Plan) Has(f Feature) bool { return slices.Contains(p.Features, f) }
