package account

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// stallStore is a Store whose Gets of keys beginning with stall tell
// entered (buffered) and wait until release is closed or ctx ends.
type stallStore struct {
	Store
	stall   string
	entered chan string
	release chan struct{}
}

func (s *stallStore) Get(ctx context.Context, key string) ([]byte, error) {
	if strings.HasPrefix(key, s.stall) {
		s.entered <- key
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Store.Get(ctx, key)
}

// TestLoginBusy checks that Login runs Config.MaxConcurrentLogins
// password checks at most: one more waits, then is ErrBusy (or ends with
// its ctx), checks nothing and counts no failure; and that the bound's
// default follows GOMAXPROCS.
func TestLoginBusy(t *testing.T) {
	ctx := t.Context()
	mem := NewMemory()
	s := &stallStore{Store: mem, stall: docOwner, entered: make(chan string, 8), release: make(chan struct{})}
	a, err := New(ctx, Config{Store: s, PasswordIterations: 1_000, MaxConcurrentLogins: 2})
	if err != nil {
		t.Fatal(err)
	}
	a.queueWait = 10 * time.Millisecond
	const owner, password = "ada@example.com", "a long enough password"
	s.stall = "-" // nothing stalls while the account is made
	if _, err := a.CreateAccount(ctx, NewAccount{Name: "Ada", Owner: owner, Password: password}); err != nil {
		t.Fatal(err)
	}
	s.stall = docOwner

	// Two logins check at once; both stall reading their owner.
	var wg sync.WaitGroup
	release := sync.OnceFunc(func() { close(s.release) })
	defer wg.Wait()
	defer release()
	for _, pw := range []string{password, "wrong"} {
		wg.Go(func() {
			if _, _, err := a.Login(ctx, owner, pw); (err == nil) != (pw == password) {
				t.Errorf("Login(%q) once released: %v", pw, err)
			}
		})
	}
	for range 2 {
		<-s.entered
	}
	failDoc := a.loginFailDoc(owner)
	counted := func() string {
		v, err := mem.Get(ctx, failDoc)
		if errors.Is(err, ErrNotFound) {
			return "none"
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(v)
	}
	if got := counted(); got != "2" {
		t.Fatalf("two logins under way counted %s, want 2", got)
	}
	// A third, of an unknown owner too, finds no free check. (Were it to
	// check, it would stall until its ctx ends.)
	for _, who := range []string{owner, "nobody@example.com"} {
		third, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, _, err := a.Login(third, who, password)
		cancel()
		if !errors.Is(err, ErrBusy) {
			t.Fatalf("Login(%s) while %d checks run: %v, want ErrBusy", who, cap(a.checks), err)
		}
	}
	a.queueWait = time.Hour
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, _, err := a.Login(short, owner, password); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Login whose ctx ends while it waits: %v, want context.DeadlineExceeded", err)
	}
	if got := counted(); got != "2" {
		t.Fatalf("after refused logins, the count is %s, want 2: a refused login counts no failure", got)
	}
	release()
	wg.Wait()
	if got := counted(); got != "none" {
		t.Fatalf("after a successful login, the count is %s, want none", got)
	}
	if len(a.checks) != 0 {
		t.Fatalf("%d checks still held after every login ended", len(a.checks))
	}

	def, err := New(ctx, Config{Store: mem})
	if err != nil {
		t.Fatal(err)
	}
	if want := max(1, runtime.GOMAXPROCS(0)/2); cap(def.checks) != want {
		t.Fatalf("default MaxConcurrentLogins = %d, want %d", cap(def.checks), want)
	}
	if _, err := New(ctx, Config{Store: mem, MaxConcurrentLogins: -1}); err == nil {
		t.Fatal("New accepted MaxConcurrentLogins -1")
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
