package ratelimit

import (
	"slices"
	"time"
)

// entry is one admitted request in a key's window.
type entry struct {
	id      string
	at      time.Time
	in, out int64
	settled bool
	account string // whose month it is charged to
	cost    Money  // the cost charged until it settles
}

// dimension is one of the three per-minute limits.
type dimension struct {
	name   string
	limit  int64
	amount func(entry) int64
	want   int64
}

// dimensions returns the per-minute limits of t with what a new request
// wants of each.
func dimensions(t Tier, in, out int64) [3]dimension {
	return [3]dimension{
		{LimitRequests, t.Requests, func(entry) int64 { return 1 }, 1},
		{LimitInputTokens, t.InputTokens, func(e entry) int64 { return e.in }, in},
		{LimitOutputTokens, t.OutputTokens, func(e entry) int64 { return e.out }, out},
	}
}

// inWindow returns the entries that count at now, oldest first.
func inWindow(entries []entry, now time.Time) []entry {
	var cur []entry
	for _, e := range entries {
		if e.at.After(now.Add(-Window)) {
			cur = append(cur, e)
		}
	}
	slices.SortStableFunc(cur, func(a, b entry) int { return a.at.Compare(b.at) })
	return cur
}

// check decides whether a request wanting in and out tokens fits the
// window at now. If not, it returns the first limit it breaks, that
// limit's size, and how long until the request would fit (the longest
// wait over the limits it breaks).
func check(cur []entry, now time.Time, t Tier, in, out int64) (limit string, size int64, retry time.Duration) {
	for _, d := range dimensions(t, in, out) {
		if d.limit <= 0 {
			continue
		}
		var used int64
		for _, e := range cur {
			used += d.amount(e)
		}
		if d.want == 0 || used+d.want <= d.limit {
			continue // what a request does not use never refuses it
		}
		wait := Window // everything is at now: the whole window
		for _, e := range cur {
			used -= d.amount(e)
			if used+d.want <= d.limit {
				wait = e.at.Add(Window).Sub(now)
				break
			}
		}
		if limit == "" {
			limit, size = d.name, d.limit
		}
		retry = max(retry, wait)
	}
	return limit, size, retry
}

// status returns the per-minute budgets of the entries that count at now.
func status(cur []entry, now time.Time, t Tier) Status {
	var st Status
	budgets := [3]*Budget{&st.Requests, &st.InputTokens, &st.OutputTokens}
	for i, d := range dimensions(t, 0, 0) {
		if d.limit <= 0 {
			continue
		}
		var used int64
		var last time.Time
		for _, e := range cur {
			if a := d.amount(e); a > 0 {
				used += a
				if e.at.After(last) {
					last = e.at
				}
			}
		}
		b := Budget{Limit: d.limit, Remaining: max(d.limit-used, 0)}
		if !last.IsZero() {
			b.Reset = max(last.Add(Window).Sub(now), 0)
		}
		*budgets[i] = b
	}
	st.MaxSpend = t.MaxMonthlySpend
	return st
}

// overSpend reports whether charging cost on top of spent breaks the
// tier's cap. A request that costs nothing always passes.
func overSpend(t Tier, spent, cost Money) bool {
	return t.MaxMonthlySpend > 0 && cost > 0 && addMoney(max(spent, 0), cost) > t.MaxMonthlySpend
}
