package cache_test

import (
	"context"
	"testing"
	"time"

	"github.com/inferkit/inferkit/cache"
	"github.com/inferkit/inferkit/cache/cachetest"
)

func TestMemoryConformance(t *testing.T) {
	cachetest.Run(t, func(t *testing.T, cfg cachetest.Config) cache.Store {
		s, err := cache.NewMemoryStore(cache.MemoryConfig{TTL: cfg.TTL, Now: cfg.Now, MaxEntries: cfg.MaxEntries, MaxBytes: cfg.MaxBytes})
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
	for _, cfg := range []cache.MemoryConfig{{TTL: -1}, {MaxEntries: -1}, {MaxBytes: -1}} {
		if _, err := cache.NewMemoryStore(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// clock is a fake clock.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time          { return c.t }
func (c *clock) Advance(d time.Duration) { c.t = c.t.Add(d) }
