// Package rediscache is a cache.Store in Redis, so that several replicas
// of a server share stored responses (previous_response_id, GET and
// DELETE /v1/responses/{id}). It passes package cachetest's suite.
//
// Each record is a Redis hash; a sorted set orders the records by when
// they were put, for expiry, and a counter sums their sizes. Each owner
// has a sorted set of its own records, and two sorted sets rank the
// owners by the records and bytes they hold, so that eviction follows
// cache.Store.Put's rules per owner. Put and Delete are Lua scripts,
// atomic on the server, so that the bounds hold however many replicas
// write. Expiry is decided with the store's clock (Config.Now); Redis
// also expires each record by itself a little after its TTL. All keys
// share the hash tag of the prefix, so that a Redis Cluster keeps them on
// one slot.
//
// Records put by a version of this package before the per-owner bounds
// count against the store's bounds but no owner's; they leave as they
// expire, and first of all when the store's bounds are reached.
package rediscache

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inferkit/inferkit/cache"
	"github.com/inferkit/inferkit/internal/rediserr"
)

// DefaultPrefix begins every key when Config.Prefix is empty.
const DefaultPrefix = "{inferkit:responses}:"

// Defaults of Config's per-owner bounds when the store has no bound of
// its own to take a share of: those of a cache.BoltStore with its
// defaults, 125,000 records and 128 MiB.
const (
	DefaultMaxOwnerEntries = cache.DefaultBoltMaxEntries / cache.DefaultOwnerShare
	DefaultMaxOwnerBytes   = cache.DefaultBoltMaxBytes / cache.DefaultOwnerShare
)

// Config configures a Store.
type Config struct {
	// Client is the Redis connection. Required; the caller closes it.
	Client redis.UniversalClient
	// Prefix begins every key the store writes; in a Redis Cluster it
	// must hold a hash tag. Empty means DefaultPrefix.
	Prefix string
	// TTL is how long a record is kept after it was put. 0 means
	// cache.DefaultTTL.
	TTL time.Duration
	// MaxEntries and MaxBytes bound the records kept and the sum of
	// their sizes; past them the oldest record of the owner holding the
	// most goes first (see cache.Store.Put). 0 means no bound of the
	// store's own (Redis's maxmemory policy still applies).
	MaxEntries int
	MaxBytes   int64
	// MaxOwnerEntries and MaxOwnerBytes bound the records of one owner
	// and the sum of their sizes; past them the owner's own oldest go
	// first. 0 means MaxEntries/cache.DefaultOwnerShare (and
	// MaxBytes/cache.DefaultOwnerShare), at least 1, or, where that
	// global bound is 0, DefaultMaxOwnerEntries (DefaultMaxOwnerBytes).
	// They may not exceed a global bound that is set; set them equal to
	// it for no bound of their own.
	MaxOwnerEntries int
	MaxOwnerBytes   int64
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// Store is a cache.Store in Redis. Create it with New. It is safe for
// concurrent use; the caller closes the Client.
type Store struct {
	rdb    redis.UniversalClient
	prefix string
	ttl    time.Duration
	maxN   int
	maxB   int64
	ownerN int
	ownerB int64
	now    func() time.Time
}

var _ cache.Store = (*Store)(nil)

// New returns a Store on cfg.Client. It fails without a client, on a
// negative TTL or bound, or on a per-owner bound over the global one.
func New(cfg Config) (*Store, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("rediscache: Config.Client is nil")
	case cfg.TTL < 0 || cfg.MaxEntries < 0 || cfg.MaxBytes < 0 || cfg.MaxOwnerEntries < 0 || cfg.MaxOwnerBytes < 0:
		return nil, errors.New("rediscache: negative TTL or bound")
	}
	s := &Store{rdb: cfg.Client, prefix: cfg.Prefix, ttl: cfg.TTL, maxN: cfg.MaxEntries, maxB: cfg.MaxBytes,
		ownerN: ownerBound(cfg.MaxEntries, cfg.MaxOwnerEntries, DefaultMaxOwnerEntries),
		ownerB: ownerBound(cfg.MaxBytes, cfg.MaxOwnerBytes, DefaultMaxOwnerBytes), now: cfg.Now}
	switch {
	case s.maxN > 0 && s.ownerN > s.maxN:
		return nil, fmt.Errorf("rediscache: MaxOwnerEntries %d over MaxEntries %d", s.ownerN, s.maxN)
	case s.maxB > 0 && s.ownerB > s.maxB:
		return nil, fmt.Errorf("rediscache: MaxOwnerBytes %d over MaxBytes %d", s.ownerB, s.maxB)
	}
	if s.prefix == "" {
		s.prefix = DefaultPrefix
	}
	if s.ttl == 0 {
		s.ttl = cache.DefaultTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// ownerBound applies the default to a per-owner bound.
func ownerBound[N int | int64](global, owner, def N) N {
	switch {
	case owner > 0:
		return owner
	case global > 0:
		return max(global/cache.DefaultOwnerShare, 1)
	default:
		return def
	}
}

var (
	//go:embed drop.lua
	dropSrc string
	//go:embed put.lua
	putSrc string
	//go:embed delete.lua
	deleteSrc string

	putScript    = redis.NewScript(dropSrc + putSrc)
	deleteScript = redis.NewScript(dropSrc + deleteSrc)
)

// shared returns the keys that every script takes first (see drop.lua),
// followed by more.
func (s *Store) shared(more ...string) []string {
	return append([]string{s.prefix + "order", s.prefix + "sizes", s.prefix + "bytes",
		s.prefix + "owners", s.prefix + "ocount", s.prefix + "obytes"}, more...)
}

// key returns the Redis key of a record; the owner's length keeps
// ("a:b", "c") apart from ("a", "b:c").
func (s *Store) key(owner, id string) string {
	return s.prefix + "r:" + strconv.Itoa(len(owner)) + ":" + owner + ":" + id
}

// ownerKey returns the Redis key of an owner's set of records.
func (s *Store) ownerKey(owner string) string {
	return s.prefix + "o:" + strconv.Itoa(len(owner)) + ":" + owner
}

// stamp writes a time as a fixed-width decimal of Unix nanoseconds, which
// the scripts compare as strings (Lua's numbers lose nanoseconds).
func stamp(t time.Time) string { return fmt.Sprintf("%020d", t.UnixNano()) }

// Get implements cache.Store.
func (s *Store) Get(ctx context.Context, owner, id string) (cache.Record, error) {
	vals, err := s.rdb.HMGet(ctx, s.key(owner, id), "response", "transcript", "expires").Result()
	if err != nil {
		return cache.Record{}, fmt.Errorf("rediscache: get: %w", unavailable(err))
	}
	resp, ok1 := vals[0].(string)
	tr, ok2 := vals[1].(string)
	exp, ok3 := vals[2].(string)
	if !ok1 || !ok2 || !ok3 || exp <= stamp(s.now()) {
		return cache.Record{}, fmt.Errorf("rediscache: %q of %q: %w", id, owner, cache.ErrNotFound)
	}
	ns, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return cache.Record{}, fmt.Errorf("rediscache: record %q has expiry %q", id, exp)
	}
	return cache.Record{Owner: owner, ID: id, Response: []byte(resp), Transcript: []byte(tr), Expires: time.Unix(0, ns).UTC()}, nil
}

// Put implements cache.Store. A record whose Size exceeds the owner's
// byte bound on its own is refused with an error wrapping
// cache.ErrTooLarge.
func (s *Store) Put(ctx context.Context, r cache.Record) error {
	if r.ID == "" {
		return errors.New("rediscache: Record.ID is empty")
	}
	size := r.Size()
	if size > s.ownerB {
		return fmt.Errorf("rediscache: record %q of %d bytes over the bound of %d per owner: %w", r.ID, size, s.ownerB, cache.ErrTooLarge)
	}
	now := s.now()
	// Redis drops the record by itself a minute after the TTL, in its
	// own time.
	expireMs := (s.ttl + time.Minute).Milliseconds()
	err := putScript.Run(ctx, s.rdb, s.shared(s.key(r.Owner, r.ID), s.ownerKey(r.Owner), s.prefix+"seq"),
		r.Response, r.Transcript, stamp(now.Add(s.ttl)), size, stamp(now), s.maxN, s.maxB, expireMs, s.ownerN, s.ownerB).Err()
	if err != nil {
		return fmt.Errorf("rediscache: put: %w", unavailable(err))
	}
	return nil
}

// Delete implements cache.Store.
func (s *Store) Delete(ctx context.Context, owner, id string) error {
	n, err := deleteScript.Run(ctx, s.rdb, s.shared(s.key(owner, id)), stamp(s.now())).Int()
	if err != nil {
		return fmt.Errorf("rediscache: delete: %w", unavailable(err))
	}
	if n == 0 {
		return fmt.Errorf("rediscache: %q of %q: %w", id, owner, cache.ErrNotFound)
	}
	return nil
}

// unavailable wraps err with cache.ErrUnavailable when the server cannot serve now.
func unavailable(err error) error { return rediserr.Wrap(err, cache.ErrUnavailable) }
