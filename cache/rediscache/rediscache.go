// Package rediscache is a cache.Store in Redis, so that several replicas
// of a server share stored responses (previous_response_id, GET and
// DELETE /v1/responses/{id}). It passes package cachetest's suite.
//
// Each record is a Redis hash; a sorted set orders the records by when
// they were put, for eviction past the bounds, and a counter sums their
// sizes. Put and Delete are Lua scripts, atomic on the server, so that
// the bounds hold however many replicas write. Expiry is decided with
// the store's clock (Config.Now); Redis also expires each record by
// itself a little after its TTL. All keys share the hash tag of the
// prefix, so that a Redis Cluster keeps them on one slot.
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
)

// DefaultPrefix begins every key when Config.Prefix is empty.
const DefaultPrefix = "{inferkit:responses}:"

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
	// their sizes; past them the oldest go first. 0 means no bound of
	// the store's own (Redis's maxmemory policy still applies).
	MaxEntries int
	MaxBytes   int64
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
	now    func() time.Time
}

var _ cache.Store = (*Store)(nil)

// New returns a Store on cfg.Client.
func New(cfg Config) (*Store, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("rediscache: Config.Client is nil")
	case cfg.TTL < 0 || cfg.MaxEntries < 0 || cfg.MaxBytes < 0:
		return nil, errors.New("rediscache: negative TTL or bound")
	}
	s := &Store{rdb: cfg.Client, prefix: cfg.Prefix, ttl: cfg.TTL, maxN: cfg.MaxEntries, maxB: cfg.MaxBytes, now: cfg.Now}
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

var (
	//go:embed put.lua
	putSrc string
	//go:embed delete.lua
	deleteSrc string

	putScript    = redis.NewScript(putSrc)
	deleteScript = redis.NewScript(deleteSrc)
)

// key returns the Redis key of a record; the owner's length keeps
// ("a:b", "c") apart from ("a", "b:c").
func (s *Store) key(owner, id string) string {
	return s.prefix + "r:" + strconv.Itoa(len(owner)) + ":" + owner + ":" + id
}

// stamp writes a time as a fixed-width decimal of Unix nanoseconds, which
// the scripts compare as strings (Lua's numbers lose nanoseconds).
func stamp(t time.Time) string { return fmt.Sprintf("%020d", t.UnixNano()) }

// Get implements cache.Store.
func (s *Store) Get(ctx context.Context, owner, id string) (cache.Record, error) {
	vals, err := s.rdb.HMGet(ctx, s.key(owner, id), "response", "transcript", "expires").Result()
	if err != nil {
		return cache.Record{}, fmt.Errorf("rediscache: get: %w", err)
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

// Put implements cache.Store.
func (s *Store) Put(ctx context.Context, r cache.Record) error {
	if r.ID == "" {
		return errors.New("rediscache: Record.ID is empty")
	}
	size := r.Size()
	if s.maxB > 0 && size > s.maxB {
		return fmt.Errorf("rediscache: record %q of %d bytes over the bound of %d: %w", r.ID, size, s.maxB, cache.ErrTooLarge)
	}
	now := s.now()
	// Redis drops the record by itself a minute after the TTL, in its
	// own time.
	expireMs := (s.ttl + time.Minute).Milliseconds()
	err := putScript.Run(ctx, s.rdb, []string{s.key(r.Owner, r.ID), s.prefix + "order", s.prefix + "sizes", s.prefix + "bytes", s.prefix + "seq"},
		r.Response, r.Transcript, stamp(now.Add(s.ttl)), size, stamp(now), s.maxN, s.maxB, expireMs).Err()
	if err != nil {
		return fmt.Errorf("rediscache: put: %w", err)
	}
	return nil
}

// Delete implements cache.Store.
func (s *Store) Delete(ctx context.Context, owner, id string) error {
	n, err := deleteScript.Run(ctx, s.rdb, []string{s.key(owner, id), s.prefix + "order", s.prefix + "sizes", s.prefix + "bytes"},
		stamp(s.now())).Int()
	if err != nil {
		return fmt.Errorf("rediscache: delete: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("rediscache: %q of %q: %w", id, owner, cache.ErrNotFound)
	}
	return nil
}
