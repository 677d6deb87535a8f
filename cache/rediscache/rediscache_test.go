package rediscache_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
			TTL: cfg.TTL, Now: cfg.Now, MaxEntries: cfg.MaxEntries, MaxBytes: cfg.MaxBytes,
			MaxOwnerEntries: cfg.MaxOwnerEntries, MaxOwnerBytes: cfg.MaxOwnerBytes})
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

func TestNewBounds(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:0"}) // never dialled
	defer rdb.Close()
	for _, cfg := range []rediscache.Config{
		{TTL: -1}, {MaxEntries: -1}, {MaxBytes: -1}, {MaxOwnerEntries: -1}, {MaxOwnerBytes: -1},
		{MaxEntries: 10, MaxOwnerEntries: 11}, {MaxBytes: 10, MaxOwnerBytes: 11},
	} {
		cfg.Client = rdb
		if _, err := rediscache.New(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	// Without a global bound, an owner's may be anything.
	if _, err := rediscache.New(rediscache.Config{Client: rdb, MaxOwnerEntries: 1 << 40, MaxOwnerBytes: 1 << 50}); err != nil {
		t.Error(err)
	}
}

// verify fails t unless the structures under prefix agree with one
// another: the owners' sets, their counters, the sizes and the sum of
// bytes.
func verify(t *testing.T, rdb *redis.Client, prefix string) {
	t.Helper()
	ctx := context.Background()
	order := rdb.ZRange(ctx, prefix+"order", 0, -1).Val()
	sizes := rdb.HGetAll(ctx, prefix+"sizes").Val()
	owners := rdb.HGetAll(ctx, prefix+"owners").Val()
	var total int64
	bySet := map[string][]string{}
	perSet := map[string]int64{}
	for _, k := range order {
		n, err := strconv.ParseInt(sizes[k], 10, 64)
		if err != nil {
			t.Fatalf("record %q has size %q", k, sizes[k])
		}
		total += n
		o, ok := owners[k]
		if !ok {
			continue // a record of an older version
		}
		bySet[o] = append(bySet[o], k)
		perSet[o] += n
	}
	if len(sizes) != len(order) {
		t.Fatalf("%d sizes, %d records", len(sizes), len(order))
	}
	for k := range owners {
		if _, ok := sizes[k]; !ok {
			t.Fatalf("owner of %q, which is not there", k)
		}
	}
	if got, _ := rdb.Get(ctx, prefix+"bytes").Int64(); got != total {
		t.Fatalf("bytes %d, want %d", got, total)
	}
	sets := rdb.Keys(ctx, prefix+"o:*").Val()
	if len(sets) != len(bySet) {
		t.Fatalf("owners' sets %q, want those of %v", sets, bySet)
	}
	for o, ks := range bySet {
		got := rdb.ZRange(ctx, o, 0, -1).Val()
		slices.Sort(got)
		slices.Sort(ks)
		if !slices.Equal(got, ks) {
			t.Fatalf("set %q: %q, want %q", o, got, ks)
		}
		if n := rdb.ZScore(ctx, prefix+"ocount", o).Val(); int(n) != len(ks) {
			t.Fatalf("count of %q: %v, want %d", o, n, len(ks))
		}
		if n := rdb.ZScore(ctx, prefix+"obytes", o).Val(); int64(n) != perSet[o] {
			t.Fatalf("bytes of %q: %v, want %d", o, n, perSet[o])
		}
	}
	if n := rdb.ZCard(ctx, prefix+"ocount").Val(); int(n) != len(bySet) {
		t.Fatalf("%d owners counted, want %d", n, len(bySet))
	}
	if n := rdb.ZCard(ctx, prefix+"obytes").Val(); int(n) != len(bySet) {
		t.Fatalf("%d owners' bytes, want %d", n, len(bySet))
	}
}

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

// TestCounters runs random Puts of records of several sizes, Deletes and
// clock steps through two replicas with other bounds, and checks the
// structures after each.
func TestCounters(t *testing.T) {
	sock := redistest.Start(t)
	rdb := redistest.Client(t, sock)
	ctx := context.Background()
	c := &clock{t: time.Unix(1e9, 0)}
	var replicas []*rediscache.Store
	for _, cfg := range []rediscache.Config{
		{MaxEntries: 12, MaxOwnerEntries: 4, MaxBytes: 3000, MaxOwnerBytes: 1200},
		{MaxEntries: 9, MaxOwnerEntries: 3},
	} {
		cfg.Client, cfg.Prefix, cfg.TTL, cfg.Now = redistest.Client(t, sock), "{counters}:", time.Hour, c.Now
		s, err := rediscache.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, s)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	owners := []string{"", "a", "a", "a", "bb", "c:d", strings.Repeat("e", 200)}
	for step := range 1000 {
		s := replicas[rng.IntN(len(replicas))]
		owner, id := owners[rng.IntN(len(owners))], fmt.Sprint("r", rng.IntN(8))
		var err error
		switch p := rng.IntN(10); {
		case p < 7:
			if err = s.Put(ctx, cache.Record{Owner: owner, ID: id, Response: []byte(strings.Repeat("x", rng.IntN(600)))}); errors.Is(err, cache.ErrTooLarge) {
				err = nil
			}
		case p < 9:
			if err = s.Delete(ctx, owner, id); errors.Is(err, cache.ErrNotFound) {
				err = nil
			}
		default:
			c.Advance(time.Duration(rng.IntN(15)) * time.Minute)
		}
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		verify(t, rdb, "{counters}:")
		for _, o := range rdb.ZRangeWithScores(ctx, "{counters}:ocount", 0, -1).Val() {
			if o.Score > 4 {
				t.Fatalf("step %d: %v holds %v records", step, o.Member, o.Score)
			}
		}
	}
}

// TestOlderRecords checks records put before the owners' bounds, which
// no owner counts: they leave first when the store is full, or as they
// expire.
func TestOlderRecords(t *testing.T) {
	rdb := redistest.Client(t, redistest.Start(t))
	ctx := context.Background()
	c := &clock{t: time.Unix(1e9, 0)}
	s, err := rediscache.New(rediscache.Config{Client: rdb, Prefix: "{old}:", TTL: time.Hour, Now: c.Now, MaxEntries: 4, MaxOwnerEntries: 2})
	if err != nil {
		t.Fatal(err)
	}
	put := func(owner, id string) {
		t.Helper()
		if err := s.Put(ctx, cache.Record{Owner: owner, ID: id}); err != nil {
			t.Fatal(err)
		}
		verify(t, rdb, "{old}:")
		c.Advance(time.Second)
	}
	kept := func(owner, id string, want bool) {
		t.Helper()
		if _, err := s.Get(ctx, owner, id); (err == nil) != want || err != nil && !errors.Is(err, cache.ErrNotFound) {
			t.Errorf("Get(%q, %q): %v, want kept %v", owner, id, err, want)
		}
	}
	put("a", "old1")
	put("a", "old2")
	put("b", "old3")
	// What the older version did not write.
	rdb.Del(ctx, "{old}:owners", "{old}:ocount", "{old}:obytes", "{old}:o:1:a", "{old}:o:1:b")
	verify(t, rdb, "{old}:")
	put("c", "c1")
	// Full: the older records go first, oldest first.
	put("a", "a1")
	put("a", "a2")
	kept("a", "old1", false)
	kept("a", "old2", false)
	kept("b", "old3", true)
	put("c", "c2")
	kept("b", "old3", false)
	for _, id := range []string{"a1", "a2"} {
		kept("a", id, true)
	}
	for _, id := range []string{"c1", "c2"} {
		kept("c", id, true)
	}
}
