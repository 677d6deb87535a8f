package account

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCheckQueue checks that password checks go round the waiting
// clients one at a time, that a client with maxClientWaiters logins
// waiting is refused at once while others still queue, and that a login
// whose wait or ctx ends leaves the queue.
func TestCheckQueue(t *testing.T) {
	ctx := t.Context()
	q := newCheckQueue(1)
	if err := q.acquire(ctx, "a", time.Hour); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	enqueue := func(client, name string) {
		n := q.waiters()
		wg.Go(func() {
			if err := q.acquire(ctx, client, time.Hour); err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			q.release()
		})
		for q.waiters() == n { // queued in this order
			runtime.Gosched()
		}
	}
	for i := range maxClientWaiters {
		enqueue("flood", fmt.Sprintf("flood%d", i))
	}
	// The flooding client's next login is refused at once; another
	// client's queues behind one of the flood's, not all of them.
	if err := q.acquire(ctx, "flood", time.Hour); !errors.Is(err, ErrBusy) {
		t.Fatalf("a login beyond %d waiting of one client: %v, want ErrBusy", maxClientWaiters, err)
	}
	enqueue("user", "user")
	enqueue("other", "other")
	// One that gives up leaves the queue; so does one whose ctx ends.
	if err := q.acquire(ctx, "late", time.Millisecond); !errors.Is(err, ErrBusy) {
		t.Fatalf("a wait that ends: %v, want ErrBusy", err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if err := q.acquire(gone, "late", time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("a ctx that ends: %v, want context.Canceled", err)
	}
	q.release()
	wg.Wait()
	want := "flood0 user other flood1 flood2 flood3 flood4 flood5 flood6 flood7"
	if got := strings.Join(order, " "); got != want {
		t.Fatalf("turns %q, want %q", got, want)
	}
	if q.free != 1 || len(q.waiting) != 0 || len(q.order) != 0 {
		t.Fatalf("after every login: %d free, %d clients waiting", q.free, len(q.waiting))
	}
}

// TestLoginBusy checks that a Login whose turn at a password check does
// not come is ErrBusy (or ends with its ctx), for a known and an unknown
// owner alike, checks nothing and counts no failure; and that the bound's
// default follows GOMAXPROCS.
func TestLoginBusy(t *testing.T) {
	ctx := t.Context()
	mem := NewMemory()
	a, err := New(ctx, Config{Store: mem, PasswordIterations: 1_000, MaxConcurrentLogins: 1})
	if err != nil {
		t.Fatal(err)
	}
	a.queueWait = 10 * time.Millisecond
	const owner, password = "ada@example.com", "a long enough password"
	if _, err := a.CreateAccount(ctx, NewAccount{Name: "Ada", Owner: owner, Password: password}); err != nil {
		t.Fatal(err)
	}
	counted := func(owner string) string {
		var counts []string
		for _, doc := range []string{a.loginFailDoc(owner, "client", false), a.loginFailDoc(owner, "", true)} {
			v, err := mem.Get(ctx, doc)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			counts = append(counts, string(v))
		}
		if len(counts) == 0 {
			return "none"
		}
		return strings.Join(counts, ",")
	}
	// Another login holds the one check.
	if err := a.checks.acquire(ctx, "other", time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{owner, "nobody@example.com"} {
		if _, _, err := a.Login(ctx, "client", who, password); !errors.Is(err, ErrBusy) {
			t.Fatalf("Login(%s) while the check is held: %v, want ErrBusy", who, err)
		}
		if got := counted(who); got != "none" {
			t.Fatalf("a refused login of %s counted %s", who, got)
		}
	}
	a.queueWait = time.Hour
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, _, err := a.Login(short, "client", owner, password); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Login whose ctx ends while it waits: %v, want context.DeadlineExceeded", err)
	}
	if a.hashes.Load() != 0 || counted(owner) != "none" {
		t.Fatalf("refused logins hashed %d passwords, counted %s", a.hashes.Load(), counted(owner))
	}
	a.checks.release()
	if _, _, err := a.Login(ctx, "client", owner, password); err != nil {
		t.Fatal(err)
	}
	if q := a.checks; q.free != 1 || q.waiters() != 0 {
		t.Fatalf("%d checks free, %d waiting after every login ended", q.free, q.waiters())
	}

	def, err := New(ctx, Config{Store: mem})
	if err != nil {
		t.Fatal(err)
	}
	if want := max(1, runtime.GOMAXPROCS(0)/2); def.checks.free != want {
		t.Fatalf("default MaxConcurrentLogins = %d, want %d", def.checks.free, want)
	}
	if _, err := New(ctx, Config{Store: mem, MaxConcurrentLogins: -1}); err == nil {
		t.Fatal("New accepted MaxConcurrentLogins -1")
	}
}

// TestLoginUnknownOwnerNoHash checks that attempts for owners who do not
// exist hash no password (once a hash has been timed) and count as a
// known owner's do, while a known owner's attempts each hash one.
func TestLoginUnknownOwnerNoHash(t *testing.T) {
	ctx := t.Context()
	a, err := New(ctx, Config{Store: NewMemory(), PasswordIterations: 1_000, MaxConcurrentLogins: 1})
	if err != nil {
		t.Fatal(err)
	}
	const owner, password = "ada@example.com", "a long enough password"
	if _, err := a.CreateAccount(ctx, NewAccount{Name: "Ada", Owner: owner, Password: password}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Login(ctx, "c", owner, "wrong"); !errors.Is(err, ErrInvalidLogin) {
		t.Fatal(err)
	}
	if a.hashes.Load() != 1 {
		t.Fatalf("a wrong password hashed %d times, want 1", a.hashes.Load())
	}
	for i := range 20 {
		if _, _, err := a.Login(ctx, "c", fmt.Sprintf("nobody%d@example.com", i), password); !errors.Is(err, ErrInvalidLogin) {
			t.Fatalf("unknown owner: %v, want ErrInvalidLogin", err)
		}
	}
	if a.hashes.Load() != 1 {
		t.Fatalf("20 unknown owners hashed %d passwords, want none", a.hashes.Load()-1)
	}
	for range MaxLoginFailures {
		a.Login(ctx, "c", "nobody@example.com", password)
	}
	if _, _, err := a.Login(ctx, "c", "nobody@example.com", password); !errors.Is(err, ErrLoginLocked) {
		t.Fatalf("an unknown owner after %d failures: %v, want ErrLoginLocked", MaxLoginFailures, err)
	}
	if _, _, err := a.Login(ctx, "c", owner, password); err != nil || a.hashes.Load() != 2 {
		t.Fatalf("the right password: %v, %d hashes in all", err, a.hashes.Load())
	}
}

// revokeStore is a Store that deletes key just before the first Update
// of it: a revocation racing that Update.
type revokeStore struct {
	Store
	key  string
	done bool
}

func (s *revokeStore) Update(ctx context.Context, key string, ttl time.Duration, fn func(old []byte) ([]byte, error)) error {
	if key == s.key && !s.done {
		s.done = true
		if err := s.Store.Update(ctx, key, 0, func([]byte) ([]byte, error) { return nil, nil }); err != nil {
			return err
		}
	}
	return s.Store.Update(ctx, key, ttl, fn)
}

// TestAuthenticateRevokedMeanwhile checks that a key revoked between
// Authenticate's read of it and its recording of the key's use is
// refused, and stays revoked.
func TestAuthenticateRevokedMeanwhile(t *testing.T) {
	ctx := t.Context()
	s := &revokeStore{Store: NewMemory()}
	a, err := New(ctx, Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	k, secret, err := a.CreateKey(ctx, DefaultAccount, "raced")
	if err != nil {
		t.Fatal(err)
	}
	s.key = docKey + k.ID
	if p, err := a.Authenticate(ctx, secret); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("Authenticate of a key revoked meanwhile = %+v, %v; want ErrInvalidKey", p, err)
	}
	if !s.done {
		t.Fatal("Authenticate did not record the key's use: the race was not run")
	}
	if _, err := a.Key(ctx, k.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the revoked key after Authenticate: %v, want ErrNotFound", err)
	}
}
