// Package redislimit is a ratelimit.Limiter and ratelimit.Quotas whose
// counts live in Redis, so that several replicas of a server share each
// key's limits and each account's spend, usage and quotas. Every
// operation is one Lua script (or one command), atomic on the server, so
// the limits stay exact however many replicas race, and a reservation
// settles once.
//
// A key's window is a sorted set of its reservations by admission time
// and a hash of their token counts; an account's month is one hash (spend
// and held in nano-dollars, compared with the cap exactly up to 2^53,
// about 9 million USD; the settled usage; the reviews and summaries of
// its quotas) and a set of its quota users. Every Redis key of an
// account, its keys' windows included, carries the account as its hash
// tag ({account}), so that a Redis Cluster keeps each script's keys on one
// slot; accounts and keys are escaped (url.QueryEscape) in Redis keys.
// Counters saturate at the largest int64, as ratelimit.Memory's do, and
// each script checks everything before its first write, so that none
// fails midway. A
// month's counters expire two months after their last change. Times come
// from the callers, in milliseconds: keep the replicas' clocks
// synchronised.
//
// A reservation that holds a cost also holds a lease on it, in a sorted
// set of the account's by expiry: one whose process died (kill -9)
// before it settled or cancelled gives its cost back to the month after
// ratelimit.Lease, at the account's next Reserve, instead of keeping it
// charged. A Settle after that charges the whole cost of its usage.
package redislimit

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inferkit/inferkit/internal/rediserr"
	"github.com/inferkit/inferkit/ratelimit"
)

// DefaultPrefix begins every Redis key when Config.Prefix is empty.
const DefaultPrefix = "inferkit:ratelimit:"

// Config configures a Limiter.
type Config struct {
	// Client is the Redis connection: a *redis.Client, *redis.ClusterClient
	// or *redis.Ring. Required; the caller closes it.
	Client redis.UniversalClient
	// Prefix begins every key the Limiter writes. Empty means
	// DefaultPrefix.
	Prefix string
}

// Limiter is a ratelimit.Limiter and a ratelimit.Quotas on Redis. Create
// it with New. It is safe for concurrent use and holds nothing to close
// besides the caller's Client.
type Limiter struct {
	rdb    redis.UniversalClient
	prefix string
}

var (
	_ ratelimit.Limiter = (*Limiter)(nil)
	_ ratelimit.Quotas  = (*Limiter)(nil)
)

// New returns a Limiter on cfg.Client.
func New(cfg Config) (*Limiter, error) {
	if cfg.Client == nil {
		return nil, errors.New("redislimit: Config.Client is nil")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	return &Limiter{rdb: cfg.Client, prefix: cfg.Prefix}, nil
}

var (
	//go:embed reserve.lua
	reserveSrc string
	//go:embed settle.lua
	settleSrc string
	//go:embed cancel.lua
	cancelSrc string
	//go:embed quota.lua
	quotaSrc string

	//go:embed int64.lua
	int64Src string

	reserveScript = redis.NewScript(int64Src + reserveSrc)
	settleScript  = redis.NewScript(int64Src + settleSrc)
	cancelScript  = redis.NewScript(cancelSrc)
	quotaScript   = redis.NewScript(quotaSrc)
)

// monthTTL keeps a month's counters a while after the month.
const monthTTL = 62 * 24 * time.Hour

// month returns the Redis key of an account's month: a hash of its
// spend, usage and quotas.
func (l *Limiter) month(account, month string) string {
	return l.prefix + "{" + url.QueryEscape(account) + "}:month:" + month
}

// keys returns the Redis keys of a reservation of key, charged to
// account in month: the key's window log, its reservations' amounts, the
// account's month, and the account's leases.
func (l *Limiter) keys(account, key, month string) []string {
	tag := l.prefix + "{" + url.QueryEscape(account) + "}:"
	base := tag + "key:" + url.QueryEscape(key) + ":"
	return []string{base + "log", base + "amt", l.month(account, month), tag + "leases"}
}

// lease returns the member of the account's leases that stands for
// reservation id, whose keys are ks (from keys): its amounts key, its
// month and its id.
func lease(ks []string, id string) string { return ks[1] + "\n" + ks[2] + "\n" + id }

// account returns the account a reservation is charged to.
func account(res ratelimit.Reservation) string {
	if res.Account != "" {
		return res.Account
	}
	return res.Key
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Reserve implements ratelimit.Limiter.
func (l *Limiter) Reserve(ctx context.Context, r ratelimit.Request, now time.Time) (ratelimit.Reservation, error) {
	in, out, cost, err := ratelimit.Prepare(r)
	if err != nil {
		return ratelimit.Reservation{}, err
	}
	if err := ctx.Err(); err != nil {
		return ratelimit.Reservation{}, err
	}
	t := r.Tier
	id, acct := ratelimit.NewID(), r.ChargedAccount()
	res := ratelimit.Reservation{ID: id, Key: r.Key, Account: acct, At: now, Cost: cost, Prices: r.Prices,
		Reserved: ratelimit.Usage{Requests: 1, InputTokens: in, OutputTokens: out, Images: r.Images}}
	ks := l.keys(acct, r.Key, ratelimit.Month(now))
	reply, err := reserveScript.Run(ctx, l.rdb, ks,
		id, now.UnixMilli(), ratelimit.Window.Milliseconds(), ratelimit.Hold.Milliseconds(),
		t.Requests, t.InputTokens, t.OutputTokens, itoa(in), itoa(out), itoa(int64(cost)), int64(t.MaxMonthlySpend),
		int64(monthTTL/time.Second), ratelimit.Lease.Milliseconds(), lease(ks, id)).Int64Slice()
	if err != nil {
		// The script may have run before the reply was lost (a cancelled
		// context, a timeout, a reset connection): undo it, which is
		// harmless when it did not run.
		undo, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = l.Cancel(undo, res)
		if ctx.Err() != nil {
			return ratelimit.Reservation{}, ctx.Err()
		}
		return ratelimit.Reservation{}, fmt.Errorf("redislimit: reserve: %w", unavailable(err))
	}
	// reply: verdict (0 admitted, 1 spend, 2 requests, 3 input, 4 output),
	// retry ms, spent, then limit, remaining, reset ms of the three limits.
	st := ratelimit.Status{Spent: ratelimit.Money(reply[2]), MaxSpend: t.MaxMonthlySpend}
	for i, b := range []*ratelimit.Budget{&st.Requests, &st.InputTokens, &st.OutputTokens} {
		*b = ratelimit.Budget{Limit: reply[3+3*i], Remaining: reply[4+3*i], Reset: time.Duration(reply[5+3*i]) * time.Millisecond}
	}
	switch v := reply[0]; v {
	case 0:
		res.Status = st
		return res, nil
	case 1:
		return ratelimit.Reservation{}, &ratelimit.Error{Err: ratelimit.ErrSpendCap, Key: r.Key, Account: acct, Limit: ratelimit.LimitSpend,
			Max: int64(t.MaxMonthlySpend), Requested: int64(cost), RetryAfter: ratelimit.NextMonth(now).Sub(now), Status: st}
	default:
		limit := []string{ratelimit.LimitRequests, ratelimit.LimitInputTokens, ratelimit.LimitOutputTokens}[v-2]
		size := []int64{t.Requests, t.InputTokens, t.OutputTokens}[v-2]
		want := []int64{1, in, out}[v-2]
		return ratelimit.Reservation{}, &ratelimit.Error{Err: ratelimit.ErrRateLimited, Key: r.Key, Account: acct, Limit: limit, Max: size,
			Requested: want, RetryAfter: time.Duration(reply[1]) * time.Millisecond, Status: st}
	}
}

// Settle implements ratelimit.Limiter.
func (l *Limiter) Settle(ctx context.Context, res ratelimit.Reservation, used ratelimit.Usage) error {
	in := max(used.InputTokens, 0)
	ks := l.keys(account(res), res.Key, ratelimit.Month(res.At))
	err := settleScript.Run(ctx, l.rdb, ks,
		res.ID, itoa(in), itoa(max(used.OutputTokens, 0)), itoa(int64(res.Prices.Cost(used))),
		int64(monthTTL/time.Second), itoa(max(used.Requests, 0)), itoa(min(max(used.CachedInputTokens, 0), in)), lease(ks, res.ID)).Err()
	if err != nil {
		return fmt.Errorf("redislimit: settle: %w", unavailable(err))
	}
	return nil
}

// Cancel implements ratelimit.Limiter.
func (l *Limiter) Cancel(ctx context.Context, res ratelimit.Reservation) error {
	ks := l.keys(account(res), res.Key, ratelimit.Month(res.At))
	if err := cancelScript.Run(ctx, l.rdb, ks, res.ID, lease(ks, res.ID)).Err(); err != nil {
		return fmt.Errorf("redislimit: cancel: %w", unavailable(err))
	}
	return nil
}

// usageFields are the fields of an account's month that Usage reads, in
// the order of ratelimit.MonthUsage.
var usageFields = []string{"spend", "held", "requests", "input_tokens", "cached_input_tokens", "output_tokens", "plan_fee"}

// Usage implements ratelimit.Limiter.
func (l *Limiter) Usage(ctx context.Context, account string, now time.Time) (ratelimit.MonthUsage, error) {
	if account == "" {
		return ratelimit.MonthUsage{}, errors.New("redislimit: Usage of an empty account")
	}
	month := ratelimit.Month(now)
	vals, err := l.rdb.HMGet(ctx, l.month(account, month), usageFields...).Result()
	if err != nil {
		return ratelimit.MonthUsage{}, fmt.Errorf("redislimit: usage: %w", unavailable(err))
	}
	n := make([]int64, len(usageFields))
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue // absent: 0
		}
		if n[i], err = strconv.ParseInt(s, 10, 64); err != nil {
			return ratelimit.MonthUsage{}, fmt.Errorf("redislimit: usage: field %s of %s is %q", usageFields[i], month, s)
		}
	}
	return ratelimit.MonthUsage{Month: month, Spent: ratelimit.Money(n[0]), Held: ratelimit.Money(n[1]), Requests: n[2],
		InputTokens: n[3], CachedInputTokens: n[4], OutputTokens: n[5], PlanFee: ratelimit.Money(n[6])}, nil
}

// UseQuota implements ratelimit.Quotas.
func (l *Limiter) UseQuota(ctx context.Context, q ratelimit.QuotaRequest, now time.Time) (ratelimit.QuotaStatus, error) {
	if q.Account == "" {
		return ratelimit.QuotaStatus{}, errors.New("ratelimit: QuotaRequest.Account is empty")
	}
	if q.Fee < 0 {
		return ratelimit.QuotaStatus{}, errors.New("ratelimit: QuotaRequest.Fee is negative")
	}
	if err := ctx.Err(); err != nil {
		return ratelimit.QuotaStatus{}, err
	}
	month := l.month(q.Account, ratelimit.Month(now))
	p := q.Plan
	reply, err := quotaScript.Run(ctx, l.rdb, []string{month, month + ":users"},
		p.Reviews, p.Summaries, p.Users, itoa(q.Reviews), itoa(q.Summaries), q.User, int64(monthTTL/time.Second), itoa(int64(q.Fee))).Slice()
	if err != nil {
		return ratelimit.QuotaStatus{}, fmt.Errorf("redislimit: quota: %w", unavailable(err))
	}
	// reply: refused limit ("" if none), its size, the amount asked,
	// then reviews, summaries and users used.
	n := func(i int) int64 { v, _ := reply[i].(int64); return v }
	reset := ratelimit.NextMonth(now).Sub(now)
	if limit, _ := reply[0].(string); limit != "" {
		return ratelimit.QuotaStatus{}, &ratelimit.Error{Err: ratelimit.ErrQuotaExhausted, Key: q.Account, Limit: limit,
			Max: n(1), Requested: n(2), RetryAfter: reset}
	}
	budget := func(limit, used int64) ratelimit.Budget {
		if limit <= 0 {
			return ratelimit.Budget{}
		}
		return ratelimit.Budget{Limit: limit, Remaining: max(limit-used, 0), Reset: reset}
	}
	return ratelimit.QuotaStatus{Reviews: budget(p.Reviews, n(3)), Summaries: budget(p.Summaries, n(4)), Users: budget(p.Users, n(5)),
		Fee: ratelimit.Money(n(6))}, nil
}

// unavailable wraps err with ratelimit.ErrUnavailable when the server cannot serve now.
func unavailable(err error) error { return rediserr.Wrap(err, ratelimit.ErrUnavailable) }
