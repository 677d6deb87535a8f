package account_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/ratelimit"
)

// TestBoltRestart checks that a server restarted on the same file keeps
// its accounts, keys (with their ids), credits, plans and monthly
// counters, and what was revoked stays revoked.
func TestBoltRestart(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "accounts.db")
	now := time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }

	s, err := account.OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := account.New(ctx, account.Config{Store: s, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := a.CreateAccount(ctx, account.NewAccount{Name: "Durable"})
	if err != nil {
		t.Fatal(err)
	}
	key, secret, err := a.CreateKey(ctx, acct.ID, "kept")
	if err != nil {
		t.Fatal(err)
	}
	revoked, revokedSecret, err := a.CreateKey(ctx, acct.ID, "revoked")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.RevokeKey(ctx, acct.ID, revoked.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddCredits(ctx, account.Purchase{ID: "pay_1", Account: acct.ID, Amount: 40 * ratelimit.Dollar}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.StartTrial(ctx, acct.ID, "team"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Subscribe(ctx, acct.ID, "growth"); err != nil {
		t.Fatal(err)
	}
	if err := account.Ledger(s).Add(ctx, "2026-11", map[string]int64{"spend:" + acct.ID: 1_234}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = account.OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := account.New(ctx, account.Config{Store: s, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if b.KeyID(secret) != key.ID {
		t.Fatalf("KeyID after restart = %s, want %s", b.KeyID(secret), key.ID)
	}
	p, err := b.Authenticate(ctx, secret)
	if err != nil {
		t.Fatalf("the key after restart: %v", err)
	}
	if p.Key.ID != key.ID || p.Account.ID != acct.ID {
		t.Fatalf("Authenticate after restart = %+v", p)
	}
	if _, err := b.Authenticate(ctx, revokedSecret); !errors.Is(err, account.ErrInvalidKey) {
		t.Fatalf("the revoked key after restart = %v, want ErrInvalidKey", err)
	}
	got := p.Account
	if got.Name != "Durable" || got.Credits != 40*ratelimit.Dollar || got.Tier().Name != "tier2" {
		t.Fatalf("account after restart = %+v", got)
	}
	if plan, state := got.PlanAt(now.Add(30 * 24 * time.Hour)); plan.Name != "growth" || state != account.PlanActive {
		t.Fatalf("plan after restart = %s %s", plan.Name, state)
	}
	if _, err := b.StartTrial(ctx, acct.ID, "team"); !errors.Is(err, account.ErrTrialUsed) {
		t.Fatalf("the Team trial after restart = %v, want ErrTrialUsed", err)
	}
	if again, err := b.AddCredits(ctx, account.Purchase{ID: "pay_1", Account: acct.ID, Amount: 40 * ratelimit.Dollar}); err != nil || again.Credits != 40*ratelimit.Dollar {
		t.Fatalf("a retried purchase after restart: %s, %v", again.Credits, err)
	}
	keys, err := b.Keys(ctx, acct.ID)
	if err != nil || len(keys) != 1 || keys[0].ID != key.ID || keys[0].Name != "kept" {
		t.Fatalf("Keys after restart = %+v, %v", keys, err)
	}
	counters, err := account.Ledger(s).Load(ctx, "2026-11")
	if err != nil || counters["spend:"+acct.ID] != 1_234 {
		t.Fatalf("ledger after restart = %v, %v", counters, err)
	}
}
