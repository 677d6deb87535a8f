// Package cachetest is a conformance suite for implementations of
// [cache.Store]: any store, in this module or outside it, runs Run from
// its own tests.
//
//	func TestConformance(t *testing.T) {
//		cachetest.Run(t, func(t *testing.T, cfg cachetest.Config) cache.Store {
//			s, err := mystore.Open(mystore.Config{TTL: cfg.TTL, Now: cfg.Now,
//				MaxEntries: cfg.MaxEntries, MaxBytes: cfg.MaxBytes,
//				MaxOwnerEntries: cfg.MaxOwnerEntries, MaxOwnerBytes: cfg.MaxOwnerBytes})
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
package cachetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/cache"
)

// Config is what the suite asks of a new store.
type Config struct {
	// TTL is the store's TTL, never 0. The store must decide expiry with
	// Now, not with its own clock (a store whose backend expires keys by
	// itself may set a longer backend expiry as well).
	TTL time.Duration
	// Now is the store's clock: the suite moves it forward instead of
	// sleeping.
	Now func() time.Time
	// MaxEntries and MaxBytes bound the store when not 0, as the bounds
	// of cache.MemoryConfig do: past them the oldest record of the owner
	// holding the most is evicted first (see cache.Store.Put). 0 means
	// the store's own, larger bound. A store that cannot honour a bound
	// the suite sets calls t.Skip.
	MaxEntries int
	MaxBytes   int64
	// MaxOwnerEntries and MaxOwnerBytes bound the records of each owner
	// the same way when not 0: past them the owner's own oldest go
	// first. 0 means the store's default. The suite sets them wherever
	// it sets MaxEntries or MaxBytes, never above those.
	MaxOwnerEntries int
	MaxOwnerBytes   int64
}

// Run checks a Store's contract in subtests. newStore returns an empty
// store configured by cfg, for the test t; it fails t if it cannot, and
// releases the store through t.Cleanup. Each subtest makes its own store.
func Run(t *testing.T, newStore func(t *testing.T, cfg Config) cache.Store) {
	t.Helper()
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *suite)
	}{
		{"PutGet", testPutGet},
		{"NotFound", testNotFound},
		{"Replace", testReplace},
		{"Delete", testDelete},
		{"Owners", testOwners},
		{"Keys", testKeys},
		{"Copies", testCopies},
		{"NoID", testNoID},
		{"TTL", testTTL},
		{"MaxEntries", testMaxEntries},
		{"MaxBytes", testMaxBytes},
		{"OwnerBound", testOwnerBound},
		{"OwnerBytes", testOwnerBytes},
		{"OwnerCounts", testOwnerCounts},
		{"GlobalBound", testGlobalBound},
		{"Model", testModel},
		{"Concurrent", testConcurrent},
		{"ConcurrentOwners", testConcurrentOwners},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, &suite{newStore: newStore, clock: &clock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}})
		})
	}
}

const ttl = time.Hour

// suite holds what a subtest needs.
type suite struct {
	newStore func(*testing.T, Config) cache.Store
	clock    *clock
}

// store returns a new store on the suite's clock with cfg's bounds.
func (s *suite) store(t *testing.T, cfg Config) cache.Store {
	t.Helper()
	cfg.TTL, cfg.Now = ttl, s.clock.Now
	st := s.newStore(t, cfg)
	if st == nil {
		t.Fatal("cachetest: newStore returned nil")
	}
	return st
}

// clock is a fake clock, safe for concurrent use.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var ctx = context.Background()

// record returns a record of owner and id whose payloads name them.
func record(owner, id string) cache.Record {
	return cache.Record{Owner: owner, ID: id,
		Response:   []byte(`{"id":"` + id + `","owner":"` + owner + `"}`),
		Transcript: []byte(`[{"role":"user","text":"` + id + `"}]`)}
}

func put(t *testing.T, s cache.Store, r cache.Record) {
	t.Helper()
	if err := s.Put(ctx, r); err != nil {
		t.Fatalf("Put(%q, %q): %v", r.Owner, r.ID, err)
	}
}

// has fails t unless s returns want for its owner and id.
func has(t *testing.T, s cache.Store, want cache.Record) {
	t.Helper()
	got, err := s.Get(ctx, want.Owner, want.ID)
	if err != nil {
		t.Errorf("Get(%q, %q): %v", want.Owner, want.ID, err)
		return
	}
	if got.Owner != want.Owner || got.ID != want.ID || !bytes.Equal(got.Response, want.Response) || !bytes.Equal(got.Transcript, want.Transcript) {
		t.Errorf("Get(%q, %q) = %s", want.Owner, want.ID, show(got))
	}
}

// lacks fails t unless s reports owner's id not found.
func lacks(t *testing.T, s cache.Store, owner, id string) {
	t.Helper()
	if got, err := s.Get(ctx, owner, id); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("Get(%q, %q) = %s, %v; want ErrNotFound", owner, id, show(got), err)
	}
}

func show(r cache.Record) string {
	return fmt.Sprintf("{Owner %q, ID %q, Response %q, Transcript %q, Expires %v}", r.Owner, r.ID, r.Response, r.Transcript, r.Expires)
}

func testPutGet(t *testing.T, s *suite) {
	st := s.store(t, Config{})
	r := record("a", "r1")
	r.Expires = s.clock.Now().Add(-time.Hour) // ignored
	put(t, st, r)
	has(t, st, r)
	got, _ := st.Get(ctx, "a", "r1")
	if want := s.clock.Now().Add(ttl); got.Expires.Sub(want).Abs() > time.Second {
		t.Errorf("Expires %v, want %v", got.Expires, want)
	}
	// Empty payloads are kept as empty.
	empty := cache.Record{Owner: "a", ID: "empty"}
	put(t, st, empty)
	has(t, st, empty)
}

func testNotFound(t *testing.T, s *suite) {
	st := s.store(t, Config{})
	lacks(t, st, "a", "never")
	if err := st.Delete(ctx, "a", "never"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("Delete of a missing record: %v", err)
	}
}

func testReplace(t *testing.T, s *suite) {
	st := s.store(t, Config{})
	put(t, st, record("a", "r1"))
	r := record("a", "r1")
	r.Response = []byte("second")
	put(t, st, r)
	has(t, st, r)
}

func testDelete(t *testing.T, s *suite) {
	st := s.store(t, Config{})
	put(t, st, record("a", "r1"))
	put(t, st, record("a", "r2"))
	if err := st.Delete(ctx, "a", "r1"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	lacks(t, st, "a", "r1")
	has(t, st, record("a", "r2"))
	if err := st.Delete(ctx, "a", "r1"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("second Delete: %v", err)
	}
	// A deleted id can be put again.
	put(t, st, record("a", "r1"))
	has(t, st, record("a", "r1"))
}

func testOwners(t *testing.T, s *suite) {
	st := s.store(t, Config{})
	put(t, st, record("a", "r1"))
	put(t, st, record("b", "r1"))
	put(t, st, record("a", "only-a"))
	has(t, st, record("a", "r1"))
	has(t, st, record("b", "r1"))
	lacks(t, st, "b", "only-a")
	lacks(t, st, "", "only-a")
	if err := st.Delete(ctx, "b", "only-a"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("b deleted a's record: %v", err)
	}
	has(t, st, record("a", "only-a"))
	if err := st.Delete(ctx, "b", "r1"); err != nil {
		t.Fatal(err)
	}
	has(t, st, record("a", "r1"))
	lacks(t, st, "b", "r1")
}

// testKeys checks that owners and ids are not joined ambiguously.
func testKeys(t *testing.T, s *suite) {
	st := s.store(t, Config{})
	pairs := [][2]string{{"ab", "c"}, {"a", "bc"}, {"", "abc"}, {"a:b", "c"}, {"a", "b:c"}, {"a\x00b", "c"}, {"a", "b\x00c"}, {"ü", "/x y"}}
	for _, p := range pairs {
		put(t, st, record(p[0], p[1]))
	}
	for _, p := range pairs {
		has(t, st, record(p[0], p[1]))
	}
	lacks(t, st, "abc", "")
	lacks(t, st, "a", "c")
}

func testCopies(t *testing.T, s *suite) {
	st := s.store(t, Config{})
	r := record("a", "r1")
	want := record("a", "r1")
	put(t, st, r)
	r.Response[0], r.Transcript[0] = 'X', 'X'
	has(t, st, want)
	got, err := st.Get(ctx, "a", "r1")
	if err != nil {
		t.Fatal(err)
	}
	got.Response[0], got.Transcript[0] = 'Y', 'Y'
	has(t, st, want)
}

func testNoID(t *testing.T, s *suite) {
	st := s.store(t, Config{})
	if err := st.Put(ctx, cache.Record{Owner: "a", Response: []byte("x")}); err == nil || errors.Is(err, cache.ErrNotFound) {
		t.Errorf("Put without an ID: %v", err)
	}
}

func testTTL(t *testing.T, s *suite) {
	st := s.store(t, Config{})
	put(t, st, record("a", "r1"))
	s.clock.Advance(ttl / 2)
	put(t, st, record("a", "r2"))
	put(t, st, record("a", "r3"))
	s.clock.Advance(ttl/2 - time.Nanosecond)
	has(t, st, record("a", "r1"))
	s.clock.Advance(time.Nanosecond)
	lacks(t, st, "a", "r1")
	has(t, st, record("a", "r2"))
	if err := st.Delete(ctx, "a", "r1"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("Delete of an expired record: %v", err)
	}
	// Putting an id again starts its TTL again.
	put(t, st, record("a", "r2"))
	s.clock.Advance(ttl / 2)
	has(t, st, record("a", "r2"))
	lacks(t, st, "a", "r3")
	// An expired id can be put again.
	put(t, st, record("a", "r3"))
	has(t, st, record("a", "r3"))
	s.clock.Advance(10 * ttl)
	for _, id := range []string{"r1", "r2", "r3"} {
		lacks(t, st, "a", id)
	}
}

func testMaxEntries(t *testing.T, s *suite) {
	st := s.store(t, Config{MaxEntries: 3, MaxOwnerEntries: 3})
	for i := 1; i <= 5; i++ {
		put(t, st, record("a", fmt.Sprint("r", i)))
		s.clock.Advance(time.Second)
	}
	lacks(t, st, "a", "r1")
	lacks(t, st, "a", "r2")
	for _, id := range []string{"r3", "r4", "r5"} {
		has(t, st, record("a", id))
	}
	// Replacing a record makes it the newest without evicting another.
	put(t, st, record("a", "r3"))
	for _, id := range []string{"r3", "r4", "r5"} {
		has(t, st, record("a", id))
	}
	put(t, st, record("b", "r6"))
	lacks(t, st, "a", "r4")
	has(t, st, record("a", "r3"))
	// Deleting makes room.
	if err := st.Delete(ctx, "a", "r5"); err != nil {
		t.Fatal(err)
	}
	put(t, st, record("a", "r7"))
	for _, r := range []cache.Record{record("a", "r3"), record("b", "r6"), record("a", "r7")} {
		has(t, st, r)
	}
}

func testMaxBytes(t *testing.T, s *suite) {
	big := func(id string) cache.Record {
		r := record("a", id)
		r.Response = []byte(strings.Repeat(id[:1], 1000))
		return r
	}
	size := big("r1").Size()
	st := s.store(t, Config{MaxBytes: 3*size + size/2, MaxOwnerBytes: 3*size + size/2})
	for _, id := range []string{"r1", "r2", "r3", "r4"} {
		put(t, st, big(id))
		s.clock.Advance(time.Second)
	}
	lacks(t, st, "a", "r1")
	for _, id := range []string{"r2", "r3", "r4"} {
		has(t, st, big(id))
	}
	huge := record("a", "huge")
	huge.Response = make([]byte, 4*size)
	if err := st.Put(ctx, huge); !errors.Is(err, cache.ErrTooLarge) {
		t.Errorf("Put of a record over MaxBytes: %v, want ErrTooLarge", err)
	}
	lacks(t, st, "a", "huge")
	for _, id := range []string{"r2", "r3", "r4"} {
		has(t, st, big(id))
	}
	// Small records fit beside the big ones.
	put(t, st, record("a", "small"))
	has(t, st, record("a", "small"))
}

// testConcurrent runs owners in parallel: run it with -race.
func testConcurrent(t *testing.T, s *suite) {
	st := s.store(t, Config{})
	var wg sync.WaitGroup
	for g := range 8 {
		owner := fmt.Sprint("owner", g)
		wg.Go(func() {
			for i := range 20 {
				r := record(owner, fmt.Sprint("r", i))
				if err := st.Put(ctx, r); err != nil {
					t.Error(err)
					return
				}
				if got, err := st.Get(ctx, owner, r.ID); err != nil || !bytes.Equal(got.Response, r.Response) {
					t.Errorf("Get(%q, %q): %s, %v", owner, r.ID, show(got), err)
				}
				if i%2 == 0 {
					if err := st.Delete(ctx, owner, r.ID); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	for g := range 8 {
		owner := fmt.Sprint("owner", g)
		lacks(t, st, owner, "r0")
		has(t, st, record(owner, "r19"))
	}
}
