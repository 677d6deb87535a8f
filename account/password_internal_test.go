package account

import (
	"errors"
	"strings"
	"testing"
)

// TestPasswordIterations checks that New defaults to 600,000 iterations,
// that each hash keeps its own count (so a changed setting leaves
// passwords valid), and that stored passwords are hashes.
func TestPasswordIterations(t *testing.T) {
	ctx := t.Context()
	s := NewMemory()
	def, err := New(ctx, Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	if def.iterations != DefaultPasswordIterations || DefaultPasswordIterations != 600_000 {
		t.Fatalf("default iterations = %d", def.iterations)
	}
	if _, err := New(ctx, Config{Store: s, PasswordIterations: -1}); err == nil {
		t.Fatal("New accepted -1 iterations")
	}
	a, err := New(ctx, Config{Store: s, PasswordIterations: 1_000})
	if err != nil {
		t.Fatal(err)
	}
	const password = "a long enough password"
	acct, err := a.CreateAccount(ctx, NewAccount{Name: "x", Owner: "x@example.com", Password: password})
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.getAccount(ctx, acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Password, "pbkdf2-sha256$1000$") || strings.Contains(r.Password, password) {
		t.Fatalf("stored password %q", r.Password)
	}
	b, err := New(ctx, Config{Store: s, PasswordIterations: 2_000})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Login(ctx, "", "x@example.com", password); err != nil {
		t.Fatalf("Login with another iterations setting: %v", err)
	}
	if _, _, err := b.Login(ctx, "", "x@example.com", password+"!"); !errors.Is(err, ErrInvalidLogin) {
		t.Fatalf("wrong password: %v", err)
	}
	// Two hashes of one password differ (random salt).
	h1, _ := hashPassword(password, 10)
	h2, _ := hashPassword(password, 10)
	if h1 == h2 || !checkPassword(h1, password) || !checkPassword(h2, password) || checkPassword(h1, "other") {
		t.Fatalf("hashes %q, %q", h1, h2)
	}
	for _, bad := range []string{"", "pbkdf2-sha256$0$AAAA$AAAA", "md5$1$a$b", dummyPassword(10)} {
		if checkPassword(bad, password) {
			t.Errorf("checkPassword(%q) accepted", bad)
		}
	}
}
