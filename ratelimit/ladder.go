package ratelimit

import (
	"errors"
	"fmt"
	"strings"
)

// Ladder is a product's tiers: those that purchases unlock, in ascending
// Credits, and those an operator may only pin. It is data, so that each
// product brings its own; package policy holds the hosted Inference
// API's. The zero Ladder has no tiers: ForCredits returns the zero Tier,
// which limits nothing, and Lookup knows no name. A Ladder is a value
// that its methods only read: safe for concurrent use while nobody
// changes its slices or map.
type Ladder struct {
	// Tiers are the tiers that purchases unlock, in strictly ascending
	// Credits. The first is also the tier of an account whose purchases
	// reach no tier's Credits, none included.
	Tiers []Tier
	// Pinned are further tiers that no purchase unlocks and an operator
	// may pin by name, such as one without limits for local apps.
	Pinned []Tier
	// Aliases maps further names, matched in any case, to the Name of a
	// tier of Tiers or Pinned, such as "tier1" to "default".
	Aliases map[string]string
}

// ForCredits returns the highest of l.Tiers whose Credits cumulative
// purchases of m reach, else the first; the zero Tier when l.Tiers is
// empty.
func (l Ladder) ForCredits(m Money) Tier {
	if len(l.Tiers) == 0 {
		return Tier{}
	}
	t := l.Tiers[0]
	for _, u := range l.Tiers[1:] {
		if m >= u.Credits {
			t = u
		}
	}
	return t
}

// Lookup returns the tier of Tiers or Pinned of a name or alias, in any
// case, or an error that lists the names it knows.
func (l Ladder) Lookup(name string) (Tier, error) {
	want := name
	for k, v := range l.Aliases {
		if strings.EqualFold(k, name) {
			want = v
			break
		}
	}
	for _, set := range [][]Tier{l.Tiers, l.Pinned} {
		for _, t := range set {
			if strings.EqualFold(t.Name, want) {
				return t, nil
			}
		}
	}
	names := make([]string, 0, len(l.Tiers)+len(l.Pinned))
	for _, set := range [][]Tier{l.Tiers, l.Pinned} {
		for _, t := range set {
			names = append(names, t.Name)
		}
	}
	return Tier{}, fmt.Errorf("ratelimit: unknown tier %q (want %s)", name, oneOf(names))
}

// IsZero reports whether l has no tiers at all, so that a Config may
// take its zero value for a default ladder.
func (l Ladder) IsZero() bool { return len(l.Tiers) == 0 && len(l.Pinned) == 0 }

// Validate reports whether l is a ladder: at least one tier in Tiers;
// every tier named, no name twice in any case, no limit or Credits
// below 0; Tiers in strictly ascending Credits; every alias naming a
// tier. The error names the field.
func (l Ladder) Validate() error {
	if len(l.Tiers) == 0 {
		return errors.New("ratelimit: Ladder.Tiers is empty")
	}
	seen := make(map[string]bool)
	for _, set := range []struct {
		field string
		tiers []Tier
	}{{"Tiers", l.Tiers}, {"Pinned", l.Pinned}} {
		for i, t := range set.tiers {
			field := fmt.Sprintf("Ladder.%s[%d]", set.field, i)
			switch key := strings.ToLower(t.Name); {
			case t.Name == "":
				return fmt.Errorf("ratelimit: %s.Name is empty", field)
			case seen[key]:
				return fmt.Errorf("ratelimit: %s.Name %q is taken by another tier", field, t.Name)
			case t.Requests < 0 || t.InputTokens < 0 || t.OutputTokens < 0 || t.MaxMonthlySpend < 0 || t.Credits < 0:
				return fmt.Errorf("ratelimit: %s (%s) has a limit or Credits below 0", field, t.Name)
			case set.field == "Tiers" && i > 0 && t.Credits <= l.Tiers[i-1].Credits:
				return fmt.Errorf("ratelimit: %s.Credits is %s, not above the tier before's %s", field, t.Credits, l.Tiers[i-1].Credits)
			default:
				seen[key] = true
			}
		}
	}
	for k, v := range l.Aliases {
		if !seen[strings.ToLower(v)] {
			return fmt.Errorf("ratelimit: Ladder.Aliases[%q] is %q, which names no tier", k, v)
		}
	}
	return nil
}

// Plans is a product's code-review plans; package policy holds the
// hosted Inference API's. The first is the plan of an account on none,
// or whose trial ended (a free plan). The zero Plans has no plan: Base
// returns the zero Plan, which limits nothing. Its methods only read it.
type Plans []Plan

// Base returns the first plan, or the zero Plan when there is none.
func (ps Plans) Base() Plan {
	if len(ps) == 0 {
		return Plan{}
	}
	return ps[0]
}

// Lookup returns the plan of a name, in any case, or an error that lists
// the names it knows.
func (ps Plans) Lookup(name string) (Plan, error) {
	names := make([]string, len(ps))
	for i, p := range ps {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
		names[i] = p.Name
	}
	return Plan{}, fmt.Errorf("ratelimit: unknown plan %q (want %s)", name, oneOf(names))
}

// Validate reports whether ps are plans: at least one, each named, no
// name twice in any case, no quota, price or trial below 0. The error
// names the field.
func (ps Plans) Validate() error {
	if len(ps) == 0 {
		return errors.New("ratelimit: Plans is empty")
	}
	seen := make(map[string]bool)
	for i, p := range ps {
		switch key := strings.ToLower(p.Name); {
		case p.Name == "":
			return fmt.Errorf("ratelimit: Plans[%d].Name is empty", i)
		case seen[key]:
			return fmt.Errorf("ratelimit: Plans[%d].Name %q is taken by another plan", i, p.Name)
		case p.Reviews < 0 || p.Summaries < 0 || p.Users < 0 || p.Price < 0 || p.Trial < 0:
			return fmt.Errorf("ratelimit: Plans[%d] (%s) has a quota, Price or Trial below 0", i, p.Name)
		default:
			seen[key] = true
		}
	}
	return nil
}

// oneOf lists names as "a, b or c".
func oneOf(names []string) string {
	switch len(names) {
	case 0:
		return "none: the list is empty"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
