package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// Memory is the in-memory Limiter and Quotas: exact, for one process.
// Create it with NewMemory, whose counts are lost with the process, or
// NewDurableMemory, whose monthly counters are kept in a Ledger. It is
// safe for concurrent use, starts no goroutine and has nothing to close;
// idle keys and past months are dropped from memory as time passes.
type Memory struct {
	ledger Ledger // nil: the months live in memory only

	mu        sync.Mutex
	keys      map[string][]entry // each key's window and unsettled reservations
	months    map[string]*month  // the counters of each month, by Month
	lastSweep time.Time
}

// month is the counters of every account in one calendar month.
type month struct {
	counts map[counter]int64
	users  map[string]int64 // the number of quota users of each account
}

var (
	_ Limiter = (*Memory)(nil)
	_ Quotas  = (*Memory)(nil)
)

// NewMemory returns an empty in-memory Limiter and Quotas.
func NewMemory() *Memory {
	return &Memory{keys: map[string][]entry{}, months: map[string]*month{}}
}

// NewDurableMemory returns a Memory whose monthly counters (each
// account's spend, usage, plan quotas and quota users) are written
// through to ledger and read back from it, so that a restart on the same
// ledger keeps them; the per-minute windows stay in memory and start
// empty. A month is loaded whole from the ledger the first time a call
// needs it.
//
// Every call that changes a counter writes its changes to the ledger
// first, in one Ledger.Add, and changes memory only once the ledger has
// them: a ledger that fails fails the call, with an error that says so,
// and nothing is admitted, settled, cancelled or counted. Reserve writes
// the reserved cost, Settle replaces it by the cost of the usage and
// counts the usage, Cancel takes it back: a process that ends between
// Reserve and Settle leaves the reserved cost charged (in
// MonthUsage.Held), as for a reservation abandoned past Hold. Calls that
// write are serialised, one ledger write at a time. A ledger write runs
// to its end even when the caller's context is cancelled (bounded by a
// timeout of its own). A ledger may fail after it applied a write (a
// lost reply): then the Memory reads the month again from the ledger on
// the next call, so that it counts what the ledger has; a Reserve whose
// write was applied so leaves its cost charged, as an abandoned
// reservation does, and a Settle so applied counts its usage again if it
// is retried.
//
// Only one process may use a ledger through a Memory at a time: a Memory
// reads a month from the ledger once and then counts in memory. Replicas
// share their counts through package redislimit instead.
func NewDurableMemory(ledger Ledger) (*Memory, error) {
	if ledger == nil {
		return nil, errors.New("ratelimit: NewDurableMemory: the ledger is nil")
	}
	m := NewMemory()
	m.ledger = ledger
	return m, nil
}

// month returns the counters of the month called name, loading them from
// the ledger the first time.
func (m *Memory) month(ctx context.Context, name string) (*month, error) {
	if mo := m.months[name]; mo != nil {
		return mo, nil
	}
	mo := &month{counts: map[counter]int64{}, users: map[string]int64{}}
	if m.ledger != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		loaded, err := m.ledger.Load(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("ratelimit: loading the counters of %s from the ledger: %w", name, err)
		}
		for n, v := range loaded {
			c, err := parseCounter(n)
			if err != nil {
				return nil, fmt.Errorf("%w (month %s)", err, name)
			}
			mo.add(c, v)
		}
	}
	m.months[name] = mo
	return mo, nil
}

// add adds d to counter c.
func (mo *month) add(c counter, d int64) {
	old := mo.counts[c]
	n := old + d
	if n == 0 {
		delete(mo.counts, c)
	} else {
		mo.counts[c] = n
	}
	if c.kind == counterUser {
		switch {
		case old == 0 && n != 0:
			mo.users[c.account]++
		case old != 0 && n == 0:
			mo.users[c.account]--
		}
	}
}

// ledgerTimeout bounds a write to the ledger, which does not end with
// the caller's context.
const ledgerTimeout = 10 * time.Second

// commit writes deltas to the ledger, if any, and then to mo, the month
// called name; if the ledger fails, it changes nothing in mo.
//
// The write does not stop when ctx is cancelled (a client that
// disconnects): it runs to its end, within ledgerTimeout, so that a
// store is not left to guess whether a write it began should count. A
// store can still fail after it applied a write (a reply lost on the
// network, a timeout): on any error commit drops the month from memory,
// so that the next call reads it again from the ledger, which is the
// truth, rather than count on in memory what may differ from it.
func (m *Memory) commit(ctx context.Context, name string, mo *month, deltas map[counter]int64) error {
	if m.ledger != nil {
		named := make(map[string]int64, len(deltas))
		for c, d := range deltas {
			if d != 0 {
				named[c.name()] = d
			}
		}
		if len(named) > 0 {
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ledgerTimeout)
			err := m.ledger.Add(wctx, name, named)
			cancel()
			if err != nil {
				delete(m.months, name)
				return fmt.Errorf("ratelimit: writing the counters of %s to the ledger: %w", name, err)
			}
		}
	}
	for c, d := range deltas {
		mo.add(c, d)
	}
	return nil
}

// room returns d (d >= 0), capped so that cur+d does not pass the
// largest int64: counters saturate rather than wrap (redislimit's
// scripts do the same).
func room(cur, d int64) int64 {
	if cur > 0 && d > math.MaxInt64-cur {
		return math.MaxInt64 - cur
	}
	return d
}

// Reserve implements Limiter.
func (m *Memory) Reserve(ctx context.Context, r Request, now time.Time) (Reservation, error) {
	in, out, cost, err := Prepare(r)
	if err != nil {
		return Reservation{}, err
	}
	if err := ctx.Err(); err != nil {
		return Reservation{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	acct, name := r.ChargedAccount(), Month(now)
	mo, err := m.month(ctx, name)
	if err != nil {
		return Reservation{}, err
	}
	t := r.Tier
	cur := inWindow(m.keys[r.Key], now)
	spendC := counter{kind: counterSpend, account: acct}
	spent := Money(mo.counts[spendC])
	if overSpend(t, spent, cost) {
		st := status(cur, now, t)
		st.Spent = spent
		return Reservation{}, &Error{Err: ErrSpendCap, Key: r.Key, Account: acct, Limit: LimitSpend, Max: int64(t.MaxMonthlySpend),
			Requested: int64(cost), RetryAfter: NextMonth(now).Sub(now), Status: st}
	}
	if limit, size, retry := check(cur, now, t, in, out); limit != "" {
		st := status(cur, now, t)
		st.Spent = spent
		want := map[string]int64{LimitRequests: 1, LimitInputTokens: in, LimitOutputTokens: out}[limit]
		return Reservation{}, &Error{Err: ErrRateLimited, Key: r.Key, Account: acct, Limit: limit, Max: size, Requested: want,
			RetryAfter: retry, Status: st}
	}
	charged := Money(room(int64(spent), int64(cost))) // cost, saturated
	err = m.commit(ctx, name, mo, map[counter]int64{spendC: int64(charged), {kind: counterHeld, account: acct}: int64(charged)})
	if err != nil {
		return Reservation{}, err
	}
	e := entry{id: NewID(), at: now, in: in, out: out, account: acct, cost: charged}
	m.keys[r.Key] = append(m.keys[r.Key], e)
	st := status(append(cur, e), now, t)
	st.Spent = Money(mo.counts[spendC])
	return Reservation{ID: e.id, Key: r.Key, Account: acct, At: now,
		Reserved: Usage{Requests: 1, InputTokens: in, OutputTokens: out, Images: r.Images},
		Cost:     cost, Prices: r.Prices, Status: st}, nil
}

// Settle implements Limiter.
func (m *Memory) Settle(ctx context.Context, res Reservation, used Usage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.find(res)
	if e == nil || e.settled {
		return nil
	}
	name := Month(res.At)
	mo, err := m.month(ctx, name)
	if err != nil {
		return err
	}
	// Every counter saturates at the largest int64 rather than wrap, the
	// spend counted without the reserved cost it replaces.
	in := max(used.InputTokens, 0)
	spendC := counter{kind: counterSpend, account: e.account}
	cost := room(mo.counts[spendC]-int64(e.cost), int64(res.Prices.Cost(used)))
	deltas := map[counter]int64{
		spendC:                                  cost - int64(e.cost),
		{kind: counterHeld, account: e.account}: -int64(e.cost),
	}
	for c, d := range map[counter]int64{
		{kind: counterRequests, account: e.account}: max(used.Requests, 0),
		{kind: counterInput, account: e.account}:    in,
		{kind: counterCached, account: e.account}:   min(max(used.CachedInputTokens, 0), in),
		{kind: counterOutput, account: e.account}:   max(used.OutputTokens, 0),
	} {
		deltas[c] = room(mo.counts[c], d)
	}
	err = m.commit(ctx, name, mo, deltas)
	if err != nil {
		return err
	}
	e.in, e.out, e.settled, e.cost = in, max(used.OutputTokens, 0), true, 0
	return nil
}

// Cancel implements Limiter.
func (m *Memory) Cancel(ctx context.Context, res Reservation) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.find(res)
	if e == nil || e.settled {
		return nil
	}
	if e.cost != 0 {
		name := Month(res.At)
		mo, err := m.month(ctx, name)
		if err != nil {
			return err
		}
		err = m.commit(ctx, name, mo, map[counter]int64{
			{kind: counterSpend, account: e.account}: -int64(e.cost),
			{kind: counterHeld, account: e.account}:  -int64(e.cost),
		})
		if err != nil {
			return err
		}
	}
	entries := m.keys[res.Key]
	for i := range entries {
		if entries[i].id == res.ID {
			m.keys[res.Key] = append(entries[:i], entries[i+1:]...)
			break
		}
	}
	return nil
}

// find returns the entry of res, or nil.
func (m *Memory) find(res Reservation) *entry {
	entries := m.keys[res.Key]
	for i := range entries {
		if entries[i].id == res.ID {
			return &entries[i]
		}
	}
	return nil
}

// Usage implements Limiter.
func (m *Memory) Usage(ctx context.Context, account string, now time.Time) (MonthUsage, error) {
	if account == "" {
		return MonthUsage{}, errors.New("ratelimit: Usage of an empty account")
	}
	if err := ctx.Err(); err != nil {
		return MonthUsage{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	name := Month(now)
	mo, err := m.month(ctx, name)
	if err != nil {
		return MonthUsage{}, err
	}
	n := func(kind string) int64 { return mo.counts[counter{kind: kind, account: account}] }
	return MonthUsage{Month: name, Spent: Money(n(counterSpend)), Held: Money(n(counterHeld)), Requests: n(counterRequests),
		InputTokens: n(counterInput), CachedInputTokens: n(counterCached), OutputTokens: n(counterOutput), PlanFee: Money(n(counterPlanFee))}, nil
}

// UseQuota implements Quotas.
func (m *Memory) UseQuota(ctx context.Context, q QuotaRequest, now time.Time) (QuotaStatus, error) {
	if err := checkQuota(q); err != nil {
		return QuotaStatus{}, err
	}
	if err := ctx.Err(); err != nil {
		return QuotaStatus{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	name := Month(now)
	mo, err := m.month(ctx, name)
	if err != nil {
		return QuotaStatus{}, err
	}
	reviewsC, summariesC := counter{kind: counterReviews, account: q.Account}, counter{kind: counterSummaries, account: q.Account}
	userC := counter{kind: counterUser, account: q.Account, user: q.User}
	reviews, summaries, users := mo.counts[reviewsC], mo.counts[summariesC], mo.users[q.Account]
	newUser := q.User != "" && mo.counts[userC] == 0
	if limit, size, want := refuseQuota(q, reviews, summaries, users, newUser); limit != "" {
		return QuotaStatus{}, &Error{Err: ErrQuotaExhausted, Key: q.Account, Limit: limit, Max: size, Requested: want,
			RetryAfter: NextMonth(now).Sub(now)}
	}
	deltas := map[counter]int64{
		reviewsC:   max(reviews+q.Reviews, 0) - reviews,
		summariesC: max(summaries+q.Summaries, 0) - summaries,
	}
	if newUser {
		deltas[userC] = 1
	}
	var fee Money
	if feeC := (counter{kind: counterPlanFee, account: q.Account}); q.Fee > 0 && mo.counts[feeC] == 0 {
		fee = q.Fee
		deltas[feeC] = int64(fee)
		deltas[counter{kind: counterSpend, account: q.Account}] = int64(fee)
	}
	if err := m.commit(ctx, name, mo, deltas); err != nil {
		return QuotaStatus{}, err
	}
	st := quotaStatus(q.Plan, mo.counts[reviewsC], mo.counts[summariesC], mo.users[q.Account], now)
	st.Fee = fee
	return st, nil
}

// sweep drops, at most once a Window, settled entries that left the
// window, unsettled ones older than Hold, keys left empty, and months
// before that of now-Hold (a durable Memory loads them again from its
// ledger if a call needs them).
//
// Callers read their clocks before they take the lock, so now may be a
// little earlier than another call's: sweep never runs for a now before
// the last sweep's, and never drops a month later than now-Hold's, so
// that a call with an earlier now (a request a few milliseconds behind
// another across a month's end, or Usage of a past month) drops nothing
// a later call still counts on. Month names sort as their months do.
func (m *Memory) sweep(now time.Time) {
	if now.Before(m.lastSweep.Add(Window)) {
		return
	}
	m.lastSweep = now
	for key, entries := range m.keys {
		kept := entries[:0]
		for _, e := range entries {
			if e.at.After(now.Add(-Window)) || (!e.settled && e.at.After(now.Add(-Hold))) {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			delete(m.keys, key)
		} else {
			m.keys[key] = kept
		}
	}
	oldest := Month(now.Add(-Hold))
	for name := range m.months {
		if name < oldest {
			delete(m.months, name)
		}
	}
}
