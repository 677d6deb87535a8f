package policy

import "github.com/inferkit/inferkit/ratelimit"

// The spec's tiers ("Rate limits"). They are values: copy one to change
// it.
var (
	// Default is the tier of a new account: 20 requests, 30,000 input
	// tokens and 8,000 output tokens per minute, 100 USD a month. The
	// spec unlocks it with 5 USD and shows nothing below, so an account
	// that has bought less is on Default too.
	Default = ratelimit.Tier{Name: "default", Requests: 20, InputTokens: 30_000, OutputTokens: 8_000, MaxMonthlySpend: 100 * ratelimit.Dollar, Credits: 5 * ratelimit.Dollar}
	// Tier2 is 10 times Default's rates, 500 USD a month, unlocked by 40
	// USD of credits.
	Tier2 = ratelimit.Tier{Name: "tier2", Requests: 200, InputTokens: 300_000, OutputTokens: 80_000, MaxMonthlySpend: 500 * ratelimit.Dollar, Credits: 40 * ratelimit.Dollar}
	// Tier3 is 20 times Default's rates, 1,000 USD a month, unlocked by
	// 200 USD of credits.
	Tier3 = ratelimit.Tier{Name: "tier3", Requests: 400, InputTokens: 600_000, OutputTokens: 160_000, MaxMonthlySpend: 1_000 * ratelimit.Dollar, Credits: 200 * ratelimit.Dollar}
	// Unlimited limits nothing: the tier an operator pins for local apps
	// and internal services. No purchase unlocks it; the spec has no
	// such tier.
	Unlimited = ratelimit.Tier{Name: "unlimited"}
)

// Tiers returns the spec's ladder, new at each call: Default, Tier2 and
// Tier3 by credits, Unlimited for operators to pin, and "tier1" as
// another name of Default. Its Lookup knows "default", "tier1",
// "tier2", "tier3" and "unlimited" in any case; its ForCredits gives
// Tier3 from 200 USD, Tier2 from 40 USD, else Default.
func Tiers() ratelimit.Ladder {
	return ratelimit.Ladder{
		Tiers:   []ratelimit.Tier{Default, Tier2, Tier3},
		Pinned:  []ratelimit.Tier{Unlimited},
		Aliases: map[string]string{"tier1": Default.Name},
	}
}
