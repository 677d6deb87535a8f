package ratelimit

import (
	"context"
	"sync"
	"time"
)

// Memory is the in-memory Limiter: exact, for one process. Create it with
// NewMemory. It is safe for concurrent use, starts no goroutine and has
// nothing to close; idle keys and past months are dropped as time passes.
type Memory struct {
	mu        sync.Mutex
	keys      map[string][]entry      // each key's window and unsettled reservations
	spend     map[monthKey]Money      // each key's spend per month
	quotas    map[monthKey]*quotaUsed // each account's quotas per month
	lastSweep time.Time
}

// monthKey is a key or account in one month.
type monthKey struct{ key, month string }

// quotaUsed is an account's use of its plan in one month.
type quotaUsed struct {
	reviews, summaries int64
	users              map[string]bool
}

// NewMemory returns an empty in-memory Limiter.
func NewMemory() *Memory {
	return &Memory{keys: map[string][]entry{}, spend: map[monthKey]Money{}, quotas: map[monthKey]*quotaUsed{}}
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
	t := r.Tier
	cur := inWindow(m.keys[r.Key], now)
	mk := monthKey{r.Key, Month(now)}
	spent := m.spend[mk]
	if overSpend(t, spent, cost) {
		st := status(cur, now, t)
		st.Spent = spent
		return Reservation{}, &Error{Err: ErrSpendCap, Key: r.Key, Limit: LimitSpend, Max: int64(t.MaxMonthlySpend),
			Requested: int64(cost), RetryAfter: NextMonth(now).Sub(now), Status: st}
	}
	if limit, size, retry := check(cur, now, t, in, out); limit != "" {
		st := status(cur, now, t)
		st.Spent = spent
		want := map[string]int64{LimitRequests: 1, LimitInputTokens: in, LimitOutputTokens: out}[limit]
		return Reservation{}, &Error{Err: ErrRateLimited, Key: r.Key, Limit: limit, Max: size, Requested: want,
			RetryAfter: retry, Status: st}
	}
	e := entry{id: NewID(), at: now, in: in, out: out, cost: cost}
	m.keys[r.Key] = append(m.keys[r.Key], e)
	m.spend[mk] = addMoney(spent, cost)
	st := status(append(cur, e), now, t)
	st.Spent = m.spend[mk]
	return Reservation{ID: e.id, Key: r.Key, At: now, Reserved: Usage{Requests: 1, InputTokens: in, OutputTokens: out, Images: r.Images},
		Cost: cost, Prices: r.Prices, Status: st}, nil
}

// Settle implements Limiter.
func (m *Memory) Settle(ctx context.Context, res Reservation, used Usage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.find(res)
	if e == nil || e.settled {
		return nil
	}
	e.in, e.out, e.settled = max(used.InputTokens, 0), max(used.OutputTokens, 0), true
	mk := monthKey{res.Key, Month(res.At)}
	m.spend[mk] = max(m.spend[mk]-e.cost, 0) + res.Prices.Cost(used)
	e.cost = 0
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
	mk := monthKey{res.Key, Month(res.At)}
	m.spend[mk] = max(m.spend[mk]-e.cost, 0)
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

// UseQuota implements Limiter.
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
	mk := monthKey{q.Account, Month(now)}
	u := m.quotas[mk]
	if u == nil {
		u = &quotaUsed{users: map[string]bool{}}
		m.quotas[mk] = u
	}
	newUser := q.User != "" && !u.users[q.User]
	users := int64(len(u.users))
	if limit, size, want := refuseQuota(q, u.reviews, u.summaries, users, newUser); limit != "" {
		return QuotaStatus{}, &Error{Err: ErrQuotaExhausted, Key: q.Account, Limit: limit, Max: size, Requested: want,
			RetryAfter: NextMonth(now).Sub(now)}
	}
	u.reviews = max(u.reviews+q.Reviews, 0)
	u.summaries = max(u.summaries+q.Summaries, 0)
	if newUser {
		u.users[q.User] = true
		users++
	}
	return quotaStatus(q.Plan, u.reviews, u.summaries, users, now), nil
}

// sweep drops, at most once a Window, settled entries that left the
// window, unsettled ones older than Hold, keys left empty, and months
// before the previous one.
func (m *Memory) sweep(now time.Time) {
	if now.Sub(m.lastSweep) < Window && !m.lastSweep.After(now) {
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
	keep := map[string]bool{Month(now): true, Month(now.Add(-Hold)): true}
	for mk := range m.spend {
		if !keep[mk.month] {
			delete(m.spend, mk)
		}
	}
	for mk := range m.quotas {
		if !keep[mk.month] {
			delete(m.quotas, mk)
		}
	}
}
