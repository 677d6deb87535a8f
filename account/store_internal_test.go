package account

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestTTLExpiry checks that Memory and Bolt values with a TTL read as
// absent from their expiry on, on a fake clock, and that values without
// one stay.
func TestTTLExpiry(t *testing.T) {
	now := time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	for _, tc := range []struct {
		name string
		open func(t *testing.T) Store
	}{
		{"Memory", func(t *testing.T) Store {
			m := NewMemory()
			m.now = clock
			return m
		}},
		{"Bolt", func(t *testing.T) Store {
			b, err := openBolt(filepath.Join(t.TempDir(), "a.db"), clock)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now = time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)
			s := tc.open(t)
			ctx := t.Context()
			put := func(key string, ttl time.Duration) {
				t.Helper()
				if err := s.Update(ctx, key, ttl, func([]byte) ([]byte, error) { return []byte("v"), nil }); err != nil {
					t.Fatal(err)
				}
			}
			put("short", time.Minute)
			put("long", time.Hour)
			put("forever", 0)
			for _, step := range []struct {
				at   time.Duration
				want []string
			}{
				{59 * time.Second, []string{"forever", "long", "short"}},
				{time.Minute, []string{"forever", "long"}},
				{2 * time.Hour, []string{"forever"}},
			} {
				now = time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC).Add(step.at)
				keys, err := s.List(ctx, "")
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(keys, step.want) {
					t.Errorf("after %v, List = %q, want %q", step.at, keys, step.want)
				}
				for _, k := range []string{"short", "long", "forever"} {
					_, err := s.Get(ctx, k)
					if live := slices.Contains(step.want, k); live != (err == nil) || !live && !errors.Is(err, ErrNotFound) {
						t.Errorf("after %v, Get(%s) = %v", step.at, k, err)
					}
				}
			}
			// An expired value is absent to Update too.
			var saw []byte
			if err := s.Update(ctx, "short", 0, func(old []byte) ([]byte, error) { saw = old; return old, nil }); err != nil {
				t.Fatal(err)
			}
			if saw != nil {
				t.Fatalf("Update saw the expired value %q", saw)
			}
		})
	}
}

// TestBoltSweep checks that OpenBolt removes what expired while the file
// was closed, and that a second Bolt cannot open a file in use.
func TestBoltSweep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	now := time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)
	b, err := openBolt(path, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"session", "account"} {
		ttl := time.Duration(0)
		if k == "session" {
			ttl = time.Hour
		}
		if err := b.Update(t.Context(), k, ttl, func([]byte) ([]byte, error) { return []byte(k), nil }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := OpenBolt(path); err == nil {
		t.Fatal("a second Bolt opened a file in use")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour)
	b, err = openBolt(path, func() time.Time { return now.Add(-24 * time.Hour) }) // a clock that would still see it
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(t.Context(), "session"); err != nil {
		t.Fatalf("on an earlier clock, the session is live: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b, err = openBolt(path, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Removed from the file, not only hidden: an earlier clock no longer
	// finds it.
	b.now = func() time.Time { return now.Add(-24 * time.Hour) }
	if _, err := b.Get(t.Context(), "session"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an expired value survived OpenBolt: %v", err)
	}
	if _, err := b.Get(t.Context(), "account"); err != nil {
		t.Fatal(err)
	}
}

// TestExpirySweep checks that Updates of Memory and Bolt remove expired
// values of keys that nobody reads or rewrites again (the sessions and
// login counts of distinct owners), sweepBatch at most per Update, and
// leave live ones, those rewritten with a later expiry or none included.
func TestExpirySweep(t *testing.T) {
	start := time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)
	now := start
	clock := func() time.Time { return now }
	for _, tc := range []struct {
		name string
		// open returns the store and a count of the values it holds
		// (expired ones included) and of its expiry index's entries.
		open func(t *testing.T) (Store, func() (docs, index int))
	}{
		{"Memory", func(t *testing.T) (Store, func() (int, int)) {
			m := NewMemory()
			m.now = clock
			return m, func() (int, int) {
				m.mu.Lock()
				defer m.mu.Unlock()
				return len(m.docs), len(m.expiries)
			}
		}},
		{"Bolt", func(t *testing.T) (Store, func() (int, int)) {
			b, err := openBolt(filepath.Join(t.TempDir(), "a.db"), clock)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			return b, func() (docs, index int) {
				err := b.db.View(func(tx *bolt.Tx) error {
					docs = tx.Bucket(bucketDocs).Stats().KeyN
					index = tx.Bucket(bucketExpiries).Stats().KeyN
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				return docs, index
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now = start
			s, count := tc.open(t)
			ctx := t.Context()
			put := func(key string, ttl time.Duration) {
				t.Helper()
				if err := s.Update(ctx, key, ttl, func([]byte) ([]byte, error) { return []byte("v"), nil }); err != nil {
					t.Fatal(err)
				}
			}
			const n = 3*sweepBatch + 7
			for i := range n {
				put(fmt.Sprintf("session/%04d", i), time.Minute)
			}
			put("renewed", time.Minute)
			put("renewed", time.Hour)
			put("kept", time.Minute)
			put("kept", 0)
			put("later", time.Hour)
			put("forever", 0)
			if docs, _ := count(); docs != n+4 {
				t.Fatalf("after the writes, %d values, want %d", docs, n+4)
			}
			now = start.Add(time.Minute)
			for left := n; left > 0; {
				before, _ := count()
				put("forever", 0)
				after, _ := count()
				if gone := before - after; gone <= 0 || gone > left || gone > sweepBatch {
					t.Fatalf("an Update removed %d values with %d expired ones left; want 1 to %d", gone, left, sweepBatch)
				} else {
					left -= gone
				}
			}
			if docs, index := count(); docs != 4 || index != 2 {
				t.Fatalf("after the sweep, %d values and %d index entries, want 4 and 2", docs, index)
			}
			if keys, err := s.List(ctx, ""); err != nil || !slices.Equal(keys, []string{"forever", "kept", "later", "renewed"}) {
				t.Fatalf("after the sweep, List = %q, %v", keys, err)
			}
			now = start.Add(time.Hour)
			put("forever", 0)
			if docs, index := count(); docs != 2 || index != 0 {
				t.Fatalf("after an hour, %d values and %d index entries, want 2 and 0", docs, index)
			}
		})
	}
}

// TestBoltIndexRebuilt checks that OpenBolt indexes the expiries of a
// file that has no index (one of an earlier version), so that its
// values with a TTL are swept too.
func TestBoltIndexRebuilt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	now := time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)
	b, err := openBolt(path, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"session/a", "session/b"} {
		if err := b.Update(t.Context(), k, time.Hour, func([]byte) ([]byte, error) { return []byte("v"), nil }); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketExpiries) }); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b, err = openBolt(path, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	now = now.Add(time.Hour)
	if err := b.Update(t.Context(), "other", 0, func([]byte) ([]byte, error) { return []byte("v"), nil }); err != nil {
		t.Fatal(err)
	}
	err = b.db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(bucketDocs).Stats().KeyN; n != 1 {
			t.Errorf("%d values after the sweep, want 1", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
