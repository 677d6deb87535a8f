package rediscache_test

import (
	"fmt"
	"testing"

	"github.com/inferkit/inferkit/cache"
	"github.com/inferkit/inferkit/cache/cachetest"
	"github.com/inferkit/inferkit/cache/rediscache"
	"github.com/inferkit/inferkit/internal/redistest"
)

func TestConformance(t *testing.T) {
	rdb := redistest.Client(t, redistest.Start(t))
	n := 0
	cachetest.Run(t, func(t *testing.T, cfg cachetest.Config) cache.Store {
		n++ // a fresh prefix per subtest: an empty store
		s, err := rediscache.New(rediscache.Config{Client: rdb, Prefix: fmt.Sprintf("{test%d}:", n),
			TTL: cfg.TTL, Now: cfg.Now, MaxEntries: cfg.MaxEntries, MaxBytes: cfg.MaxBytes})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestNewNeedsClient(t *testing.T) {
	if _, err := rediscache.New(rediscache.Config{}); err == nil {
		t.Fatal("New without a client succeeded")
	}
}
