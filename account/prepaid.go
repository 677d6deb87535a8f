package account

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/inferkit/inferkit/ratelimit"
)

// Billing is how an Accounts' accounts pay for what they use.
type Billing string

// Billings.
const (
	// Postpaid counts each account's spend per month, under its tier's
	// monthly cap, to be billed afterwards: purchases only unlock
	// tiers, and nothing draws them down. It is the default.
	Postpaid Billing = "postpaid"
	// Prepaid draws each request's cost from its account's balance of
	// purchased credits (Account.Balance) and refuses a request that
	// the balance cannot pay for; an account has no tier until its
	// purchases reach the first.
	Prepaid Billing = "prepaid"
)

// Billing returns Config.Billing: Postpaid when it was "".
func (a *Accounts) Billing() Billing { return a.rules.billing }

// Balance returns what is left of the account's prepaid credit: its
// Credits less what prepaid billing has drawn (Drawn) and what requests
// in flight hold (Held). It is below 0 only when requests used more
// than they reserved (a decision whose input outgrew its estimate) or
// ran past ratelimit.Lease, or when a code-review plan's monthly fee
// (UseQuota) was owed beyond it. Under postpaid billing nothing is drawn,
// and it is Credits.
func (a Account) Balance() ratelimit.Money { return a.Credits - a.Drawn - a.Held }

// hold is a prepaid reservation in flight: its maximum cost, held from
// the balance until it settles.
type hold struct {
	Cost ratelimit.Money `json:"cost"`
	At   time.Time       `json:"at"`
}

// holdID names the hold of a reservation in its account's record.
func holdID(res ratelimit.Reservation) string { return res.Key + "/" + res.ID }

// Limiter returns inner under postpaid billing; under prepaid billing,
// a ratelimit.Limiter that admits a request through inner (its tier's
// rate limits and monthly cap, which keep applying) and then holds the
// request's maximum cost (the reservation's Cost: its input and every
// output token it may generate, at its prices) from its account's
// balance, in one atomic Update of the account's record, so that
// replicas sharing a Store (Redis) draw down one balance exactly.
//
// A request the balance cannot pay for, or of an account with no tier
// (see Account.Tier), is refused with a *ratelimit.Error wrapping
// ratelimit.ErrNoCredit (Limit ratelimit.LimitBalance or
// ratelimit.LimitTier), and its reservation of inner is cancelled; a
// request that costs nothing passes an empty balance, as it passes a
// spent monthly cap. Settle draws the request's real cost (at most
// what it held, but for a decision's estimate) and gives the rest of
// the hold back; Cancel gives all of it back; both do nothing the
// second time. A purchase (AddCredits) raises the balance at once.
//
// A hold that neither settles nor cancels within ratelimit.Lease (its
// process was killed) is given back at the account's next Reserve; a
// Settle after that draws its whole real cost, once. Every request of
// an account writes its record twice (Reserve and Settle): on Redis
// these are optimistic transactions on one key, retried under
// contention (redisaccount.MaxRetries).
//
// The Limiter's Usage is inner's. It is safe for concurrent use.
func (a *Accounts) Limiter(inner ratelimit.Limiter) ratelimit.Limiter {
	if a.rules.billing != Prepaid || inner == nil {
		return inner
	}
	return &prepaid{a: a, inner: inner}
}

// prepaid is the Limiter of Accounts.Limiter under prepaid billing.
type prepaid struct {
	a     *Accounts
	inner ratelimit.Limiter
}

// Reserve implements ratelimit.Limiter.
func (p *prepaid) Reserve(ctx context.Context, r ratelimit.Request, now time.Time) (ratelimit.Reservation, error) {
	res, err := p.inner.Reserve(ctx, r, now)
	if err != nil {
		return res, err
	}
	var refusal *ratelimit.Error
	_, err = p.a.updateAccount(ctx, res.Account, func(rec *accountRecord) (bool, error) {
		refusal = nil
		changed := rec.lapse(now)
		if rec.Tier().Name == "" {
			var first ratelimit.Money
			if t := rec.product().tiers.Tiers; len(t) > 0 {
				first = t[0].Credits
			}
			refusal = &ratelimit.Error{Err: ratelimit.ErrNoCredit, Key: res.Key, Account: res.Account,
				Limit: ratelimit.LimitTier, Max: int64(first - rec.Credits), Status: res.Status}
			return changed, nil
		}
		if res.Cost == 0 {
			return changed, nil
		}
		if left := rec.Balance(); res.Cost > left {
			refusal = &ratelimit.Error{Err: ratelimit.ErrNoCredit, Key: res.Key, Account: res.Account,
				Limit: ratelimit.LimitBalance, Max: int64(max(left, 0)), Requested: int64(res.Cost), Status: res.Status}
			return changed, nil
		}
		if rec.Holds == nil {
			rec.Holds = make(map[string]hold)
		}
		rec.Holds[holdID(res)] = hold{Cost: res.Cost, At: now}
		rec.Held += res.Cost
		return true, nil
	})
	if err == nil && refusal == nil {
		return res, nil
	}
	// Refused, or the balance could not be read: inner's reservation
	// goes, as if the request never was.
	undo := p.inner.Cancel(context.WithoutCancel(ctx), res)
	if err != nil {
		return ratelimit.Reservation{}, errors.Join(fmt.Errorf("account: prepaid balance: %w", err), undo)
	}
	if undo != nil {
		return ratelimit.Reservation{}, undo
	}
	return ratelimit.Reservation{}, refusal
}

// lapse gives back the holds older than ratelimit.Lease, and forgets
// those given back longer than ratelimit.Hold ago; it reports whether
// it changed the record.
func (r *accountRecord) lapse(now time.Time) bool {
	changed := false
	for id, h := range r.Holds {
		if now.Sub(h.At) < ratelimit.Lease {
			continue
		}
		delete(r.Holds, id)
		r.Held -= h.Cost
		if r.Lapsed == nil {
			r.Lapsed = make(map[string]time.Time)
		}
		r.Lapsed[id] = h.At
		changed = true
	}
	for id, at := range r.Lapsed {
		if now.Sub(at) >= ratelimit.Hold {
			delete(r.Lapsed, id)
			changed = true
		}
	}
	return changed
}

// release ends res's hold: it draws cost from the balance when draw is
// set, and gives the rest back. A hold that lapsed draws cost then; one
// already ended does nothing.
func (p *prepaid) release(ctx context.Context, res ratelimit.Reservation, draw bool, cost ratelimit.Money) error {
	id := holdID(res)
	_, err := p.a.updateAccount(ctx, res.Account, func(rec *accountRecord) (bool, error) {
		h, held := rec.Holds[id]
		_, lapsed := rec.Lapsed[id]
		switch {
		case held:
			delete(rec.Holds, id)
			rec.Held -= h.Cost
		case lapsed:
			delete(rec.Lapsed, id)
		default:
			return false, nil
		}
		if draw {
			rec.Drawn += cost
		}
		return true, nil
	})
	if errors.Is(err, ErrNotFound) {
		return nil // the account was removed: nothing left to draw from
	}
	return err
}

// Settle implements ratelimit.Limiter.
func (p *prepaid) Settle(ctx context.Context, res ratelimit.Reservation, used ratelimit.Usage) error {
	err := p.inner.Settle(ctx, res, used)
	if res.Cost == 0 {
		return err
	}
	return errors.Join(err, p.release(ctx, res, true, res.Prices.Cost(used)))
}

// Cancel implements ratelimit.Limiter.
func (p *prepaid) Cancel(ctx context.Context, res ratelimit.Reservation) error {
	err := p.inner.Cancel(ctx, res)
	if res.Cost == 0 {
		return err
	}
	return errors.Join(err, p.release(ctx, res, false, 0))
}

// Usage implements ratelimit.Limiter: inner's.
func (p *prepaid) Usage(ctx context.Context, account string, now time.Time) (ratelimit.MonthUsage, error) {
	return p.inner.Usage(ctx, account, now)
}
