package account

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"
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
