// Package accounttest checks an account.Store: the semantics every Store
// must have (reads, atomic updates from racing goroutines, deletion,
// ordered listing by prefix, values with a TTL), and the behaviour of
// account.Accounts on it, including two Accounts sharing one store as
// replicas do. Implementations call Run from their tests.
package accounttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// Run runs the suite. newStore returns an empty store for one subtest;
// it closes what it opens with t.Cleanup.
func Run(t *testing.T, newStore func(t *testing.T) account.Store) {
	t.Run("Store", func(t *testing.T) { testStore(t, newStore) })
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s account.Store)
	}{
		{"DefaultAccount", testDefaultAccount},
		{"Accounts", testAccounts},
		{"Keys", testKeys},
		{"Replicas", testReplicas},
		{"LastUsed", testLastUsed},
		{"StaticKeys", testStaticKeys},
		{"Credits", testCredits},
		{"ConcurrentCredits", testConcurrentCredits},
		{"Tier", testTier},
		{"Plans", testPlans},
		{"Sessions", testSessions},
		{"LoginLock", testLoginLock},
		{"LoginLockPerClient", testLoginLockPerClient},
		{"PaymentAcrossAccounts", testPaymentAcrossAccounts},
		{"StoreLostData", testStoreLostData},
		{"Ledger", testLedger},
		{"PrepaidConcurrent", testPrepaidConcurrent},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

// fakeClock is a settable clock for Config.Now, safe for concurrent use.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// newClock returns a fakeClock at t.
func newClock(t time.Time) *fakeClock { return &fakeClock{now: t} }

// Now returns the clock's time.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// start is the suite's clock's start: a UTC time with seconds, so that
// LastUsed's truncation to the minute shows.
var start = time.Date(2026, 11, 14, 12, 0, 30, 0, time.UTC)

// passwordIterations keeps the suite's password hashes cheap (the race
// detector makes the default's a matter of seconds).
const passwordIterations = 1_000

// newAccounts returns Accounts on s with the store's secret and clock.
func newAccounts(t *testing.T, s account.Store, clock *fakeClock, static ...string) *account.Accounts {
	t.Helper()
	a, err := account.New(t.Context(), account.Config{Store: s, Now: clock.Now, StaticKeys: static, PasswordIterations: passwordIterations})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// must fails the test on err.
func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func testStore(t *testing.T, newStore func(t *testing.T) account.Store) {
	ctx := t.Context()
	set := func(t *testing.T, s account.Store, key, value string, ttl time.Duration) {
		t.Helper()
		if err := s.Update(ctx, key, ttl, func([]byte) ([]byte, error) { return []byte(value), nil }); err != nil {
			t.Fatal(err)
		}
	}
	get := func(t *testing.T, s account.Store, key string) string {
		t.Helper()
		v, err := s.Get(ctx, key)
		if err != nil {
			t.Fatalf("Get(%q): %v", key, err)
		}
		return string(v)
	}

	t.Run("GetMissing", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.Get(ctx, "missing"); !errors.Is(err, account.ErrNotFound) {
			t.Fatalf("Get(missing) = %v, want ErrNotFound", err)
		}
	})

	t.Run("Update", func(t *testing.T) {
		s := newStore(t)
		var olds []string
		record := func(v string) func([]byte) ([]byte, error) {
			return func(old []byte) ([]byte, error) {
				if old == nil {
					olds = append(olds, "<nil>")
				} else {
					olds = append(olds, string(old))
				}
				if v == "<nil>" {
					return nil, nil
				}
				return []byte(v), nil
			}
		}
		for _, v := range []string{"one", "two", "<nil>", "three", ""} {
			olds = nil
			if err := s.Update(ctx, "k", 0, record(v)); err != nil {
				t.Fatal(err)
			}
		}
		// An empty value is a value, not an absent key.
		if got := get(t, s, "k"); got != "" {
			t.Fatalf("Get = %q, want the empty value", got)
		}
		if got := olds[len(olds)-1]; got != "three" {
			t.Fatalf("last Update saw %q, want three", got)
		}
		olds = nil
		if err := s.Update(ctx, "k", 0, record("four")); err != nil {
			t.Fatal(err)
		}
		if olds[len(olds)-1] != "" {
			t.Fatalf("Update after an empty value saw %q, want the empty value", olds[len(olds)-1])
		}

		// A deleted key reads as absent, and fn sees nil.
		if err := s.Update(ctx, "k", 0, record("<nil>")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "k"); !errors.Is(err, account.ErrNotFound) {
			t.Fatalf("Get after delete = %v, want ErrNotFound", err)
		}
		olds = nil
		if err := s.Update(ctx, "k", 0, record("<nil>")); err != nil {
			t.Fatalf("deleting an absent key: %v", err)
		}
		if olds[len(olds)-1] != "<nil>" {
			t.Fatalf("Update of an absent key saw %q, want nil", olds[len(olds)-1])
		}

		// fn's error aborts the update and is returned.
		set(t, s, "k", "kept", 0)
		errFn := errors.New("fn failed")
		err := s.Update(ctx, "k", 0, func([]byte) ([]byte, error) { return []byte("lost"), errFn })
		if !errors.Is(err, errFn) {
			t.Fatalf("Update = %v, want fn's error", err)
		}
		if got := get(t, s, "k"); got != "kept" {
			t.Fatalf("after a failed Update, Get = %q, want kept", got)
		}

		// Values are copies: changing what Get returned or what fn saw
		// changes nothing stored.
		v := must[[]byte](t)(s.Get(ctx, "k"))
		copy(v, "XXXX")
		if err := s.Update(ctx, "k", 0, func(old []byte) ([]byte, error) {
			copy(old, "YYYY")
			return nil, errFn
		}); !errors.Is(err, errFn) {
			t.Fatal(err)
		}
		if got := get(t, s, "k"); got != "kept" {
			t.Fatalf("Get = %q after changing returned slices, want kept", got)
		}
	})

	t.Run("List", func(t *testing.T) {
		s := newStore(t)
		keys := []string{"a/2", "a/10", "a/1", "a", "ab/1", "b/1", "g*1", "g?2", "g[3]", "gx", `g\4`}
		for _, k := range keys {
			set(t, s, k, "v", 0)
		}
		for _, tc := range []struct {
			prefix string
			want   []string
		}{
			{"a/", []string{"a/1", "a/10", "a/2"}},
			{"a", []string{"a", "a/1", "a/10", "a/2", "ab/1"}},
			{"b/", []string{"b/1"}},
			{"c/", nil},
			{"g*", []string{"g*1"}},
			{"g?", []string{"g?2"}},
			{"g[", []string{"g[3]"}},
			{`g\`, []string{`g\4`}},
			{"", slices.Sorted(slices.Values(keys))},
		} {
			got := must[[]string](t)(s.List(ctx, tc.prefix))
			if !slices.Equal(got, tc.want) {
				t.Errorf("List(%q) = %q, want %q", tc.prefix, got, tc.want)
			}
		}
		if err := s.Update(ctx, "a/10", 0, func([]byte) ([]byte, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
		if got := must[[]string](t)(s.List(ctx, "a/")); !slices.Equal(got, []string{"a/1", "a/2"}) {
			t.Errorf("List(a/) after deleting a/10 = %q", got)
		}
	})

	t.Run("TTL", func(t *testing.T) {
		// Expiry itself runs on each store's clock and is tested by each
		// implementation; here, a value with a TTL is a value until then,
		// and a later Update without one keeps it.
		s := newStore(t)
		set(t, s, "s", "v", time.Hour)
		if got := get(t, s, "s"); got != "v" {
			t.Fatalf("Get = %q, want v", got)
		}
		if got := must[[]string](t)(s.List(ctx, "s")); !slices.Equal(got, []string{"s"}) {
			t.Fatalf("List = %q", got)
		}
		set(t, s, "s", "w", 0)
		if got := get(t, s, "s"); got != "w" {
			t.Fatalf("Get = %q, want w", got)
		}
	})

	t.Run("ConcurrentUpdates", func(t *testing.T) {
		s := newStore(t)
		const n = 50
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				err := s.Update(ctx, "counter", 0, func(old []byte) ([]byte, error) {
					c := 0
					if old != nil {
						var err error
						if c, err = strconv.Atoi(string(old)); err != nil {
							return nil, err
						}
					}
					return []byte(strconv.Itoa(c + 1)), nil
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got := get(t, s, "counter"); got != strconv.Itoa(n) {
			t.Fatalf("counter = %s after %d concurrent increments", got, n)
		}
	})

	t.Run("Canceled", func(t *testing.T) {
		s := newStore(t)
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		err := s.Update(ctx, "k", 0, func([]byte) ([]byte, error) { return []byte("v"), nil })
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Update on a canceled context = %v, want context.Canceled", err)
		}
		if _, err := s.Get(t.Context(), "k"); !errors.Is(err, account.ErrNotFound) {
			t.Fatalf("Get after a canceled Update = %v, want ErrNotFound", err)
		}
	})
}

func testDefaultAccount(t *testing.T, s account.Store) {
	clock := newClock(start)
	a := newAccounts(t, s, clock)
	acct := must[account.Account](t)(a.Account(t.Context(), account.DefaultAccount))
	if acct.ID != account.DefaultAccount || acct.Name != "Default" || !acct.Created.Equal(start) {
		t.Fatalf("default account = %+v", acct)
	}
	// A second Accounts keeps it as it is.
	clock.Advance(time.Hour)
	newAccounts(t, s, clock)
	if again := must[account.Account](t)(a.Account(t.Context(), account.DefaultAccount)); !again.Created.Equal(start) {
		t.Fatalf("default account made again: %+v", again)
	}
}

func testAccounts(t *testing.T, s account.Store) {
	ctx := t.Context()
	a := newAccounts(t, s, newClock(start))
	made := must[account.Account](t)(a.CreateAccount(ctx, account.NewAccount{Name: "Ada", Owner: "ada@example.com", Password: "correct horse battery"}))
	if !strings.HasPrefix(made.ID, "acct_") || len(made.ID) < len("acct_")+16 || made.Name != "Ada" || made.Owner != "ada@example.com" || !made.Created.Equal(start) {
		t.Fatalf("CreateAccount = %+v", made)
	}
	if got := must[account.Account](t)(a.Account(ctx, made.ID)); got.ID != made.ID || got.Name != "Ada" {
		t.Fatalf("Account = %+v", got)
	}
	named := must[account.Account](t)(a.CreateAccount(ctx, account.NewAccount{ID: "team-b", Name: "Team B"}))
	if named.ID != "team-b" || named.Owner != "" {
		t.Fatalf("CreateAccount(team-b) = %+v", named)
	}
	list := must[[]account.Account](t)(a.List(ctx))
	ids := make([]string, len(list))
	for i, acct := range list {
		ids[i] = acct.ID
	}
	if want := slices.Sorted(slices.Values([]string{account.DefaultAccount, made.ID, "team-b"})); !slices.Equal(ids, want) {
		t.Fatalf("List = %q, want %q", ids, want)
	}

	for _, tc := range []struct {
		name string
		n    account.NewAccount
		want error
	}{
		{"taken id", account.NewAccount{ID: "team-b", Name: "x"}, account.ErrExists},
		{"default id", account.NewAccount{ID: account.DefaultAccount, Name: "x"}, account.ErrExists},
		{"taken owner", account.NewAccount{Name: "x", Owner: "ADA@example.com", Password: "another password"}, account.ErrExists},
		{"no name", account.NewAccount{Name: ""}, account.ErrInvalid},
		{"blank name", account.NewAccount{Name: "   "}, account.ErrInvalid},
		{"long name", account.NewAccount{Name: strings.Repeat("n", 101)}, account.ErrInvalid},
		{"bad id", account.NewAccount{ID: "a/b", Name: "x"}, account.ErrInvalid},
		{"owner without password", account.NewAccount{Name: "x", Owner: "x@example.com"}, account.ErrInvalid},
		{"password without owner", account.NewAccount{Name: "x", Password: "long enough password"}, account.ErrInvalid},
		{"short password", account.NewAccount{Name: "x", Owner: "x@example.com", Password: "short"}, account.ErrInvalid},
		{"owner not an address", account.NewAccount{Name: "x", Owner: "nobody", Password: "long enough password"}, account.ErrInvalid},
	} {
		if _, err := a.CreateAccount(ctx, tc.n); !errors.Is(err, tc.want) {
			t.Errorf("%s: CreateAccount = %v, want %v", tc.name, err, tc.want)
		}
	}
	// A refused owner left no account behind.
	if got := must[[]account.Account](t)(a.List(ctx)); len(got) != 3 {
		t.Fatalf("after refused creations, List has %d accounts, want 3", len(got))
	}
	if _, err := a.CreateAccount(ctx, account.NewAccount{Name: strings.Repeat("é", 100)}); err != nil {
		t.Fatalf("a 100-character name: %v", err)
	}
	if _, err := a.Account(ctx, "acct_missing"); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("Account(missing) = %v, want ErrNotFound", err)
	}
}

func testKeys(t *testing.T, s account.Store) {
	ctx := t.Context()
	clock := newClock(start)
	a := newAccounts(t, s, clock)
	other := must[account.Account](t)(a.CreateAccount(ctx, account.NewAccount{Name: "Other"}))

	k1, secret1, err := a.CreateKey(ctx, account.DefaultAccount, "first")
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	k2, secret2, err := a.CreateKey(ctx, account.DefaultAccount, "second")
	if err != nil {
		t.Fatal(err)
	}
	ko, secretO, err := a.CreateKey(ctx, other.ID, "other's")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		k      account.Key
		secret string
	}{{k1, secret1}, {k2, secret2}, {ko, secretO}} {
		if !strings.HasPrefix(tc.secret, "sk-ik-") || len(tc.secret) < len("sk-ik-")+26 {
			t.Errorf("secret %q... is not sk-ik- and 26 random characters", tc.secret[:8])
		}
		if !strings.HasPrefix(tc.k.ID, "key_") || len(tc.k.ID) != len("key_")+16 || tc.k.ID != a.KeyID(tc.secret) {
			t.Errorf("key id %q, KeyID %q", tc.k.ID, a.KeyID(tc.secret))
		}
		rest := tc.secret[len("sk-ik-"):]
		if want := "sk-ik-" + rest[:2] + "…" + rest[len(rest)-4:]; tc.k.Hint != want {
			t.Errorf("hint %q, want %q", tc.k.Hint, want)
		}
		if strings.Contains(tc.k.ID, rest[:6]) {
			t.Errorf("key id %q shows the secret", tc.k.ID)
		}
	}
	if secret1 == secret2 || k1.ID == k2.ID {
		t.Fatal("two keys alike")
	}
	if k1.Account != account.DefaultAccount || k1.Name != "first" || !k1.Created.Equal(start) || !k1.LastUsed.IsZero() || k1.Static {
		t.Fatalf("CreateKey = %+v", k1)
	}

	keys := must[[]account.Key](t)(a.Keys(ctx, account.DefaultAccount))
	if len(keys) != 2 || keys[0] != k1 || keys[1] != k2 {
		t.Fatalf("Keys = %+v, want the two keys by creation", keys)
	}
	if got := must[account.Key](t)(a.Key(ctx, ko.ID)); got != ko {
		t.Fatalf("Key = %+v, want %+v", got, ko)
	}

	p := must[account.Principal](t)(a.Authenticate(ctx, secretO))
	if p.Key.ID != ko.ID || p.Account.ID != other.ID || p.Account.Name != "Other" {
		t.Fatalf("Authenticate = %+v", p)
	}
	for _, bad := range []string{"", "sk-ik-", secret1 + "x", secret1[:len(secret1)-1], strings.ToLower(secret1), "Bearer " + secret1} {
		if _, err := a.Authenticate(ctx, bad); !errors.Is(err, account.ErrInvalidKey) {
			t.Errorf("Authenticate(a wrong key) = %v, want ErrInvalidKey", err)
		}
	}

	// Revocation: another account cannot; the owner can, once.
	if err := a.RevokeKey(ctx, other.ID, k1.ID); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("RevokeKey by another account = %v, want ErrNotFound", err)
	}
	if err := a.RevokeKey(ctx, account.DefaultAccount, k1.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(ctx, secret1); !errors.Is(err, account.ErrInvalidKey) {
		t.Fatalf("Authenticate(revoked) = %v, want ErrInvalidKey", err)
	}
	if err := a.RevokeKey(ctx, account.DefaultAccount, k1.ID); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("RevokeKey twice = %v, want ErrNotFound", err)
	}
	if _, err := a.Key(ctx, k1.ID); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("Key(revoked) = %v, want ErrNotFound", err)
	}
	if keys := must[[]account.Key](t)(a.Keys(ctx, account.DefaultAccount)); len(keys) != 1 || keys[0].ID != k2.ID {
		t.Fatalf("Keys after revoking = %+v", keys)
	}
	// "" matches any account.
	if err := a.RevokeKey(ctx, "", ko.ID); err != nil {
		t.Fatal(err)
	}
	if keys := must[[]account.Key](t)(a.Keys(ctx, other.ID)); len(keys) != 0 {
		t.Fatalf("Keys after revoking = %+v", keys)
	}
	if _, err := a.Authenticate(ctx, secret2); err != nil {
		t.Fatalf("the key left: %v", err)
	}

	for _, name := range []string{"", " ", strings.Repeat("k", 101), "a\nb"} {
		if _, _, err := a.CreateKey(ctx, account.DefaultAccount, name); !errors.Is(err, account.ErrInvalid) {
			t.Errorf("CreateKey(name %q) = %v, want ErrInvalid", name, err)
		}
	}
	if _, _, err := a.CreateKey(ctx, "acct_missing", "k"); !errors.Is(err, account.ErrNotFound) {
		t.Errorf("CreateKey(missing account) = %v, want ErrNotFound", err)
	}
	if _, err := a.Keys(ctx, "acct_missing"); !errors.Is(err, account.ErrNotFound) {
		t.Errorf("Keys(missing account) = %v, want ErrNotFound", err)
	}
}

func testReplicas(t *testing.T, s account.Store) {
	ctx := t.Context()
	clock := newClock(start)
	a1, a2 := newAccounts(t, s, clock), newAccounts(t, s, clock)
	k, secret, err := a1.CreateKey(ctx, account.DefaultAccount, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if a2.KeyID(secret) != k.ID {
		t.Fatalf("KeyID differs across Accounts sharing the store: %s, %s", a2.KeyID(secret), k.ID)
	}
	if p, err := a2.Authenticate(ctx, secret); err != nil || p.Key.ID != k.ID {
		t.Fatalf("Authenticate on the other Accounts = %+v, %v", p, err)
	}
	if _, err := a1.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if err := a2.RevokeKey(ctx, account.DefaultAccount, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a1.Authenticate(ctx, secret); !errors.Is(err, account.ErrInvalidKey) {
		t.Fatalf("Authenticate on one Accounts after revoking on the other = %v, want ErrInvalidKey", err)
	}

	// Credits bought through one unlock the tier on the other.
	if _, err := a1.AddCredits(ctx, account.Purchase{ID: "p1", Account: account.DefaultAccount, Amount: 40 * ratelimit.Dollar}); err != nil {
		t.Fatal(err)
	}
	if got := must[account.Account](t)(a2.Account(ctx, account.DefaultAccount)).Tier(); got.Name != policy.Tier2.Name {
		t.Fatalf("tier on the other Accounts = %s, want tier2", got.Name)
	}

	// An explicit secret differs from the store's: ids differ, and the
	// store's keys are not this Accounts' keys.
	a3, err := account.New(ctx, account.Config{Store: s, Secret: bytes.Repeat([]byte{7}, 32), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	_, secret2, err := a1.CreateKey(ctx, account.DefaultAccount, "store secret")
	if err != nil {
		t.Fatal(err)
	}
	if a3.KeyID(secret2) == a1.KeyID(secret2) {
		t.Fatal("KeyID is the same under another secret")
	}
	if _, err := a3.Authenticate(ctx, secret2); !errors.Is(err, account.ErrInvalidKey) {
		t.Fatalf("Authenticate under another secret = %v, want ErrInvalidKey", err)
	}
	if _, err := account.New(ctx, account.Config{Store: s, Secret: make([]byte, 31)}); err == nil {
		t.Fatal("New accepted a 31-byte secret")
	}
	if _, err := account.New(ctx, account.Config{}); err == nil {
		t.Fatal("New accepted no store")
	}
}

func testLastUsed(t *testing.T, s account.Store) {
	ctx := t.Context()
	clock := newClock(start)
	a := newAccounts(t, s, clock)
	k, secret, err := a.CreateKey(ctx, account.DefaultAccount, "k")
	if err != nil {
		t.Fatal(err)
	}
	minute := start.Truncate(time.Minute)
	for _, step := range []struct {
		advance      time.Duration
		before, want time.Time
	}{
		{0, time.Time{}, minute},
		{20 * time.Second, minute, minute}, // same minute (12:00:50)
		{20 * time.Second, minute, minute.Add(time.Minute)},
		{5 * time.Minute, minute.Add(time.Minute), minute.Add(6 * time.Minute)},
	} {
		clock.Advance(step.advance)
		p := must[account.Principal](t)(a.Authenticate(ctx, secret))
		if !p.Key.LastUsed.Equal(step.before) {
			t.Errorf("at %s, Principal's LastUsed = %s, want %s", clock.Now().Format(time.TimeOnly), p.Key.LastUsed, step.before)
		}
		if got := must[account.Key](t)(a.Key(ctx, k.ID)).LastUsed; !got.Equal(step.want) {
			t.Errorf("at %s, LastUsed = %s, want %s", clock.Now().Format(time.TimeOnly), got, step.want)
		}
	}
}

func testStaticKeys(t *testing.T, s account.Store) {
	ctx := t.Context()
	clock := newClock(start)
	const static = "static-flag-key-0123456789"
	a := newAccounts(t, s, clock, static)
	p, err := a.Authenticate(ctx, static)
	if err != nil {
		t.Fatal(err)
	}
	if p.Account.ID != account.DefaultAccount || !p.Key.Static || p.Key.ID != a.KeyID(static) || strings.Contains(p.Key.Hint, "0123") {
		t.Fatalf("Authenticate(static) = %+v", p)
	}
	_, secret, err := a.CreateKey(ctx, account.DefaultAccount, "stored")
	if err != nil {
		t.Fatal(err)
	}
	keys := must[[]account.Key](t)(a.Keys(ctx, account.DefaultAccount))
	if len(keys) != 2 || !keys[0].Static || keys[0].ID != p.Key.ID || keys[1].Static {
		t.Fatalf("Keys = %+v, want the static key, then the stored one", keys)
	}
	if got := must[account.Key](t)(a.Key(ctx, p.Key.ID)); !got.Static {
		t.Fatalf("Key(static) = %+v", got)
	}
	if err := a.RevokeKey(ctx, account.DefaultAccount, p.Key.ID); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("RevokeKey(static) = %v, want ErrNotFound", err)
	}
	if _, err := a.Authenticate(ctx, static); err != nil {
		t.Fatalf("a static key after RevokeKey: %v", err)
	}
	// Another Accounts on the store, configured without it, refuses it,
	// and still knows the stored key.
	b := newAccounts(t, s, clock)
	if _, err := b.Authenticate(ctx, static); !errors.Is(err, account.ErrInvalidKey) {
		t.Fatalf("a static key of another configuration = %v, want ErrInvalidKey", err)
	}
	if _, err := b.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if _, err := account.New(ctx, account.Config{Store: s, StaticKeys: []string{""}}); err == nil {
		t.Fatal("New accepted an empty static key")
	}
}

func testCredits(t *testing.T, s account.Store) {
	ctx := t.Context()
	clock := newClock(start)
	a := newAccounts(t, s, clock)
	for _, tc := range []struct {
		credits string
		tier    ratelimit.Tier
	}{
		{"0", policy.Default},
		{"4.99", policy.Default},
		{"5", policy.Default},
		{"39.99", policy.Default},
		{"40", policy.Tier2},
		{"199.99", policy.Tier2},
		{"200", policy.Tier3},
	} {
		t.Run(tc.credits, func(t *testing.T) {
			acct := must[account.Account](t)(a.CreateAccount(ctx, account.NewAccount{Name: "buyer " + tc.credits}))
			total := must[ratelimit.Money](t)(ratelimit.ParseMoney(tc.credits))
			if total > 0 {
				// Two purchases that reach the threshold together; the
				// first one again counts once. (Payment ids are unique
				// across accounts.)
				first := total / 2
				for _, p := range []account.Purchase{
					{ID: "pay_1_" + tc.credits, Account: acct.ID, Amount: first},
					{ID: "pay_1_" + tc.credits, Account: acct.ID, Amount: first},
					{ID: "pay_2_" + tc.credits, Account: acct.ID, Amount: total - first},
				} {
					acct = must[account.Account](t)(a.AddCredits(ctx, p))
				}
			}
			if acct.Credits != total {
				t.Fatalf("Credits = %s, want %s", acct.Credits, total)
			}
			if got := acct.Tier(); got.Name != tc.tier.Name {
				t.Fatalf("Tier = %s, want %s", got.Name, tc.tier.Name)
			}
			// The stored account agrees.
			if got := must[account.Account](t)(a.Account(ctx, acct.ID)); got.Credits != total || got.Tier().Name != tc.tier.Name {
				t.Fatalf("stored account: credits %s, tier %s", got.Credits, got.Tier().Name)
			}
		})
	}

	acct := must[account.Account](t)(a.CreateAccount(ctx, account.NewAccount{Name: "purchases"}))
	p1 := account.Purchase{ID: "pay_a", Account: acct.ID, Amount: 5 * ratelimit.Dollar}
	p2 := account.Purchase{ID: "pay_b", Account: acct.ID, Amount: 7 * ratelimit.Dollar, At: start.Add(-time.Hour)}
	must[account.Account](t)(a.AddCredits(ctx, p1))
	clock.Advance(time.Minute)
	must[account.Account](t)(a.AddCredits(ctx, p2))
	again := must[account.Account](t)(a.AddCredits(ctx, account.Purchase{ID: "pay_a", Account: acct.ID, Amount: 100 * ratelimit.Dollar}))
	if again.Credits != 12*ratelimit.Dollar {
		t.Fatalf("a retried purchase id changed credits to %s", again.Credits)
	}
	got := must[[]account.Purchase](t)(a.Purchases(ctx, acct.ID))
	p1.At = start // At zero means now
	if !slices.EqualFunc(got, []account.Purchase{p1, p2}, func(x, y account.Purchase) bool {
		return x.ID == y.ID && x.Account == y.Account && x.Amount == y.Amount && x.At.Equal(y.At)
	}) {
		t.Fatalf("Purchases = %+v", got)
	}

	for _, tc := range []struct {
		name string
		p    account.Purchase
		want error
	}{
		{"zero", account.Purchase{ID: "x", Account: acct.ID}, account.ErrInvalid},
		{"negative", account.Purchase{ID: "x", Account: acct.ID, Amount: -ratelimit.Dollar}, account.ErrInvalid},
		{"no id", account.Purchase{Account: acct.ID, Amount: ratelimit.Dollar}, account.ErrInvalid},
		{"no account", account.Purchase{ID: "x", Amount: ratelimit.Dollar}, account.ErrInvalid},
		{"unknown account", account.Purchase{ID: "x", Account: "acct_missing", Amount: ratelimit.Dollar}, account.ErrNotFound},
	} {
		if _, err := a.AddCredits(ctx, tc.p); !errors.Is(err, tc.want) {
			t.Errorf("%s: AddCredits = %v, want %v", tc.name, err, tc.want)
		}
	}
	if got := must[account.Account](t)(a.Account(ctx, acct.ID)).Credits; got != 12*ratelimit.Dollar {
		t.Fatalf("refused purchases changed credits to %s", got)
	}
}

func testConcurrentCredits(t *testing.T, s account.Store) {
	ctx := t.Context()
	clock := newClock(start)
	a1, a2 := newAccounts(t, s, clock), newAccounts(t, s, clock)
	acct := must[account.Account](t)(a1.CreateAccount(ctx, account.NewAccount{Name: "racer"}))
	// Ten purchases, each sent four times, through two Accounts at once.
	const purchases, retries = 10, 4
	var wg sync.WaitGroup
	for i := range purchases * retries {
		wg.Go(func() {
			a := []*account.Accounts{a1, a2}[i%2]
			p := account.Purchase{ID: fmt.Sprintf("pay_%d", i%purchases), Account: acct.ID, Amount: 5 * ratelimit.Dollar}
			if _, err := a.AddCredits(ctx, p); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got := must[account.Account](t)(a1.Account(ctx, acct.ID))
	if got.Credits != purchases*5*ratelimit.Dollar || got.Tier().Name != policy.Tier2.Name {
		t.Fatalf("credits %s, tier %s after %d purchases of 5 USD sent %d times each", got.Credits, got.Tier().Name, purchases, retries)
	}
	if ps := must[[]account.Purchase](t)(a2.Purchases(ctx, acct.ID)); len(ps) != purchases {
		t.Fatalf("%d purchases recorded, want %d", len(ps), purchases)
	}
}

func testTier(t *testing.T, s account.Store) {
	ctx := t.Context()
	a := newAccounts(t, s, newClock(start))
	acct := must[account.Account](t)(a.CreateAccount(ctx, account.NewAccount{Name: "local app"}))
	pinned := must[account.Account](t)(a.SetTier(ctx, acct.ID, "unlimited"))
	if got := pinned.Tier(); got.Name != "unlimited" || got.Requests != 0 || got.MaxMonthlySpend != 0 {
		t.Fatalf("pinned Tier = %+v, want Unlimited", got)
	}
	if got := must[account.Account](t)(a.Account(ctx, acct.ID)).Tier(); got.Name != "unlimited" {
		t.Fatalf("stored pinned Tier = %s", got.Name)
	}
	// Credits do not move a pinned tier; unpinning follows them again.
	must[account.Account](t)(a.AddCredits(ctx, account.Purchase{ID: "p", Account: acct.ID, Amount: 250 * ratelimit.Dollar}))
	if got := must[account.Account](t)(a.Account(ctx, acct.ID)).Tier(); got.Name != "unlimited" {
		t.Fatalf("pinned Tier after credits = %s", got.Name)
	}
	if got := must[account.Account](t)(a.SetTier(ctx, acct.ID, "TIER2")); got.PinnedTier != "tier2" || got.Tier().Name != "tier2" {
		t.Fatalf("SetTier(TIER2) = %+v", got)
	}
	if got := must[account.Account](t)(a.SetTier(ctx, acct.ID, "")); got.PinnedTier != "" || got.Tier().Name != "tier3" {
		t.Fatalf("unpinned: %+v, tier %s", got, got.Tier().Name)
	}
	if _, err := a.SetTier(ctx, acct.ID, "gold"); !errors.Is(err, account.ErrInvalid) {
		t.Fatalf("SetTier(gold) = %v, want ErrInvalid", err)
	}
	if _, err := a.SetTier(ctx, "acct_missing", "tier2"); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("SetTier(missing) = %v, want ErrNotFound", err)
	}
}

func testPlans(t *testing.T, s account.Store) {
	ctx := t.Context()
	clock := newClock(start)
	a := newAccounts(t, s, clock)
	acct := must[account.Account](t)(a.CreateAccount(ctx, account.NewAccount{Name: "reviewer"}))
	planAt := func(t *testing.T, acct account.Account, at time.Time, plan string, state account.PlanState) ratelimit.Plan {
		t.Helper()
		p, st := acct.PlanAt(at)
		if p.Name != plan || st != state {
			t.Fatalf("PlanAt(%s) = %s %s, want %s %s", at.Format(time.DateOnly), p.Name, st, plan, state)
		}
		return p
	}
	planAt(t, acct, start, "free", account.PlanActive)

	for _, plan := range []string{"free", "enterprise", "platinum"} {
		if _, err := a.StartTrial(ctx, acct.ID, plan); !errors.Is(err, account.ErrInvalid) {
			t.Errorf("StartTrial(%s) = %v, want ErrInvalid", plan, err)
		}
	}

	// Start: Team's quotas and features for 14 days.
	acct = must[account.Account](t)(a.StartTrial(ctx, acct.ID, "team"))
	if !acct.Plan.TrialEnds.Equal(start.Add(14*24*time.Hour)) || !acct.Plan.Since.Equal(start) {
		t.Fatalf("trial = %+v", acct.Plan)
	}
	p := planAt(t, acct, start, "team", account.PlanTrialing)
	if p.Reviews != policy.Team.Reviews || !p.Has(policy.FeatureSecurityScan) {
		t.Fatalf("trial plan = %+v, want Team's", p)
	}
	// Use: the stored account, read later on, still trials.
	clock.Advance(13 * 24 * time.Hour)
	acct = must[account.Account](t)(a.Account(ctx, acct.ID))
	planAt(t, acct, clock.Now(), "team", account.PlanTrialing)
	// Expiry: back on Free, without the feature.
	clock.Advance(24 * time.Hour)
	p = planAt(t, acct, clock.Now(), "free", account.PlanExpired)
	if p.Has(policy.FeatureSecurityScan) || p.Reviews != policy.Free.Reviews {
		t.Fatalf("expired plan = %+v, want Free", p)
	}
	if _, err := a.StartTrial(ctx, acct.ID, "team"); !errors.Is(err, account.ErrTrialUsed) {
		t.Fatalf("second Team trial = %v, want ErrTrialUsed", err)
	}
	// Growth's trial is another.
	acct = must[account.Account](t)(a.StartTrial(ctx, acct.ID, "growth"))
	planAt(t, acct, clock.Now(), "growth", account.PlanTrialing)
	if !slices.Equal(acct.Plan.Trials, []string{"team", "growth"}) {
		t.Fatalf("Trials = %q", acct.Plan.Trials)
	}
	// Subscribing ends the trial: active, and no expiry.
	acct = must[account.Account](t)(a.Subscribe(ctx, acct.ID, "Growth"))
	planAt(t, acct, clock.Now().Add(365*24*time.Hour), "growth", account.PlanActive)
	if !acct.Plan.TrialEnds.IsZero() || !slices.Equal(acct.Plan.Trials, []string{"team", "growth"}) {
		t.Fatalf("subscription = %+v", acct.Plan)
	}

	// No trial on top of an active paid plan.
	paid := must[account.Account](t)(a.CreateAccount(ctx, account.NewAccount{Name: "payer"}))
	must[account.Account](t)(a.Subscribe(ctx, paid.ID, "team"))
	if _, err := a.StartTrial(ctx, paid.ID, "growth"); !errors.Is(err, account.ErrSubscribed) {
		t.Fatalf("StartTrial on a paid plan = %v, want ErrSubscribed", err)
	}
	// Subscribing to Free puts it back, and then the trial is open.
	must[account.Account](t)(a.Subscribe(ctx, paid.ID, "free"))
	if _, err := a.StartTrial(ctx, paid.ID, "growth"); err != nil {
		t.Fatalf("StartTrial after going back to Free: %v", err)
	}
	if _, err := a.Subscribe(ctx, paid.ID, "platinum"); !errors.Is(err, account.ErrInvalid) {
		t.Fatalf("Subscribe(platinum) = %v, want ErrInvalid", err)
	}
	if _, err := a.StartTrial(ctx, "acct_missing", "team"); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("StartTrial(missing) = %v, want ErrNotFound", err)
	}
}

func testSessions(t *testing.T, s account.Store) {
	ctx := t.Context()
	clock := newClock(start)
	a, b := newAccounts(t, s, clock), newAccounts(t, s, clock)
	const owner, password = "Grace@Example.com", "a long enough password"
	acct := must[account.Account](t)(a.CreateAccount(ctx, account.NewAccount{Name: "Grace", Owner: owner, Password: password}))

	for _, tc := range []struct{ owner, password string }{
		{owner, "a long enough passworD"},
		{owner, ""},
		{"nobody@example.com", password},
		{"", ""},
	} {
		if _, _, err := a.Login(ctx, "", tc.owner, tc.password); !errors.Is(err, account.ErrInvalidLogin) {
			t.Errorf("Login(%s, a wrong password) = %v, want ErrInvalidLogin", tc.owner, err)
		}
	}

	token, sess, err := a.Login(ctx, "", "grace@example.com", password) // owners match in any case
	if err != nil {
		t.Fatal(err)
	}
	if len(token) < 26 || sess.Account != acct.ID || len(sess.CSRF) < 26 || sess.CSRF == token || !sess.Expires.Equal(start.Add(account.SessionTTL)) {
		t.Fatalf("Login = %d-character token, %+v", len(token), sess)
	}
	// Another Accounts on the store knows it.
	if got := must[account.Session](t)(b.Session(ctx, token)); got != sess {
		t.Fatalf("Session = %+v, want %+v", got, sess)
	}
	if _, err := b.Session(ctx, token+"x"); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("Session(wrong token) = %v, want ErrNotFound", err)
	}
	if _, err := a.Session(ctx, ""); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("Session(\"\") = %v, want ErrNotFound", err)
	}

	// Expiry on the clock.
	clock.Advance(account.SessionTTL - time.Second)
	if _, err := a.Session(ctx, token); err != nil {
		t.Fatalf("a second before its end: %v", err)
	}
	clock.Advance(time.Second)
	if _, err := a.Session(ctx, token); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("Session at its end = %v, want ErrNotFound", err)
	}

	// Logout ends it at once, everywhere.
	token2, _, err := a.Login(ctx, "", owner, password)
	if err != nil {
		t.Fatal(err)
	}
	if token2 == token {
		t.Fatal("two sessions share a token")
	}
	if err := b.Logout(ctx, token2); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Session(ctx, token2); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("Session after Logout = %v, want ErrNotFound", err)
	}
	if err := a.Logout(ctx, token2); err != nil {
		t.Fatalf("Logout twice: %v", err)
	}
}

// testLoginLock: MaxLoginFailures wrong passwords lock an owner's logins,
// the right password included, on every Accounts of the store; an
// unknown owner locks alike, and other owners are not locked.
func testLoginLock(t *testing.T, s account.Store) {
	ctx := t.Context()
	clock := newClock(start)
	a, b := newAccounts(t, s, clock), newAccounts(t, s, clock)
	const password = "a long enough password"
	for _, owner := range []string{"ada@example.com", "bob@example.com"} {
		must[account.Account](t)(a.CreateAccount(ctx, account.NewAccount{Name: owner, Owner: owner, Password: password}))
	}
	for i := range account.MaxLoginFailures {
		who := []*account.Accounts{a, b}[i%2] // failures add up across replicas
		if _, _, err := who.Login(ctx, "", "ADA@example.com", "wrong"); !errors.Is(err, account.ErrInvalidLogin) {
			t.Fatalf("failure %d: %v, want ErrInvalidLogin", i+1, err)
		}
	}
	if _, _, err := b.Login(ctx, "", "ada@example.com", password); !errors.Is(err, account.ErrLoginLocked) {
		t.Fatalf("the right password after %d failures: %v, want ErrLoginLocked", account.MaxLoginFailures, err)
	}
	if _, _, err := a.Login(ctx, "", "bob@example.com", password); err != nil {
		t.Fatalf("another owner: %v", err)
	}
	for range account.MaxLoginFailures {
		a.Login(ctx, "", "nobody@example.com", "wrong")
	}
	if _, _, err := a.Login(ctx, "", "nobody@example.com", "wrong"); !errors.Is(err, account.ErrLoginLocked) {
		t.Fatalf("an unknown owner after %d failures: %v, want ErrLoginLocked", account.MaxLoginFailures, err)
	}

	// The right password forgives the failures before it.
	for i := range 2 * (account.MaxLoginFailures - 1) {
		if i == account.MaxLoginFailures-1 {
			if _, _, err := a.Login(ctx, "", "bob@example.com", password); err != nil {
				t.Fatalf("the right password after %d failures: %v", account.MaxLoginFailures-1, err)
			}
		}
		if _, _, err := b.Login(ctx, "", "bob@example.com", "wrong"); !errors.Is(err, account.ErrInvalidLogin) {
			t.Fatalf("failure %d, with a successful login after %d: %v, want ErrInvalidLogin", i+1, account.MaxLoginFailures-1, err)
		}
	}

	// Racing guesses, through two replicas, check MaxLoginFailures
	// passwords at most: each is counted before its password is checked.
	const racers = 50
	must[account.Account](t)(a.CreateAccount(ctx, account.NewAccount{Name: "Cy", Owner: "cy@example.com", Password: password}))
	var replicas []*account.Accounts
	for range 2 {
		r, err := account.New(ctx, account.Config{Store: s, Now: clock.Now, PasswordIterations: passwordIterations, MaxConcurrentLogins: racers})
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, r)
	}
	var (
		mu      sync.Mutex
		results = map[error]int{}
		wg      sync.WaitGroup
	)
	for i := range racers {
		wg.Go(func() {
			_, _, err := replicas[i%2].Login(ctx, "", "cy@example.com", fmt.Sprintf("wrong %d", i))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, account.ErrInvalidLogin):
				results[account.ErrInvalidLogin]++
			case errors.Is(err, account.ErrLoginLocked):
				results[account.ErrLoginLocked]++
			default:
				t.Errorf("a racing guess: %v, want ErrInvalidLogin or ErrLoginLocked", err)
			}
		})
	}
	wg.Wait()
	if checked := results[account.ErrInvalidLogin]; checked == 0 || checked > account.MaxLoginFailures {
		t.Fatalf("%d racing guesses checked %d passwords, want 1 to %d (the rest ErrLoginLocked: %d)",
			racers, checked, account.MaxLoginFailures, results[account.ErrLoginLocked])
	}
	if _, _, err := a.Login(ctx, "", "cy@example.com", password); !errors.Is(err, account.ErrLoginLocked) {
		t.Fatalf("the right password after %d racing guesses: %v, want ErrLoginLocked", racers, err)
	}
}

// testLoginLockPerClient: a client that guesses an owner's password
// MaxLoginFailures times locks itself out, not the owner, who signs in
// from elsewhere; MaxOwnerLoginFailures guesses from as many clients lock
// the owner's logins from every client.
func testLoginLockPerClient(t *testing.T, s account.Store) {
	ctx := t.Context()
	a := newAccounts(t, s, newClock(start))
	const owner, password = "dee@example.com", "a long enough password"
	must[account.Account](t)(a.CreateAccount(ctx, account.NewAccount{Name: "Dee", Owner: owner, Password: password}))
	for i := range account.MaxLoginFailures {
		if _, _, err := a.Login(ctx, "198.51.100.66", owner, "wrong"); !errors.Is(err, account.ErrInvalidLogin) {
			t.Fatalf("failure %d: %v, want ErrInvalidLogin", i+1, err)
		}
	}
	if _, _, err := a.Login(ctx, "198.51.100.66", owner, password); !errors.Is(err, account.ErrLoginLocked) {
		t.Fatalf("the guessing client after %d failures: %v, want ErrLoginLocked", account.MaxLoginFailures, err)
	}
	if _, _, err := a.Login(ctx, "192.0.2.1", owner, password); err != nil {
		t.Fatalf("the owner from another client, while a guesser is locked: %v", err)
	}
	// Her success cleared the count of all clients, not the guesser's.
	if _, _, err := a.Login(ctx, "198.51.100.66", owner, password); !errors.Is(err, account.ErrLoginLocked) {
		t.Fatalf("the guessing client after the owner signed in: %v, want ErrLoginLocked", err)
	}
	for i := range account.MaxOwnerLoginFailures {
		if _, _, err := a.Login(ctx, fmt.Sprintf("client%d", i), owner, "wrong"); !errors.Is(err, account.ErrInvalidLogin) {
			t.Fatalf("failure %d from its own client: %v, want ErrInvalidLogin", i+1, err)
		}
	}
	if _, _, err := a.Login(ctx, "192.0.2.1", owner, password); !errors.Is(err, account.ErrLoginLocked) {
		t.Fatalf("after %d failures from as many clients: %v, want ErrLoginLocked", account.MaxOwnerLoginFailures, err)
	}
}

// testPaymentAcrossAccounts: one payment id credits one account, however
// many calls race through two Accounts naming two accounts; the others
// are ErrPaymentUsed and change nothing. A purchase for an unknown
// account leaves its id free.
func testPaymentAcrossAccounts(t *testing.T, s account.Store) {
	ctx := t.Context()
	clock := newClock(start)
	a1, a2 := newAccounts(t, s, clock), newAccounts(t, s, clock)
	x := must[account.Account](t)(a1.CreateAccount(ctx, account.NewAccount{Name: "x"}))
	y := must[account.Account](t)(a1.CreateAccount(ctx, account.NewAccount{Name: "y"}))
	if _, err := a1.AddCredits(ctx, account.Purchase{ID: "pay_free", Account: "acct_missing", Amount: ratelimit.Dollar}); !errors.Is(err, account.ErrNotFound) {
		t.Fatalf("a purchase of an unknown account: %v, want ErrNotFound", err)
	}
	if _, err := a2.AddCredits(ctx, account.Purchase{ID: "pay_free", Account: y.ID, Amount: ratelimit.Dollar}); err != nil {
		t.Fatalf("the id an unknown account's purchase named: %v", err)
	}
	const racers = 20
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		used int
	)
	for i := range racers {
		wg.Go(func() {
			a := []*account.Accounts{a1, a2}[i%2]
			acct := []string{x.ID, y.ID}[(i/2)%2]
			_, err := a.AddCredits(ctx, account.Purchase{ID: "pay_shared", Account: acct, Amount: 5 * ratelimit.Dollar})
			switch {
			case errors.Is(err, account.ErrPaymentUsed):
				mu.Lock()
				used++
				mu.Unlock()
			case err != nil:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	cx := must[account.Account](t)(a1.Account(ctx, x.ID)).Credits
	cy := must[account.Account](t)(a1.Account(ctx, y.ID)).Credits - ratelimit.Dollar
	if cx+cy != 5*ratelimit.Dollar || (cx != 0 && cy != 0) {
		t.Fatalf("one payment of 5 USD raced to two accounts: %s and %s credited", cx, cy)
	}
	if used != racers/2 {
		t.Fatalf("%d of %d calls naming the other account were ErrPaymentUsed, want all", used, racers/2)
	}
	// Its account may record it again (a retry), which changes nothing.
	winner := x.ID
	if cy != 0 {
		winner = y.ID
	}
	if _, err := a2.AddCredits(ctx, account.Purchase{ID: "pay_shared", Account: winner, Amount: 5 * ratelimit.Dollar}); err != nil {
		t.Fatalf("a retry on its own account: %v", err)
	}
}

// wipe deletes every document of s: a Redis that lost its data.
func wipe(t *testing.T, s account.Store) {
	t.Helper()
	docs := must[[]string](t)(s.List(t.Context(), ""))
	for _, d := range docs {
		if err := s.Update(t.Context(), d, 0, func([]byte) ([]byte, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
	}
}

// testStoreLostData: a store that loses its data while Accounts serve
// (a Redis restarted without persistence, FLUSHALL) gets the operator
// secret and the default account back, so that keys made afterwards work
// after a restart as well, and static keys at once; a store that lost
// only the secret while it holds keys is refused at New, never given a
// new secret.
func testStoreLostData(t *testing.T, s account.Store) {
	ctx := t.Context()
	clock := newClock(start)
	a := newAccounts(t, s, clock, "sk-static-key-of-the-config")
	must[account.Account](t)(a.CreateAccount(ctx, account.NewAccount{Name: "before"}))
	wipe(t, s)

	// A static key works at once: its account is made again.
	if p, err := a.Authenticate(ctx, "sk-static-key-of-the-config"); err != nil || p.Account.ID != account.DefaultAccount {
		t.Fatalf("a static key after the store lost its data: %+v, %v", p, err)
	}
	_, made, err := a.CreateKey(ctx, account.DefaultAccount, "made after the loss")
	if err != nil {
		t.Fatal(err)
	}
	// A restart: the key made meanwhile still works.
	b := newAccounts(t, s, clock)
	if _, err := b.Authenticate(ctx, made); err != nil {
		t.Fatalf("a key made after the store lost its data, after a restart: %v", err)
	}
	if err := a.Check(ctx); err != nil {
		t.Fatalf("Check with nothing lost: %v", err)
	}

	// Only the secret lost (evicted), its keys kept: New refuses.
	if err := s.Update(ctx, "secret", 0, func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := account.New(ctx, account.Config{Store: s, Now: clock.Now, PasswordIterations: passwordIterations}); !errors.Is(err, account.ErrSecretLost) {
		t.Fatalf("New on a store that lost the secret of its keys: %v, want ErrSecretLost", err)
	}
	// A running Accounts puts it back, and the restart works again.
	if err := b.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := newAccounts(t, s, clock).Authenticate(ctx, made); err != nil {
		t.Fatalf("after Check put the secret back: %v", err)
	}
	// Another secret, made by a replica since: Check says so.
	if err := s.Update(ctx, "secret", 0, func([]byte) ([]byte, error) { return bytes.Repeat([]byte{7}, 32), nil }); err != nil {
		t.Fatal(err)
	}
	if err := a.Check(ctx); !errors.Is(err, account.ErrSecretMismatch) {
		t.Fatalf("Check on a store with another secret: %v, want ErrSecretMismatch", err)
	}
	if _, _, err := a.CreateKey(ctx, account.DefaultAccount, "x"); !errors.Is(err, account.ErrSecretMismatch) {
		t.Fatalf("CreateKey on a store with another secret: %v, want ErrSecretMismatch", err)
	}
}

func testLedger(t *testing.T, s account.Store) {
	ctx := t.Context()
	l := account.Ledger(s)
	if got := must[map[string]int64](t)(l.Load(ctx, "2026-11")); len(got) != 0 {
		t.Fatalf("Load of an empty month = %v", got)
	}
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := l.Add(ctx, "2026-11", map[string]int64{"spend:acct_a": 1_000, "requests:acct_a": 1, fmt.Sprintf("odd:%d", i%2): -1}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := l.Add(ctx, "2026-12", map[string]int64{"spend:acct_a": 7}); err != nil {
		t.Fatal(err)
	}
	got := must[map[string]int64](t)(l.Load(ctx, "2026-11"))
	want := map[string]int64{"spend:acct_a": n * 1_000, "requests:acct_a": n, "odd:0": -n / 2, "odd:1": -n / 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Load(2026-11) = %v, want %v", got, want)
	}
	if got := must[map[string]int64](t)(l.Load(ctx, "2026-12")); got["spend:acct_a"] != 7 || len(got) != 1 {
		t.Fatalf("Load(2026-12) = %v", got)
	}
	// A hold and its release: the counter reads 0, as an absent one.
	for _, d := range []int64{500, -500} {
		if err := l.Add(ctx, "2026-12", map[string]int64{"held/acct_a": d}); err != nil {
			t.Fatal(err)
		}
	}
	if got := must[map[string]int64](t)(l.Load(ctx, "2026-12")); got["held/acct_a"] != 0 || len(got) != 1 {
		t.Fatalf("Load(2026-12) after a hold and its release = %v", got)
	}
	if err := l.Add(ctx, "", map[string]int64{"x": 1}); err == nil {
		t.Fatal("Add accepted an empty month")
	}
}

// testPrepaidConcurrent: two Accounts on the store bill one account
// prepaid; 60 requests of 1 USD each racing through both on 25 USD of
// credit admit exactly 25, and the balance stops at exactly 0 once they
// settle.
func testPrepaidConcurrent(t *testing.T, s account.Store) {
	ctx := t.Context()
	clock := newClock(start)
	var replicas [2]ratelimit.Limiter
	var a *account.Accounts
	for i := range replicas {
		var err error
		a, err = account.New(ctx, account.Config{Store: s, Now: clock.Now, PasswordIterations: passwordIterations, Billing: account.Prepaid})
		if err != nil {
			t.Fatal(err)
		}
		replicas[i] = a.Limiter(ratelimit.NewMemory())
	}
	must[account.Account](t)(a.CreateAccount(ctx, account.NewAccount{ID: "acct_pre", Name: "Prepaid"}))
	must[account.Account](t)(a.AddCredits(ctx, account.Purchase{ID: "pay_pre", Account: "acct_pre", Amount: 25 * ratelimit.Dollar}))
	// A tier without rates, so that the balance is the only limit.
	req := ratelimit.Request{Key: "key_pre", Account: "acct_pre", Tier: ratelimit.Tier{Name: "open"}, MaxOutputTokens: 1, Prices: ratelimit.Prices{Output: ratelimit.Dollar}}
	const n = 60
	var admitted, refused atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			l := replicas[i%2]
			res, err := l.Reserve(ctx, req, clock.Now())
			switch {
			case errors.Is(err, ratelimit.ErrNoCredit):
				refused.Add(1)
				return
			case err != nil:
				t.Error(err)
				return
			}
			admitted.Add(1)
			if err := l.Settle(ctx, res, ratelimit.Usage{Requests: 1, OutputTokens: 1}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got := must[account.Account](t)(a.Account(ctx, "acct_pre"))
	if admitted.Load() != 25 || refused.Load() != n-25 || got.Balance() != 0 || got.Held != 0 || got.Drawn != 25*ratelimit.Dollar {
		t.Fatalf("%d racing requests of 1 USD on 25 USD: %d admitted, %d refused; balance %s, held %s, drawn %s",
			n, admitted.Load(), refused.Load(), got.Balance(), got.Held, got.Drawn)
	}
}
