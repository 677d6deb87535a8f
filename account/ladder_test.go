package account_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/ratelimit"
)

// TestOwnLadder: an embedding program's own two tiers and plans, not the
// hosted product's, choose an account's tier by its credits, name the
// tiers SetTier pins, and drive the limiter through the tier that
// Authenticate returns.
func TestOwnLadder(t *testing.T) {
	ctx := t.Context()
	hobby := ratelimit.Tier{Name: "hobby", Requests: 2}
	pro := ratelimit.Tier{Name: "pro", Requests: 3, Credits: 10 * ratelimit.Dollar}
	basic := ratelimit.Plan{Name: "basic", Reviews: 1}
	plus := ratelimit.Plan{Name: "plus", Reviews: 5, Trial: time.Hour}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	a, err := account.New(ctx, account.Config{
		Store:              account.NewMemory(),
		PasswordIterations: 1_000,
		Now:                func() time.Time { return now },
		Tiers:              ratelimit.Ladder{Tiers: []ratelimit.Tier{hobby, pro}},
		Plans:              ratelimit.Plans{basic, plus},
	})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := a.CreateAccount(ctx, account.NewAccount{Name: "Embedder"})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := a.CreateKey(ctx, acct.ID, "k")
	if err != nil {
		t.Fatal(err)
	}

	// reserve makes one more request than the key's tier admits, and
	// returns the error of the last.
	reserve := func(tier ratelimit.Tier) (admitted int, err error) {
		l := ratelimit.NewMemory()
		for i := range tier.Requests + 1 {
			if _, err := l.Reserve(ctx, ratelimit.Request{Key: "k", Account: acct.ID, Tier: tier}, now); err != nil {
				return int(i), err
			}
		}
		return int(tier.Requests) + 1, nil
	}

	for _, step := range []struct {
		name  string
		buy   ratelimit.Money
		tier  ratelimit.Tier
		admit int
	}{
		{"no purchase: the first tier", 0, hobby, 2},
		{"9 USD: below pro's credits", 9 * ratelimit.Dollar, hobby, 2},
		{"10 USD: pro", 1 * ratelimit.Dollar, pro, 3},
	} {
		if step.buy > 0 {
			if _, err := a.AddCredits(ctx, account.Purchase{ID: step.name, Account: acct.ID, Amount: step.buy}); err != nil {
				t.Fatal(err)
			}
		}
		p, err := a.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Account.Tier(); got != step.tier {
			t.Fatalf("%s: tier %+v, want %+v", step.name, got, step.tier)
		}
		n, err := reserve(p.Account.Tier())
		if n != step.admit || !errors.Is(err, ratelimit.ErrRateLimited) {
			t.Fatalf("%s: the limiter admitted %d requests, then %v; want %d, then ErrRateLimited", step.name, n, err, step.admit)
		}
	}

	if got, err := a.SetTier(ctx, acct.ID, "HOBBY"); err != nil || got.PinnedTier != "hobby" || got.Tier() != hobby {
		t.Fatalf("SetTier(hobby) = %+v, %v", got, err)
	}
	for _, hostedName := range []string{"tier2", "unlimited"} {
		if _, err := a.SetTier(ctx, acct.ID, hostedName); !errors.Is(err, account.ErrInvalid) || !strings.Contains(err.Error(), "hobby or pro") {
			t.Errorf("SetTier(%s), a tier of the hosted ladder only: %v", hostedName, err)
		}
	}
	if got := a.Tiers(); len(got.Tiers) != 2 || got.Tiers[1] != pro {
		t.Errorf("Tiers() = %+v", got)
	}

	// Plans: the first is the base plan, trials come from the plan.
	if p, st := acct.PlanAt(now); p.Name != "basic" || st != account.PlanActive {
		t.Errorf("CreateAccount's account: plan %s %s, want basic active", p.Name, st)
	}
	byHand := account.Account{Credits: 50 * ratelimit.Dollar}
	if p, _ := byHand.PlanAt(now); p.Name != "free" || byHand.Tier().Name != "tier2" {
		t.Errorf("an Account made by hand: plan %s, tier %s; want the hosted free and tier2", p.Name, byHand.Tier().Name)
	}
	got, err := a.Account(ctx, acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p, st := got.PlanAt(now); p.Name != "basic" || st != account.PlanActive {
		t.Errorf("new account: plan %s %s, want basic active", p.Name, st)
	}
	if _, err := a.StartTrial(ctx, acct.ID, "team"); !errors.Is(err, account.ErrInvalid) {
		t.Errorf("StartTrial(team), a hosted plan only: %v", err)
	}
	got, err = a.StartTrial(ctx, acct.ID, "plus")
	if err != nil {
		t.Fatal(err)
	}
	if p, st := got.PlanAt(now.Add(59 * time.Minute)); p.Name != "plus" || st != account.PlanTrialing {
		t.Errorf("during the trial: %s %s", p.Name, st)
	}
	if p, st := got.PlanAt(now.Add(time.Hour)); p.Name != "basic" || st != account.PlanExpired {
		t.Errorf("after the trial: %s %s", p.Name, st)
	}
}

// TestConfigRules: a ladder or plans that are not one are refused by
// New with the field named; zero ones are the hosted product's.
func TestConfigRules(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		cfg  account.Config
		want string // "" for none
	}{
		{"zero: hosted", account.Config{}, ""},
		{"pinned only", account.Config{Tiers: ratelimit.Ladder{Pinned: []ratelimit.Tier{{Name: "x"}}}}, "Config.Tiers: ratelimit: Ladder.Tiers is empty"},
		{"credits not ascending", account.Config{Tiers: ratelimit.Ladder{Tiers: []ratelimit.Tier{{Name: "a", Credits: 5}, {Name: "b", Credits: 5}}}}, "Ladder.Tiers[1].Credits"},
		{"unnamed tier", account.Config{Tiers: ratelimit.Ladder{Tiers: []ratelimit.Tier{{}}}}, "Ladder.Tiers[0].Name is empty"},
		{"empty plans", account.Config{Plans: ratelimit.Plans{}}, "Config.Plans: ratelimit: Plans is empty"},
		{"plan twice", account.Config{Plans: ratelimit.Plans{{Name: "a"}, {Name: "A"}}}, "Plans[1].Name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Store, tc.cfg.PasswordIterations = account.NewMemory(), 1_000
			a, err := account.New(ctx, tc.cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "":
				if l := a.Tiers(); len(l.Tiers) != 3 || l.Tiers[0].Name != "default" || a.Plans().Base().Name != "free" {
					t.Errorf("zero Config: tiers %+v, plans %+v", l, a.Plans())
				}
			case err == nil || !strings.Contains(err.Error(), "account: ") || !strings.Contains(err.Error(), tc.want):
				t.Errorf("New: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
