package account_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/account/accounttest"
	"github.com/inferkit/inferkit/ratelimit"
)

func TestMemory(t *testing.T) {
	accounttest.Run(t, func(t *testing.T) account.Store { return account.NewMemory() })
}

func TestBolt(t *testing.T) {
	accounttest.Run(t, func(t *testing.T) account.Store {
		s, err := account.OpenBolt(filepath.Join(t.TempDir(), "accounts.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
		return s
	})
}

// TestArgError: every refused argument is an *ArgError that names it as
// the admin API's fields do, and says whether it is missing.
func TestArgError(t *testing.T) {
	ctx := t.Context()
	a, err := account.New(ctx, account.Config{Store: account.NewMemory(), PasswordIterations: 1_000})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 101)
	for _, tc := range []struct {
		name    string
		call    func() error
		arg     string
		missing bool
	}{
		{"empty name", func() error { _, err := a.CreateAccount(ctx, account.NewAccount{Name: " "}); return err }, "name", true},
		{"long name", func() error { _, err := a.CreateAccount(ctx, account.NewAccount{Name: long}); return err }, "name", false},
		{"bad id", func() error { _, err := a.CreateAccount(ctx, account.NewAccount{ID: "a/b", Name: "A"}); return err }, "id", false},
		{"owner without password", func() error {
			_, err := a.CreateAccount(ctx, account.NewAccount{Name: "A", Owner: "a@b.test"})
			return err
		}, "password", true},
		{"password without owner", func() error {
			_, err := a.CreateAccount(ctx, account.NewAccount{Name: "A", Password: "long enough password"})
			return err
		}, "owner", true},
		{"bad owner", func() error {
			_, err := a.CreateAccount(ctx, account.NewAccount{Name: "A", Owner: "nobody", Password: "long enough password"})
			return err
		}, "owner", false},
		{"short password", func() error {
			_, err := a.CreateAccount(ctx, account.NewAccount{Name: "A", Owner: "a@b.test", Password: "short"})
			return err
		}, "password", false},
		{"key name", func() error { _, _, err := a.CreateKey(ctx, account.DefaultAccount, ""); return err }, "name", true},
		{"tier", func() error { _, err := a.SetTier(ctx, account.DefaultAccount, "gold"); return err }, "tier", false},
		{"plan", func() error { _, err := a.Subscribe(ctx, account.DefaultAccount, "gold"); return err }, "plan", false},
		{"purchase id", func() error {
			_, err := a.AddCredits(ctx, account.Purchase{Account: account.DefaultAccount, Amount: ratelimit.Dollar})
			return err
		}, "id", true},
		{"amount", func() error {
			_, err := a.AddCredits(ctx, account.Purchase{ID: "p", Account: account.DefaultAccount})
			return err
		}, "amount", false},
	} {
		err := tc.call()
		var arg *account.ArgError
		if !errors.As(err, &arg) || !errors.Is(err, account.ErrInvalid) || arg.Arg != tc.arg || arg.Missing != tc.missing {
			t.Errorf("%s: %v (%+v), want an ArgError of %q, missing %v", tc.name, err, arg, tc.arg, tc.missing)
		}
	}
}
