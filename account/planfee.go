package account

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/inferkit/inferkit/ratelimit"
)

// PlanFee returns what the account's code-review plan costs for the
// month of now: the price of a plan in force and paid for (PlanActive),
// 0 for a trial, an expired trial and a free plan.
func (a Account) PlanFee(now time.Time) ratelimit.Money {
	p, state := a.PlanAt(now)
	if state != PlanActive || p.Price <= 0 {
		return 0
	}
	return p.Price
}

// UseQuota takes q from quotas on the account's plan at now (q.Plan is
// set from the account, a trial counting as its plan) with the plan's
// fee for the month (Account.PlanFee): the month's first use of the
// plan charges its price to the account's spend, once, however many
// replicas race (ratelimit.QuotaRequest.Fee). Under prepaid billing a
// fee charged is drawn from the account's balance as well, like a
// request's cost. Every use of the code-review plan (a review, a
// console member's sign-in, ChargePlans) goes through it.
func (a *Accounts) UseQuota(ctx context.Context, quotas ratelimit.Quotas, q ratelimit.QuotaRequest, now time.Time) (ratelimit.QuotaStatus, error) {
	acct, err := a.Account(ctx, q.Account)
	if err != nil {
		return ratelimit.QuotaStatus{}, err
	}
	q.Plan, _ = acct.PlanAt(now)
	q.Fee = acct.PlanFee(now)
	st, err := quotas.UseQuota(ctx, q, now)
	if err != nil || st.Fee == 0 || a.rules.billing != Prepaid {
		return st, err
	}
	_, err = a.updateAccount(context.WithoutCancel(ctx), q.Account, func(r *accountRecord) (bool, error) {
		r.Drawn += st.Fee
		return true, nil
	})
	if err != nil {
		return st, fmt.Errorf("account: drawing the plan's fee of %s from the balance of %q: %w", st.Fee, q.Account, err)
	}
	return st, nil
}

// ChargePlans charges every account's plan fee for the month of now
// that its use has not charged yet (see UseQuota), so that a month
// without a review is charged too: a server calls it at start and then
// every hour or so. It goes on past an account that fails, and returns
// the accounts' errors joined.
func (a *Accounts) ChargePlans(ctx context.Context, quotas ratelimit.Quotas, now time.Time) error {
	accts, err := a.List(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, acct := range accts {
		if acct.PlanFee(now) == 0 {
			continue
		}
		if _, err := a.UseQuota(ctx, quotas, ratelimit.QuotaRequest{Account: acct.ID}, now); err != nil {
			errs = append(errs, fmt.Errorf("account %q: %w", acct.ID, err))
		}
	}
	return errors.Join(errs...)
}
