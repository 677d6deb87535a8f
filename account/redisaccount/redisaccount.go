// Package redisaccount is an account.Store in Redis, so that the
// replicas of a server share accounts, keys, sessions and monthly
// counters: a key revoked through one replica is refused by all at once.
//
// Each document is one Redis string under Config.Prefix. Update is
// optimistic: WATCH the key, read it, run fn, and write in MULTI/EXEC,
// retrying (a bounded number of times, with a short random pause) when
// another writer changed the key first. TTLs are Redis's own (SET PX),
// on the server's clock. List scans the prefix (every master of a
// cluster, every shard of a ring) and sorts.
package redisaccount

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/internal/rediserr"
)

// DefaultPrefix begins every Redis key when Config.Prefix is empty.
const DefaultPrefix = "inferkit:account:"

// MaxRetries is how many times Update runs fn before it gives up on a key
// that other writers keep changing, returning an error wrapping
// ErrContention.
const MaxRetries = 100

// ErrContention: an Update lost the race for its key MaxRetries times.
var ErrContention = errors.New("redisaccount: too many concurrent writers of one key")

// Config configures a Store.
type Config struct {
	// Client is the Redis connection: a *redis.Client, *redis.ClusterClient
	// or *redis.Ring. Required; the caller closes it.
	Client redis.UniversalClient
	// Prefix begins every key the Store writes. Empty means
	// DefaultPrefix.
	Prefix string
}

// Store is an account.Store on Redis. Create it with New. It is safe for
// concurrent use, by several processes, and holds nothing to close
// besides the caller's Client. Writes are as durable as the server's
// persistence makes them.
type Store struct {
	rdb    redis.UniversalClient
	prefix string
}

var _ account.Store = (*Store)(nil)

// New returns a Store on cfg.Client.
func New(cfg Config) (*Store, error) {
	if cfg.Client == nil {
		return nil, errors.New("redisaccount: Config.Client is nil")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	return &Store{rdb: cfg.Client, prefix: cfg.Prefix}, nil
}

// Get returns key's value, or an error wrapping account.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	v, err := s.rdb.Get(ctx, s.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("redisaccount: %q: %w", key, account.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("redisaccount: get %q: %w", key, unavailable(err))
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// Update replaces key's value by fn(old) as account.Store says. ttl is
// rounded up to a millisecond; 0 stores the value without expiry.
func (s *Store) Update(ctx context.Context, key string, ttl time.Duration, fn func(old []byte) ([]byte, error)) error {
	k := s.prefix + key
	if ttl > 0 && ttl < time.Millisecond {
		ttl = time.Millisecond
	}
	var fnErr error
	txf := func(tx *redis.Tx) error {
		old, err := tx.Get(ctx, k).Bytes()
		switch {
		case errors.Is(err, redis.Nil):
			old = nil
		case err != nil:
			return err
		case old == nil:
			old = []byte{}
		}
		v, err := fn(old)
		if err != nil {
			fnErr = err
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			if v == nil {
				p.Del(ctx, k)
			} else {
				p.Set(ctx, k, v, ttl)
			}
			return nil
		})
		return err
	}
	for attempt := range MaxRetries {
		err := s.rdb.Watch(ctx, txf, k)
		switch {
		case err == nil:
			return nil
		case fnErr != nil:
			return fnErr
		case !errors.Is(err, redis.TxFailedErr):
			return fmt.Errorf("redisaccount: update %q: %w", key, unavailable(err))
		}
		// Another writer changed the key: pause up to a few milliseconds,
		// longer as the race goes on, so that racers spread out.
		pause := time.Duration(rand.Int64N(int64(min(attempt+1, 10)) * int64(time.Millisecond)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
	return fmt.Errorf("redisaccount: update %q: %w (%d tries)", key, ErrContention, MaxRetries)
}

// List returns the keys that begin with prefix, in order, scanning every
// master of a cluster or shard of a ring.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	match := escapeGlob(s.prefix+prefix) + "*"
	var (
		mu   sync.Mutex
		keys []string
	)
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, match, 1000).Iterator()
		var found []string
		for iter.Next(ctx) {
			found = append(found, strings.TrimPrefix(iter.Val(), s.prefix))
		}
		if err := iter.Err(); err != nil {
			return err
		}
		mu.Lock()
		keys = append(keys, found...)
		mu.Unlock()
		return nil
	}
	var err error
	switch c := s.rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
	case *redis.Ring:
		err = c.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
	default:
		err = scan(ctx, s.rdb)
	}
	if err != nil {
		return nil, fmt.Errorf("redisaccount: scanning %q: %w", prefix, unavailable(err))
	}
	// SCAN may return a key more than once.
	slices.Sort(keys)
	return slices.Compact(keys), nil
}

// escapeGlob quotes the characters SCAN's MATCH treats specially.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// unavailable wraps err with account.ErrUnavailable when the server cannot serve now.
func unavailable(err error) error { return rediserr.Wrap(err, account.ErrUnavailable) }
