package console

import (
	"testing"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/ratelimit"
)

func TestDollars(t *testing.T) {
	for _, tc := range []struct {
		m    ratelimit.Money
		want string
	}{
		{0, "$0.00"},
		{5 * ratelimit.Cent, "$0.05"},
		{12*ratelimit.Dollar + 50*ratelimit.Cent, "$12.50"},
		{1_000 * ratelimit.Dollar, "$1,000.00"},
		{1_234_567*ratelimit.Dollar + 1, "$1,234,567.000000001"},
		{125 * ratelimit.MicroDollar, "$0.000125"},
		{ratelimit.NanoDollar, "$0.000000001"},
		{-3 * ratelimit.Dollar, "-$3.00"},
	} {
		if got := dollars(tc.m); got != tc.want {
			t.Errorf("dollars(%d) = %q, want %q", tc.m, got, tc.want)
		}
	}
}

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0"}, {999, "999"}, {1_000, "1,000"}, {30_000, "30,000"}, {1_234_567, "1,234,567"}, {-12_345, "-12,345"},
	} {
		if got := count(tc.n); got != tc.want {
			t.Errorf("count(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// Under prepaid billing the console shows the balance, and an account
// that has bought no tier says so; under postpaid it shows none.
func TestViewAccountBalance(t *testing.T) {
	ctx := t.Context()
	for _, billing := range []account.Billing{account.Postpaid, account.Prepaid} {
		a, err := account.New(ctx, account.Config{Store: account.NewMemory(), Billing: billing, PasswordIterations: 1_000})
		if err != nil {
			t.Fatal(err)
		}
		acct, err := a.Account(ctx, account.DefaultAccount)
		if err != nil {
			t.Fatal(err)
		}
		v := viewAccount(acct, billing, time.Now())
		if billing == account.Postpaid {
			if v.Balance != "" || v.Tier != "default" {
				t.Errorf("postpaid: balance %q, tier %q", v.Balance, v.Tier)
			}
			continue
		}
		if v.Balance != "$0.00" || v.Tier != "None" {
			t.Errorf("prepaid, no purchase: balance %q, tier %q", v.Balance, v.Tier)
		}
		acct, err = a.AddCredits(ctx, account.Purchase{ID: "p", Account: account.DefaultAccount, Amount: 5 * ratelimit.Dollar})
		if err != nil {
			t.Fatal(err)
		}
		if v := viewAccount(acct, billing, time.Now()); v.Balance != "$5.00" || v.Tier != "default" {
			t.Errorf("prepaid, 5 USD bought: balance %q, tier %q", v.Balance, v.Tier)
		}
	}
}
