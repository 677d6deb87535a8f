package account_test

import (
	"path/filepath"
	"testing"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/account/accounttest"
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
