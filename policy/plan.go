package policy

import (
	"slices"
	"time"

	"github.com/inferkit/inferkit/ratelimit"
)

// TrialLength is the spec's free trial of the paid plans that have one
// (Team, Growth): 14 days.
const TrialLength = 14 * 24 * time.Hour

// The features of the spec's plans ("Code-review plan quotas", column
// "Other"); support levels are not features.
const (
	FeatureSecurityScan        ratelimit.Feature = "security_scan"
	FeatureReleaseNotes        ratelimit.Feature = "release_notes"
	FeatureAnalytics           ratelimit.Feature = "analytics"
	FeatureCustomRulesets      ratelimit.Feature = "custom_rulesets"
	FeatureMemories            ratelimit.Feature = "memories"
	FeatureDocumentation       ratelimit.Feature = "documentation"
	FeatureFineTuning          ratelimit.Feature = "fine_tuning"
	FeatureContextIntegrations ratelimit.Feature = "context_integrations"
	FeatureSSO                 ratelimit.Feature = "sso"
	FeatureSelfHosting         ratelimit.Feature = "self_hosting"
	FeatureBringYourOwnModel   ratelimit.Feature = "bring_your_own_model"
	FeatureLLMObservability    ratelimit.Feature = "llm_observability"
)

// The spec's code-review plans. They are values: copy one to change it,
// and clone its Features before appending to them.
var (
	// Free: 25 reviews, 50 summaries, 1 user, no paid feature. It is the
	// plan of an account on none.
	Free = ratelimit.Plan{Name: "free", Reviews: 25, Summaries: 50, Users: 1}
	// Team: 49 USD a month, a TrialLength trial; 250 reviews, 500
	// summaries, 10 users; security scan and release notes.
	Team = ratelimit.Plan{Name: "team", Reviews: 250, Summaries: 500, Users: 10, Price: 49 * ratelimit.Dollar, Trial: TrialLength,
		Features: []ratelimit.Feature{FeatureSecurityScan, FeatureReleaseNotes}}
	// Growth: 199 USD a month, a TrialLength trial; 2,000 reviews, 4,000
	// summaries, 50 users; Team's features and analytics, custom
	// rulesets, memories, documentation, fine-tuning and context
	// integrations (no SSO).
	Growth = ratelimit.Plan{Name: "growth", Reviews: 2_000, Summaries: 4_000, Users: 50, Price: 199 * ratelimit.Dollar, Trial: TrialLength,
		Features: []ratelimit.Feature{FeatureSecurityScan, FeatureReleaseNotes, FeatureAnalytics, FeatureCustomRulesets,
			FeatureMemories, FeatureDocumentation, FeatureFineTuning, FeatureContextIntegrations}}
	// Enterprise: custom price (0 here), unlimited (zero quotas), every
	// feature, SSO and self-hosting.
	Enterprise = ratelimit.Plan{Name: "enterprise", Features: []ratelimit.Feature{FeatureSecurityScan, FeatureReleaseNotes, FeatureAnalytics,
		FeatureCustomRulesets, FeatureMemories, FeatureDocumentation, FeatureFineTuning, FeatureContextIntegrations,
		FeatureSSO, FeatureSelfHosting, FeatureBringYourOwnModel, FeatureLLMObservability}}
)

// Plans returns the spec's plans, new at each call (Features cloned):
// Free (the base plan), Team, Growth and Enterprise. Its Lookup knows
// their names in any case.
func Plans() ratelimit.Plans {
	ps := ratelimit.Plans{Free, Team, Growth, Enterprise}
	for i := range ps {
		ps[i].Features = slices.Clone(ps[i].Features)
	}
	return ps
}
