package account_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/account"
)

// TestSecretFile checks that Config.SecretFile keeps a copy of the
// store's operator secret, puts it back into a store that lost its data
// (the keys made under it keep their ids), and refuses a store whose
// secret differs from the file's.
func TestSecretFile(t *testing.T) {
	ctx := t.Context()
	file := filepath.Join(t.TempDir(), "operator.secret")
	s := account.NewMemory()
	a, err := account.New(ctx, account.Config{Store: s, SecretFile: file})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the secret file: %v, %v; want mode 0600", fi, err)
	}
	_, key, err := a.CreateKey(ctx, account.DefaultAccount, "k")
	if err != nil {
		t.Fatal(err)
	}

	// Another store, empty (a Redis that lost everything, then a
	// restart): the file's secret, not a new one.
	fresh := account.NewMemory()
	b, err := account.New(ctx, account.Config{Store: fresh, SecretFile: file})
	if err != nil {
		t.Fatal(err)
	}
	if b.KeyID(key) != a.KeyID(key) {
		t.Fatal("a store that lost its data got a new operator secret despite the file")
	}
	// Without the file, that store now has it too.
	c, err := account.New(ctx, account.Config{Store: fresh})
	if err != nil || c.KeyID(key) != a.KeyID(key) {
		t.Fatalf("the store after the file put its secret back: %v", err)
	}

	// A store with another secret: refused, with the file named.
	other := filepath.Join(t.TempDir(), "other.secret")
	if _, err := account.New(ctx, account.Config{Store: account.NewMemory(), SecretFile: other}); err != nil {
		t.Fatal(err)
	}
	if _, err := account.New(ctx, account.Config{Store: s, SecretFile: other}); !errors.Is(err, account.ErrSecretMismatch) || !strings.Contains(err.Error(), other) {
		t.Fatalf("a store whose secret differs from the file's: %v, want ErrSecretMismatch naming the file", err)
	}
	for name, content := range map[string]string{"short": "abcd\n", "not hex": strings.Repeat("zz", 32)} {
		bad := filepath.Join(t.TempDir(), "bad")
		if err := os.WriteFile(bad, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := account.New(ctx, account.Config{Store: account.NewMemory(), SecretFile: bad}); err == nil || !strings.Contains(err.Error(), "SecretFile") {
			t.Errorf("%s secret file: %v, want an error naming SecretFile", name, err)
		}
	}
	if _, err := account.New(ctx, account.Config{Store: s, SecretFile: file, Secret: make([]byte, 32)}); err == nil {
		t.Error("New took both Secret and SecretFile")
	}
}
