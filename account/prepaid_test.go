package account_test

import (
	"errors"
	"testing"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// prepaidEnv is an Accounts under prepaid billing on a fake clock, and
// its Limiter around an in-memory one.
type prepaidEnv struct {
	a     *account.Accounts
	inner *ratelimit.Memory
	l     ratelimit.Limiter
	now   time.Time
}

func newPrepaid(t *testing.T) *prepaidEnv {
	t.Helper()
	e := &prepaidEnv{inner: ratelimit.NewMemory(), now: time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)}
	var err error
	e.a, err = account.New(t.Context(), account.Config{Store: account.NewMemory(), Billing: account.Prepaid,
		PasswordIterations: 1_000, Now: func() time.Time { return e.now }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.a.CreateAccount(t.Context(), account.NewAccount{ID: "acct_p", Name: "Prepaid"}); err != nil {
		t.Fatal(err)
	}
	e.l = e.a.Limiter(e.inner)
	return e
}

// request is one request of acct_p's key at its tier now, whose
// maximum cost is out output tokens at 1 USD each.
func (e *prepaidEnv) request(t *testing.T, out int64) ratelimit.Request {
	t.Helper()
	a, err := e.a.Account(t.Context(), "acct_p")
	if err != nil {
		t.Fatal(err)
	}
	return ratelimit.Request{Key: "key_p", Account: "acct_p", Tier: a.Tier(), MaxOutputTokens: out,
		Prices: ratelimit.Prices{Output: ratelimit.Dollar}}
}

// balance returns acct_p's balance and held amount.
func (e *prepaidEnv) balance(t *testing.T) (ratelimit.Money, ratelimit.Money) {
	t.Helper()
	a, err := e.a.Account(t.Context(), "acct_p")
	if err != nil {
		t.Fatal(err)
	}
	return a.Balance(), a.Held
}

// refusedFor checks that err is a prepaid refusal of limit.
func refusedFor(t *testing.T, err error, limit string) {
	t.Helper()
	var le *ratelimit.Error
	if !errors.As(err, &le) || !errors.Is(err, ratelimit.ErrNoCredit) || le.Limit != limit {
		t.Fatalf("got %v, want a refusal of %s (ErrNoCredit)", err, limit)
	}
}

func (e *prepaidEnv) buy(t *testing.T, id string, usd int64) {
	t.Helper()
	if _, err := e.a.AddCredits(t.Context(), account.Purchase{ID: id, Account: "acct_p", Amount: ratelimit.Money(usd) * ratelimit.Dollar}); err != nil {
		t.Fatal(err)
	}
}

// Postpaid billing, the default, leaves the limiter as it is, and every
// account has a tier.
func TestPostpaidLimiter(t *testing.T) {
	a, err := account.New(t.Context(), account.Config{Store: account.NewMemory(), PasswordIterations: 1_000})
	if err != nil {
		t.Fatal(err)
	}
	inner := ratelimit.NewMemory()
	if a.Billing() != account.Postpaid || a.Limiter(inner) != ratelimit.Limiter(inner) {
		t.Fatalf("billing %q: the limiter is wrapped", a.Billing())
	}
	acct, err := a.Account(t.Context(), account.DefaultAccount)
	if err != nil {
		t.Fatal(err)
	}
	if acct.Tier().Name != policy.Default.Name || acct.Balance() != 0 {
		t.Fatalf("an account without purchases: tier %q, balance %s", acct.Tier().Name, acct.Balance())
	}
	if _, err := account.New(t.Context(), account.Config{Store: account.NewMemory(), Billing: "credit"}); err == nil {
		t.Fatal("Billing \"credit\" was accepted")
	}
}

// Under prepaid billing an account has no tier and is refused until its
// purchases reach the first tier; each request then holds its maximum
// cost, settles on its real cost, and one the balance cannot pay is
// refused with its reservation of the inner limiter undone; a purchase
// tops the balance up at once.
func TestPrepaidBalance(t *testing.T) {
	ctx := t.Context()
	e := newPrepaid(t)
	if a, _ := e.a.Account(ctx, "acct_p"); a.Tier().Name != "" {
		t.Fatalf("no purchase: tier %q, want none", a.Tier().Name)
	}
	_, err := e.l.Reserve(ctx, e.request(t, 1), e.now)
	refusedFor(t, err, ratelimit.LimitTier)
	e.buy(t, "pay_1", 2) // below Default's 5 USD: still no tier
	_, err = e.l.Reserve(ctx, e.request(t, 1), e.now)
	refusedFor(t, err, ratelimit.LimitTier)
	e.buy(t, "pay_2", 4)
	if a, _ := e.a.Account(ctx, "acct_p"); a.Tier().Name != policy.Default.Name || a.Balance() != 6*ratelimit.Dollar {
		t.Fatalf("after 6 USD: tier %q, balance %s", a.Tier().Name, a.Balance())
	}

	// 4 USD held, 3 drawn.
	res, err := e.l.Reserve(ctx, e.request(t, 4), e.now)
	if err != nil {
		t.Fatal(err)
	}
	if b, h := e.balance(t); b != 2*ratelimit.Dollar || h != 4*ratelimit.Dollar {
		t.Fatalf("holding 4 USD: balance %s, held %s", b, h)
	}
	// What is left cannot pay for 3 USD: refused, and the inner
	// limiter holds nothing of it.
	_, err = e.l.Reserve(ctx, e.request(t, 3), e.now)
	refusedFor(t, err, ratelimit.LimitBalance)
	if u, _ := e.inner.Usage(ctx, "acct_p", e.now); u.Held != 4*ratelimit.Dollar {
		t.Fatalf("the inner limiter holds %s, want only the admitted 4 USD", u.Held)
	}
	for range 2 { // settling twice draws once
		if err := e.l.Settle(ctx, res, ratelimit.Usage{Requests: 1, OutputTokens: 3}); err != nil {
			t.Fatal(err)
		}
	}
	if b, h := e.balance(t); b != 3*ratelimit.Dollar || h != 0 {
		t.Fatalf("after a settlement of 3 USD: balance %s, held %s", b, h)
	}

	// A cancelled request draws nothing; exactly the balance passes.
	res, err = e.l.Reserve(ctx, e.request(t, 3), e.now)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.l.Cancel(ctx, res); err != nil {
		t.Fatal(err)
	}
	if b, _ := e.balance(t); b != 3*ratelimit.Dollar {
		t.Fatalf("after a cancel: balance %s", b)
	}
	res, err = e.l.Reserve(ctx, e.request(t, 3), e.now)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.l.Settle(ctx, res, ratelimit.Usage{Requests: 1, OutputTokens: 3}); err != nil {
		t.Fatal(err)
	}
	if b, _ := e.balance(t); b != 0 {
		t.Fatalf("after spending it all: balance %s", b)
	}
	_, err = e.l.Reserve(ctx, e.request(t, 1), e.now)
	refusedFor(t, err, ratelimit.LimitBalance)
	// Free requests still pass an empty balance.
	if _, err := e.l.Reserve(ctx, e.request(t, 0), e.now); err != nil {
		t.Fatalf("a free request on an empty balance: %v", err)
	}
	e.buy(t, "pay_3", 1)
	if _, err := e.l.Reserve(ctx, e.request(t, 1), e.now); err != nil {
		t.Fatalf("after a purchase: %v", err)
	}
}

// A hold whose process died gives its cost back after ratelimit.Lease,
// at the account's next Reserve; a Settle after that draws its real
// cost once.
func TestPrepaidLease(t *testing.T) {
	ctx := t.Context()
	e := newPrepaid(t)
	e.buy(t, "pay_1", 5)
	res, err := e.l.Reserve(ctx, e.request(t, 5), e.now)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.l.Reserve(ctx, e.request(t, 1), e.now)
	refusedFor(t, err, ratelimit.LimitBalance)
	e.now = e.now.Add(ratelimit.Lease)
	other, err := e.l.Reserve(ctx, e.request(t, 1), e.now)
	if err != nil {
		t.Fatalf("after the lease: %v", err)
	}
	if err := e.l.Cancel(ctx, other); err != nil {
		t.Fatal(err)
	}
	if b, h := e.balance(t); b != 5*ratelimit.Dollar || h != 0 {
		t.Fatalf("the lapsed hold: balance %s, held %s", b, h)
	}
	for range 2 {
		if err := e.l.Settle(ctx, res, ratelimit.Usage{Requests: 1, OutputTokens: 2}); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := e.balance(t); b != 3*ratelimit.Dollar {
		t.Fatalf("a late settlement of 2 USD: balance %s", b)
	}
}
