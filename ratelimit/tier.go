package ratelimit

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Window is the span of every rate limit: one minute.
const Window = time.Minute

// Tier is the set of limits a key is on. A zero limit is no limit, so the
// zero Tier limits nothing.
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

// The spec's tiers. They are values: copy one to change it.
var (
	// Default is the tier of a new key: 20 requests, 30,000 input tokens
	// and 8,000 output tokens per minute, 100 USD a month.
	Default = Tier{Name: "default", Requests: 20, InputTokens: 30_000, OutputTokens: 8_000, MaxMonthlySpend: 100 * Dollar, Credits: 5 * Dollar}
	// Tier2 is 10 times Default's rates, 500 USD a month, unlocked by 40
	// USD of credits.
	Tier2 = Tier{Name: "tier2", Requests: 200, InputTokens: 300_000, OutputTokens: 80_000, MaxMonthlySpend: 500 * Dollar, Credits: 40 * Dollar}
	// Tier3 is 20 times Default's rates, 1,000 USD a month, unlocked by
	// 200 USD of credits.
	Tier3 = Tier{Name: "tier3", Requests: 400, InputTokens: 600_000, OutputTokens: 160_000, MaxMonthlySpend: 1_000 * Dollar, Credits: 200 * Dollar}
	// Unlimited limits nothing: the tier an operator gives to local apps
	// and internal services. No purchase unlocks it.
	Unlimited = Tier{Name: "unlimited"}
)

// TierForCredits returns the highest of the spec's tiers whose Credits
// cumulative purchases of m reach: Tier3 from 200 USD, Tier2 from 40 USD,
// else Default (which the spec unlocks with 5 USD and shows nothing
// below: an account that has bought less is on Default too).
func TierForCredits(m Money) Tier {
	switch {
	case m >= Tier3.Credits:
		return Tier3
	case m >= Tier2.Credits:
		return Tier2
	}
	return Default
}

// LookupTier returns the tier of a name: the spec's "default", "tier2"
// or "tier3", or "unlimited", in any case ("tier1" is Default).
func LookupTier(name string) (Tier, error) {
	switch strings.ToLower(name) {
	case "default", "tier1":
		return Default, nil
	case "tier2":
		return Tier2, nil
	case "tier3":
		return Tier3, nil
	case "unlimited":
		return Unlimited, nil
	}
	return Tier{}, fmt.Errorf("ratelimit: unknown tier %q (want default, tier2, tier3 or unlimited)", name)
}

// Plan is a code-review plan: how many reviews and summaries an account
// may run per calendar month (UTC), and how many distinct users may use
// it in a month. A zero quota is no limit, so Enterprise is all zeros.
type Plan struct {
	// Name identifies the plan, such as "free" or "team".
	Name string
	// Reviews is the number of reviews per month.
	Reviews int64
	// Summaries is the number of summaries per month.
	Summaries int64
	// Users is the number of distinct users per month.
	Users int64
	// Price is the monthly price; 0 for Free and for Enterprise (custom).
	Price Money
	// Trial is the length of the plan's free trial; 0 for none.
	Trial time.Duration
	// Features are the capabilities the plan includes.
	Features []Feature
}

// The spec's code-review plans. They are values: copy one to change it.
var (
	// Free: 25 reviews, 50 summaries, 1 user, no paid feature.
	Free = Plan{Name: "free", Reviews: 25, Summaries: 50, Users: 1}
	// Team: 49 USD a month, 14-day trial; 250 reviews, 500 summaries, 10
	// users; security scan and release notes.
	Team = Plan{Name: "team", Reviews: 250, Summaries: 500, Users: 10, Price: 49 * Dollar, Trial: 14 * 24 * time.Hour,
		Features: []Feature{FeatureSecurityScan, FeatureReleaseNotes}}
	// Growth: 199 USD a month, 14-day trial; 2,000 reviews, 4,000
	// summaries, 50 users; Team's features and analytics, custom
	// rulesets, memories, documentation, fine-tuning and context
	// integrations (no SSO).
	Growth = Plan{Name: "growth", Reviews: 2_000, Summaries: 4_000, Users: 50, Price: 199 * Dollar, Trial: 14 * 24 * time.Hour,
		Features: []Feature{FeatureSecurityScan, FeatureReleaseNotes, FeatureAnalytics, FeatureCustomRulesets,
			FeatureMemories, FeatureDocumentation, FeatureFineTuning, FeatureContextIntegrations}}
	// Enterprise: custom price, unlimited, every feature, SSO and
	// self-hosting.
	Enterprise = Plan{Name: "enterprise", Features: []Feature{FeatureSecurityScan, FeatureReleaseNotes, FeatureAnalytics,
		FeatureCustomRulesets, FeatureMemories, FeatureDocumentation, FeatureFineTuning, FeatureContextIntegrations,
		FeatureSSO, FeatureSelfHosting, FeatureBringYourOwnModel, FeatureLLMObservability}}
)

// Feature is a code-review capability that plans gate.
type Feature string

// The features of the spec's plans.
const (
	FeatureSecurityScan        Feature = "security_scan"
	FeatureReleaseNotes        Feature = "release_notes"
	FeatureAnalytics           Feature = "analytics"
	FeatureCustomRulesets      Feature = "custom_rulesets"
	FeatureMemories            Feature = "memories"
	FeatureDocumentation       Feature = "documentation"
	FeatureFineTuning          Feature = "fine_tuning"
	FeatureContextIntegrations Feature = "context_integrations"
	FeatureSSO                 Feature = "sso"
	FeatureSelfHosting         Feature = "self_hosting"
	FeatureBringYourOwnModel   Feature = "bring_your_own_model"
	FeatureLLMObservability    Feature = "llm_observability"
)

// Has reports whether the plan includes a feature.
func (p Plan) Has(f Feature) bool { return slices.Contains(p.Features, f) }

// LookupPlan returns the spec's plan of a name: "free", "team", "growth"
// or "enterprise", in any case.
func LookupPlan(name string) (Plan, error) {
	switch strings.ToLower(name) {
	case "free":
		return Free, nil
	case "team":
		return Team, nil
	case "growth":
		return Growth, nil
	case "enterprise":
		return Enterprise, nil
	}
	return Plan{}, fmt.Errorf("ratelimit: unknown plan %q (want free, team, growth or enterprise)", name)
}
