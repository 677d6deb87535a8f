package ratelimit_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
	"github.com/inferkit/inferkit/ratelimit/ratelimittest"
)

func TestMemory(t *testing.T) {
	ratelimittest.Run(t, func(t *testing.T) ratelimit.Limiter { return ratelimit.NewMemory() })
	ratelimittest.RunQuotas(t, func(t *testing.T) ratelimit.Quotas { return ratelimit.NewMemory() })
}

func TestDurableMemory(t *testing.T) {
	durable := func(t *testing.T) *ratelimit.Memory {
		m, err := ratelimit.NewDurableMemory(newMapLedger())
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	ratelimittest.Run(t, func(t *testing.T) ratelimit.Limiter { return durable(t) })
	ratelimittest.RunQuotas(t, func(t *testing.T) ratelimit.Quotas { return durable(t) })
}

// mapLedger is a ratelimit.Ledger in a map; when fail is set, every call
// fails with it; when lost is set, Add applies its write and then fails
// with it, as a store whose reply is lost; Add fails with its context's
// error, as a store on the network does; onLoad, if set, runs in Load.
type mapLedger struct {
	mu     sync.Mutex
	months map[string]map[string]int64
	fail   error
	lost   error
	onLoad func()
}

func newMapLedger() *mapLedger { return &mapLedger{months: map[string]map[string]int64{}} }

func (l *mapLedger) Load(_ context.Context, month string) (map[string]int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return nil, l.fail
	}
	if l.onLoad != nil {
		l.onLoad()
	}
	return maps.Clone(l.months[month]), nil
}

func (l *mapLedger) Add(ctx context.Context, month string, deltas map[string]int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return l.fail
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if l.months[month] == nil {
		l.months[month] = map[string]int64{}
	}
	for name, d := range deltas {
		l.months[month][name] += d
	}
	return l.lost
}

func (l *mapLedger) setFail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fail = err
}

// t0 is the tests' clock, in the middle of a month.
var t0 = time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)

func durableOn(t *testing.T, l ratelimit.Ledger) *ratelimit.Memory {
	t.Helper()
	m, err := ratelimit.NewDurableMemory(l)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDurableMemoryRestart: a new Memory on the same ledger keeps the
// month's spend (an unsettled reservation's included), usage, quotas and
// quota users; the windows start empty.
func TestDurableMemoryRestart(t *testing.T) {
	ctx := context.Background()
	ledger := newMapLedger()
	tier := ratelimit.Tier{Name: "t", Requests: 2, MaxMonthlySpend: ratelimit.Dollar}
	prices := ratelimit.Prices{Input: ratelimit.MicroDollar, CachedInput: ratelimit.MicroDollar, Output: 10 * ratelimit.MicroDollar}
	r := ratelimit.Request{Key: "k", Account: "acme/eu", Tier: tier, InputTokens: 1_000, MaxOutputTokens: 10_000, Prices: prices}
	plan := ratelimit.Plan{Name: "p", Reviews: 3, Users: 1}

	before := durableOn(t, ledger)
	res, err := before.Reserve(ctx, r, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := before.Settle(ctx, res, ratelimit.Usage{Requests: 1, InputTokens: 1_000, CachedInputTokens: 200, OutputTokens: 500}); err != nil {
		t.Fatal(err)
	}
	if _, err := before.Reserve(ctx, r, t0); err != nil { // never settled: the process ends
		t.Fatal(err)
	}
	if _, err := before.UseQuota(ctx, ratelimit.QuotaRequest{Account: "acme/eu", Plan: plan, User: "ann", Reviews: 2}, t0); err != nil {
		t.Fatal(err)
	}
	want, err := before.Usage(ctx, "acme/eu", t0)
	if err != nil {
		t.Fatal(err)
	}
	// 0.001 + 0.005 settled, 0.101 held.
	if want.Spent != 107*ratelimit.Dollar/1000 || want.Held != 101*ratelimit.Dollar/1000 || want.Requests != 1 {
		t.Fatalf("usage before the restart: %+v", want)
	}

	after := durableOn(t, ledger)
	got, err := after.Usage(ctx, "acme/eu", t0.Add(time.Second))
	if err != nil || got != want {
		t.Fatalf("usage after the restart: %+v, %v; want %+v", got, err, want)
	}
	// The windows are new: two requests pass; the spend is not: 0.107
	// and 2 × 0.3 of the 1 USD cap leave exactly 0.293.
	for range 2 {
		if _, err := after.Reserve(ctx, ratelimit.Request{Key: "k", Account: "acme/eu", Tier: tier, MaxOutputTokens: 30_000, Prices: prices}, t0); err != nil {
			t.Fatal(err)
		}
	}
	_, err = after.Reserve(ctx, ratelimit.Request{Key: "k2", Account: "acme/eu", Tier: tier, MaxOutputTokens: 29_301, Prices: prices}, t0)
	if !errors.Is(err, ratelimit.ErrSpendCap) {
		t.Fatalf("past the cap kept through the restart: %v, want ErrSpendCap", err)
	}
	if _, err := after.Reserve(ctx, ratelimit.Request{Key: "k2", Account: "acme/eu", Tier: tier, MaxOutputTokens: 29_300, Prices: prices}, t0); err != nil {
		t.Fatalf("up to the cap: %v", err)
	}
	// The quotas: one review left, and ann is the one user.
	st, err := after.UseQuota(ctx, ratelimit.QuotaRequest{Account: "acme/eu", Plan: plan, User: "ann", Reviews: 1}, t0)
	if err != nil || st.Reviews.Remaining != 0 || st.Users.Remaining != 0 {
		t.Fatalf("a review of ann after the restart: %+v, %v; want none left", st, err)
	}
	if _, err := after.UseQuota(ctx, ratelimit.QuotaRequest{Account: "acme/eu", Plan: plan, User: "bob"}, t0); !errors.Is(err, ratelimit.ErrQuotaExhausted) {
		t.Fatalf("a second user after the restart: %v, want ErrQuotaExhausted", err)
	}
}

// TestDurableMemoryLedgerFails: a ledger that fails fails the call, says
// so, and nothing is admitted, settled, cancelled or counted.
func TestDurableMemoryLedgerFails(t *testing.T) {
	ctx := context.Background()
	down := errors.New("disk full")
	ledger := newMapLedger()
	m := durableOn(t, ledger)
	tier := ratelimit.Tier{Name: "one", Requests: 1}
	r := ratelimit.Request{Key: "k", Account: "a", Tier: tier, InputTokens: 10, Prices: ratelimit.Prices{Input: ratelimit.MicroDollar}}
	failed := func(what string, err error) {
		t.Helper()
		var le *ratelimit.Error
		if !errors.Is(err, down) || errors.As(err, &le) || !strings.Contains(err.Error(), "ledger") {
			t.Fatalf("%s on a failing ledger: %v, want an error of the ledger", what, err)
		}
	}

	// Loading the month fails: even a request that costs nothing.
	ledger.setFail(down)
	_, err := m.Reserve(ctx, ratelimit.Request{Key: "k", Tier: tier}, t0)
	failed("Reserve", err)
	_, err = m.Usage(ctx, "a", t0)
	failed("Usage", err)

	// Writing fails: nothing is admitted, the window included.
	ledger.setFail(nil)
	if _, err := m.Usage(ctx, "a", t0); err != nil { // loads the month
		t.Fatal(err)
	}
	ledger.setFail(down)
	_, err = m.Reserve(ctx, r, t0)
	failed("Reserve", err)
	ledger.setFail(nil)
	res, err := m.Reserve(ctx, r, t0)
	if err != nil {
		t.Fatalf("after the ledger recovered: %v (the failed reservation took the window's request?)", err)
	}
	if res.Status.Spent != 10*ratelimit.MicroDollar {
		t.Errorf("spent %s, want only the admitted request's 0.00001", res.Status.Spent)
	}

	// Settling fails: the reservation stays held, and settles later, once.
	ledger.setFail(down)
	failed("Settle", m.Settle(ctx, res, ratelimit.Usage{Requests: 1, InputTokens: 4}))
	failed("Cancel", m.Cancel(ctx, res))
	ledger.setFail(nil)
	if u, _ := m.Usage(ctx, "a", t0); u.Held != 10*ratelimit.MicroDollar || u.Requests != 0 {
		t.Errorf("usage after a failed settle: %+v, want the reservation held", u)
	}
	for range 2 {
		if err := m.Settle(ctx, res, ratelimit.Usage{Requests: 1, InputTokens: 4}); err != nil {
			t.Fatal(err)
		}
	}
	want := ratelimit.MonthUsage{Month: "2026-11", Spent: 4 * ratelimit.MicroDollar, Requests: 1, InputTokens: 4}
	if u, _ := m.Usage(ctx, "a", t0); u != want {
		t.Errorf("usage %+v, want %+v", u, want)
	}
	if got := ledger.months["2026-11"]; got["spend/a"] != 4_000 || got["held/a"] != 0 || got["requests/a"] != 1 || got["input_tokens/a"] != 4 {
		t.Errorf("ledger %v, want what memory counts", got)
	}

	// A quota: nothing taken.
	plan := ratelimit.Plan{Name: "one", Reviews: 1, Users: 1}
	ledger.setFail(down)
	_, err = m.UseQuota(ctx, ratelimit.QuotaRequest{Account: "a", Plan: plan, User: "ann", Reviews: 1}, t0)
	failed("UseQuota", err)
	ledger.setFail(nil)
	if _, err := m.UseQuota(ctx, ratelimit.QuotaRequest{Account: "a", Plan: plan, User: "bob", Reviews: 1}, t0); err != nil {
		t.Fatalf("after a failed UseQuota: %v (it took a review or a user?)", err)
	}
}

func TestDurableMemoryForeignCounter(t *testing.T) {
	ledger := newMapLedger()
	ledger.months["2026-11"] = map[string]int64{"credits/a": 5}
	m := durableOn(t, ledger)
	if _, err := m.Usage(context.Background(), "a", t0); err == nil || !strings.Contains(err.Error(), `"credits/a"`) {
		t.Fatalf("a ledger with a counter Memory did not write: %v, want an error naming it", err)
	}
}

func TestNewDurableMemoryNeedsLedger(t *testing.T) {
	if _, err := ratelimit.NewDurableMemory(nil); err == nil {
		t.Fatal("NewDurableMemory(nil) succeeded")
	}
}

// TestDurableMemoryLedgerLostReply: a ledger that applies a write and
// still fails (its reply lost) fails the call, and the Memory then counts
// what the ledger has, not what it had in memory: the cap holds on the
// spend the ledger kept.
func TestDurableMemoryLedgerLostReply(t *testing.T) {
	ctx := context.Background()
	ledger := newMapLedger()
	m := durableOn(t, ledger)
	tier := ratelimit.Tier{Name: "cap", MaxMonthlySpend: ratelimit.Dollar}
	r := ratelimit.Request{Key: "k", Account: "a", Tier: tier, MaxOutputTokens: 60, Prices: ratelimit.Prices{Output: ratelimit.Cent}}
	if _, err := m.Usage(ctx, "a", t0); err != nil { // loads the month
		t.Fatal(err)
	}
	lost := errors.New("i/o timeout")
	ledger.lost = lost
	if _, err := m.Reserve(ctx, r, t0); !errors.Is(err, lost) {
		t.Fatalf("Reserve on a ledger that lost its reply: %v, want its error", err)
	}
	ledger.lost = nil
	if u, err := m.Usage(ctx, "a", t0); err != nil || u.Spent != 60*ratelimit.Cent || u.Held != 60*ratelimit.Cent {
		t.Fatalf("usage after the lost reply: %+v, %v; want the ledger's 0.6 spent and held", u, err)
	}
	if _, err := m.Reserve(ctx, r, t0); !errors.Is(err, ratelimit.ErrSpendCap) {
		t.Fatalf("a second 0.6 on the ledger's 0.6: %v, want ErrSpendCap", err)
	}
}

// TestDurableMemoryClientGone: a caller's context cancelled while the
// call runs (a client that disconnects) does not abort the ledger write:
// the reservation is written whole, in the ledger and in memory alike.
func TestDurableMemoryClientGone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ledger := newMapLedger()
	ledger.onLoad = cancel // the client leaves while the month loads
	m := durableOn(t, ledger)
	r := ratelimit.Request{Key: "k", Account: "a", Tier: policy.Unlimited, InputTokens: 10, Prices: ratelimit.Prices{Input: ratelimit.MicroDollar}}
	if _, err := m.Reserve(ctx, r, t0); err != nil {
		t.Fatalf("Reserve by a client gone during the call: %v, want the write done", err)
	}
	ledger.onLoad = nil
	if got := ledger.months["2026-11"]; got["spend/a"] != 10_000 || got["held/a"] != 10_000 {
		t.Errorf("ledger %v, want the reservation's 0.00001 spent and held", got)
	}
	if u, err := m.Usage(context.Background(), "a", t0); err != nil || u.Spent != 10*ratelimit.MicroDollar {
		t.Errorf("usage %+v, %v; want 0.00001 spent", u, err)
	}
}
