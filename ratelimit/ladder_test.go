package ratelimit_test

import (
	"strings"
	"testing"

	"github.com/inferkit/inferkit/ratelimit"
)

// TestLadder: ForCredits takes the highest tier the credits reach, else
// the first; Lookup matches names and aliases in any case and lists the
// names it knows; the zero Ladder knows nothing and limits nothing.
func TestLadder(t *testing.T) {
	low := ratelimit.Tier{Name: "low", Requests: 1, Credits: 3}
	mid := ratelimit.Tier{Name: "mid", Requests: 2, Credits: 10}
	top := ratelimit.Tier{Name: "top", Requests: 3, Credits: 20}
	free := ratelimit.Tier{Name: "free"}
	l := ratelimit.Ladder{Tiers: []ratelimit.Tier{low, mid, top}, Pinned: []ratelimit.Tier{free}, Aliases: map[string]string{"bottom": "LOW"}}
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		credits ratelimit.Money
		want    ratelimit.Tier
	}{{0, low}, {2, low}, {3, low}, {9, low}, {10, mid}, {19, mid}, {20, top}, {1 << 40, top}} {
		if got := l.ForCredits(tc.credits); got != tc.want {
			t.Errorf("ForCredits(%d) = %s, want %s", tc.credits, got.Name, tc.want.Name)
		}
	}
	for name, want := range map[string]ratelimit.Tier{"low": low, "MID": mid, "Top": top, "free": free, "bottom": low, "BOTTOM": low} {
		if got, err := l.Lookup(name); err != nil || got != want {
			t.Errorf("Lookup(%s) = %+v, %v", name, got, err)
		}
	}
	if _, err := l.Lookup("gold"); err == nil || err.Error() != `ratelimit: unknown tier "gold" (want low, mid, top or free)` {
		t.Errorf("Lookup(gold): %v", err)
	}
	var zero ratelimit.Ladder
	if !zero.IsZero() || zero.ForCredits(1<<40) != (ratelimit.Tier{}) || l.IsZero() {
		t.Error("IsZero or the zero Ladder's ForCredits")
	}
	if _, err := zero.Lookup("low"); err == nil {
		t.Error("the zero Ladder knows a name")
	}
}

// TestLadderValidate: each flaw is refused with its field named.
func TestLadderValidate(t *testing.T) {
	a, b := ratelimit.Tier{Name: "a", Credits: 1}, ratelimit.Tier{Name: "b", Credits: 2}
	for _, tc := range []struct {
		l    ratelimit.Ladder
		want string
	}{
		{ratelimit.Ladder{}, "Ladder.Tiers is empty"},
		{ratelimit.Ladder{Tiers: []ratelimit.Tier{b, a}}, "Ladder.Tiers[1].Credits"},
		{ratelimit.Ladder{Tiers: []ratelimit.Tier{a, a}}, "Ladder.Tiers[1].Name"},
		{ratelimit.Ladder{Tiers: []ratelimit.Tier{a}, Pinned: []ratelimit.Tier{{Name: "A"}}}, "Ladder.Pinned[0].Name"},
		{ratelimit.Ladder{Tiers: []ratelimit.Tier{a, {Credits: 3}}}, "Ladder.Tiers[1].Name is empty"},
		{ratelimit.Ladder{Tiers: []ratelimit.Tier{{Name: "a", Requests: -1}}}, "Ladder.Tiers[0] (a)"},
		{ratelimit.Ladder{Tiers: []ratelimit.Tier{a}, Aliases: map[string]string{"x": "c"}}, `Ladder.Aliases["x"]`},
	} {
		if err := tc.l.Validate(); err == nil || !strings.HasPrefix(err.Error(), "ratelimit: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.l, err, tc.want)
		}
	}
}

// TestPlans: Base is the first plan, Lookup matches any case and lists
// the names it knows, Validate names the field.
func TestPlans(t *testing.T) {
	ps := ratelimit.Plans{{Name: "basic", Reviews: 1}, {Name: "plus", Reviews: 5}}
	if err := ps.Validate(); err != nil {
		t.Fatal(err)
	}
	if ps.Base().Name != "basic" || (ratelimit.Plans{}).Base().Name != "" {
		t.Error("Base")
	}
	if p, err := ps.Lookup("PLUS"); err != nil || p.Reviews != 5 {
		t.Errorf("Lookup(PLUS) = %+v, %v", p, err)
	}
	if _, err := ps.Lookup("gold"); err == nil || err.Error() != `ratelimit: unknown plan "gold" (want basic or plus)` {
		t.Errorf("Lookup(gold): %v", err)
	}
	for _, tc := range []struct {
		ps   ratelimit.Plans
		want string
	}{
		{nil, "Plans is empty"},
		{ratelimit.Plans{{}}, "Plans[0].Name is empty"},
		{ratelimit.Plans{{Name: "a"}, {Name: "A"}}, "Plans[1].Name"},
		{ratelimit.Plans{{Name: "a", Trial: -1}}, "Plans[0] (a)"},
	} {
		if err := tc.ps.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.ps, err, tc.want)
		}
	}
}
