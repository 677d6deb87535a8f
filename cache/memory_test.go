package cache_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/inferkit/inferkit/cache"
	"github.com/inferkit/inferkit/cache/cachetest"
)

func TestMemoryConformance(t *testing.T) {
	cachetest.Run(t, func(t *testing.T, cfg cachetest.Config) cache.Store {
		s, err := cache.NewMemoryStore(cache.MemoryConfig{TTL: cfg.TTL, Now: cfg.Now, MaxEntries: cfg.MaxEntries, MaxBytes: cfg.MaxBytes,
			MaxOwnerEntries: cfg.MaxOwnerEntries, MaxOwnerBytes: cfg.MaxOwnerBytes})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestMemoryStore(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1e9, 0)}
	s, err := cache.NewMemoryStore(cache.MemoryConfig{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"r1", "r2"} {
		if err := s.Put(ctx, cache.Record{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Len(); n != 2 {
		t.Errorf("Len %d", n)
	}
	c.Advance(cache.DefaultTTL - 1)
	if r, err := s.Get(ctx, "", "r1"); err != nil || !r.Expires.Equal(time.Unix(1e9, 0).Add(cache.DefaultTTL)) {
		t.Errorf("within the default TTL: %v, expires %v", err, r.Expires)
	}
	c.Advance(1)
	if n := s.Len(); n != 0 {
		t.Errorf("Len after the default TTL: %d", n)
	}
	for _, cfg := range []cache.MemoryConfig{{TTL: -1}, {MaxEntries: -1}, {MaxBytes: -1}, {MaxOwnerEntries: -1}, {MaxOwnerBytes: -1},
		{MaxOwnerEntries: cache.DefaultMemoryMaxEntries + 1}, {MaxEntries: 10, MaxOwnerEntries: 11}, {MaxBytes: 10, MaxOwnerBytes: 11}} {
		if _, err := cache.NewMemoryStore(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// TestMemoryOwnerDefaults checks the per-owner bounds that zero values
// give: an eighth of the global ones.
func TestMemoryOwnerDefaults(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		cfg  cache.MemoryConfig
		want int
	}{
		{cache.MemoryConfig{}, cache.DefaultMemoryMaxEntries / 8},
		{cache.MemoryConfig{MaxEntries: 80}, 10},
		{cache.MemoryConfig{MaxEntries: 3}, 1},
		{cache.MemoryConfig{MaxEntries: 80, MaxOwnerEntries: 80}, 80},
	} {
		s, err := cache.NewMemoryStore(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i := range tc.want + 10 {
			if err := s.Put(ctx, cache.Record{Owner: "a", ID: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if n := s.Len(); n != tc.want {
			t.Errorf("%+v: one owner holds %d, want %d", tc.cfg, n, tc.want)
		}
	}
	s, err := cache.NewMemoryStore(cache.MemoryConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// An eighth of 64 MiB holds a record of a 4 MiB request and more.
	r := cache.Record{ID: "r", Transcript: make([]byte, 8<<20-1)}
	if err := s.Put(ctx, r); err != nil {
		t.Errorf("a record of 8 MiB: %v", err)
	}
	r.Transcript = append(r.Transcript, 0)
	if err := s.Put(ctx, r); !errors.Is(err, cache.ErrTooLarge) {
		t.Errorf("a record over 8 MiB: %v", err)
	}
}

// clock is a fake clock.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time          { return c.t }
func (c *clock) Advance(d time.Duration) { c.t = c.t.Add(d) }
