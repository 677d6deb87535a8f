package account_test

import (
	"context"
	"testing"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// A paid plan's price is charged to the account's spend once a month:
// at its first use (UseQuota), or by ChargePlans for a month without
// one; a trial, an expired trial and Free cost nothing; under prepaid
// billing the fee is drawn from the balance too.
func TestPlanFees(t *testing.T) {
	for _, billing := range []account.Billing{account.Postpaid, account.Prepaid} {
		t.Run(string(billing), func(t *testing.T) {
			ctx := context.Background()
			now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			a, err := account.New(ctx, account.Config{Store: account.NewMemory(), Now: clock, Billing: billing})
			if err != nil {
				t.Fatal(err)
			}
			lim := ratelimit.NewMemory()
			newAccount := func(id, plan string, trial bool) {
				t.Helper()
				if _, err := a.CreateAccount(ctx, account.NewAccount{ID: id, Name: id}); err != nil {
					t.Fatal(err)
				}
				if _, err := a.AddCredits(ctx, account.Purchase{ID: "pay-" + id, Account: id, Amount: 500 * ratelimit.Dollar}); err != nil {
					t.Fatal(err)
				}
				switch {
				case trial:
					_, err = a.StartTrial(ctx, id, plan)
				case plan != "free":
					_, err = a.Subscribe(ctx, id, plan)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			newAccount("team", "team", false)
			newAccount("growth", "growth", false)
			newAccount("trial", "growth", true)
			newAccount("free", "free", false)
			newAccount("enterprise", "enterprise", false)

			use := func(id string) ratelimit.Money {
				t.Helper()
				st, err := a.UseQuota(ctx, lim, ratelimit.QuotaRequest{Account: id, User: "ann", Reviews: 1}, now)
				if err != nil {
					t.Fatal(err)
				}
				return st.Fee
			}
			if fee := use("team"); fee != policy.Team.Price {
				t.Errorf("team's first review charged %s, want %s", fee, policy.Team.Price)
			}
			if fee := use("team"); fee != 0 {
				t.Errorf("team's second review charged %s", fee)
			}
			if fee := use("trial"); fee != 0 {
				t.Errorf("a trial charged %s", fee)
			}
			if err := a.ChargePlans(ctx, lim, now); err != nil {
				t.Fatal(err)
			}
			if err := a.ChargePlans(ctx, lim, now); err != nil { // nothing more
				t.Fatal(err)
			}
			want := map[string]ratelimit.Money{"team": policy.Team.Price, "growth": policy.Growth.Price}
			for _, id := range []string{"team", "growth", "trial", "free", "enterprise"} {
				u, err := lim.Usage(ctx, id, now)
				if err != nil {
					t.Fatal(err)
				}
				acct, _ := a.Account(ctx, id)
				wantBalance := 500 * ratelimit.Dollar
				if billing == account.Prepaid {
					wantBalance -= want[id]
				}
				if u.Spent != want[id] || u.PlanFee != want[id] || acct.Balance() != wantBalance {
					t.Errorf("%s: spent %s, plan fee %s, balance %s; want %s, %s, %s", id, u.Spent, u.PlanFee, acct.Balance(), want[id], want[id], wantBalance)
				}
			}
			// The trial ends: its plan lapses to Free, which costs
			// nothing; the next month charges the paid plans again.
			now = now.AddDate(0, 1, 0)
			if err := a.ChargePlans(ctx, lim, now); err != nil {
				t.Fatal(err)
			}
			for id, fee := range map[string]ratelimit.Money{"team": policy.Team.Price, "growth": policy.Growth.Price, "trial": 0} {
				if u, _ := lim.Usage(ctx, id, now); u.PlanFee != fee {
					t.Errorf("%s next month: plan fee %s, want %s", id, u.PlanFee, fee)
				}
			}
		})
	}
}
