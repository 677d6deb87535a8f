package policy_test

import (
	"testing"
	"time"

	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// TestTiers: the spec's ladder, as ratelimit.TierForCredits and
// LookupTier chose before it was data: Tier3 from 200 USD, Tier2 from
// 40 USD, else Default; the names in any case, "tier1" as Default, and
// the same refusal.
func TestTiers(t *testing.T) {
	l := policy.Tiers()
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		credits ratelimit.Money
		want    ratelimit.Tier
	}{
		{0, policy.Default}, {4 * ratelimit.Dollar, policy.Default}, {5 * ratelimit.Dollar, policy.Default},
		{40*ratelimit.Dollar - 1, policy.Default}, {40 * ratelimit.Dollar, policy.Tier2},
		{200*ratelimit.Dollar - 1, policy.Tier2}, {200 * ratelimit.Dollar, policy.Tier3}, {1 << 60, policy.Tier3},
	} {
		if got := l.ForCredits(tc.credits); got != tc.want {
			t.Errorf("ForCredits(%s) = %s, want %s", tc.credits, got.Name, tc.want.Name)
		}
	}
	for name, want := range map[string]ratelimit.Tier{"default": policy.Default, "TIER1": policy.Default, "tier2": policy.Tier2,
		"Tier3": policy.Tier3, "unlimited": policy.Unlimited} {
		if got, err := l.Lookup(name); err != nil || got != want {
			t.Errorf("Lookup(%s) = %+v, %v", name, got, err)
		}
	}
	if _, err := l.Lookup("tier4"); err == nil || err.Error() != `ratelimit: unknown tier "tier4" (want default, tier2, tier3 or unlimited)` {
		t.Errorf("Lookup(tier4): %v", err)
	}
	// The spec's table.
	if d := policy.Default; d.Requests != 20 || d.InputTokens != 30_000 || d.OutputTokens != 8_000 || d.MaxMonthlySpend != 100*ratelimit.Dollar {
		t.Errorf("Default = %+v", d)
	}
	if policy.Tier2.Requests != 10*policy.Default.Requests || policy.Tier3.Requests != 20*policy.Default.Requests {
		t.Error("Tier2 and Tier3 are not 10 and 20 times Default's requests")
	}
	// Each call is a new ladder.
	l.Tiers[0].Requests, l.Aliases["tier1"] = 1, "tier3"
	if m := policy.Tiers(); m.Tiers[0] != policy.Default || m.Aliases["tier1"] != "default" {
		t.Error("changing one ladder changed the next")
	}
}

// TestPlans: the spec's plans, as ratelimit.LookupPlan found them before
// they were data.
func TestPlans(t *testing.T) {
	ps := policy.Plans()
	if err := ps.Validate(); err != nil {
		t.Fatal(err)
	}
	if ps.Base().Name != policy.Free.Name {
		t.Errorf("base plan %s", ps.Base().Name)
	}
	for _, name := range []string{"free", "Team", "GROWTH", "enterprise"} {
		if _, err := ps.Lookup(name); err != nil {
			t.Error(err)
		}
	}
	if _, err := ps.Lookup("gold"); err == nil || err.Error() != `ratelimit: unknown plan "gold" (want free, team, growth or enterprise)` {
		t.Errorf("Lookup(gold): %v", err)
	}
	if policy.Team.Trial != 14*24*time.Hour || policy.Growth.Trial != policy.TrialLength || policy.Free.Trial != 0 || policy.Enterprise.Trial != 0 {
		t.Error("trials")
	}
	if !policy.Growth.Has(policy.FeatureAnalytics) || policy.Growth.Has(policy.FeatureSSO) || !policy.Enterprise.Has(policy.FeatureSSO) || policy.Free.Has(policy.FeatureSecurityScan) {
		t.Error("features")
	}
	ps[1].Features[0] = "x"
	if policy.Team.Features[0] != policy.FeatureSecurityScan {
		t.Error("changing Plans() changed Team")
	}
}
