package ratelimit

import (
	"context"
	"time"
)

// TODO(C): merge into tier.go / limiter.go and implement.

// Unlimited is the tier that limits nothing, which the operator gives to
// local apps and internal services.
var Unlimited = Tier{Name: "unlimited"}

// TierForCredits returns the highest of the spec's tiers whose Credits
// purchases of m reach: Default below 40 USD (also below 5 USD, where the
// spec shows no tier), Tier2 from 40 USD, Tier3 from 200 USD.
func TierForCredits(m Money) Tier { panic("TODO") }

// Feature is a code-review capability that plans gate.
type Feature string

// Features of the spec's plans.
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

// Has reports whether the plan has a feature.
func (p Plan) Has(f Feature) bool { panic("TODO") }

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
