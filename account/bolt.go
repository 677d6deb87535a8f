package account

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BoltLockTimeout is how long OpenBolt waits for the file's lock while
// another Bolt (in this or another process) has the file open.
const BoltLockTimeout = time.Second

// Bolt is a Store in one file, kept by go.etcd.io/bbolt: the default of a
// server, whose accounts, keys and monthly counters survive restarts.
// Every Update is one bbolt transaction, synced to disk before it
// returns. Values with a TTL keep their expiry (on the wall clock,
// time.Now) and read as absent after it; they are removed from the file
// by the first Updates after it, up to 100 of them per Update
// (oldest expiry first), and when the file is opened.
//
// Update runs fn inside the write transaction, so fn must not call the
// store (it would wait for itself). A Bolt is safe for concurrent use:
// reads run in parallel, writes one at a time. Only one Bolt at a time
// may have a file open: the file is locked. Create it with OpenBolt;
// whoever opened it calls Close once, after its last use. The zero value
// is not usable.
type Bolt struct {
	db  *bolt.DB
	now func() time.Time
}

var _ Store = (*Bolt)(nil)

// The file's layout: a bucket, docs, whose keys are the Store's keys and
// whose values are the expiry (Unix nanoseconds, big-endian; 0 for none)
// followed by the value; and a bucket, expiries, that indexes the docs
// with an expiry: its keys are the expiry (as in docs) followed by the
// doc's key, so that a cursor meets them by time, and its values are
// empty.
var (
	bucketDocs     = []byte("docs")
	bucketExpiries = []byte("expiries")
)

// boltHeader is the length of a value's expiry.
const boltHeader = 8

// OpenBolt opens the store in the file path, creating it (mode 0600) if
// needed, and removes the values that expired while it was closed. It
// fails if another Bolt keeps the file open past BoltLockTimeout.
func OpenBolt(path string) (*Bolt, error) {
	return openBolt(path, time.Now)
}

// openBolt is OpenBolt on a clock.
func openBolt(path string, now func() time.Time) (*Bolt, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: BoltLockTimeout})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("account: %s is open in another Bolt: %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("account: opening %s: %w", path, err)
	}
	s := &Bolt{db: db, now: now}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketDocs)
		if err != nil {
			return err
		}
		// The index is rebuilt, so that a file of a version without one
		// (or whatever it holds) has one that matches its docs.
		if tx.Bucket(bucketExpiries) != nil {
			if err := tx.DeleteBucket(bucketExpiries); err != nil {
				return err
			}
		}
		x, err := tx.CreateBucket(bucketExpiries)
		if err != nil {
			return err
		}
		var expired [][]byte
		err = b.ForEach(func(k, v []byte) error {
			switch {
			case s.expired(v):
				expired = append(expired, slices.Clone(k))
			case binary.BigEndian.Uint64(v) != 0:
				return x.Put(expiryKey(v[:boltHeader], k), nil)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range expired {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("account: opening %s: %w", path, err)
	}
	return s, nil
}

// Close closes the file. Calls after the first return nil.
func (s *Bolt) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("account: closing %s: %w", s.db.Path(), err)
	}
	return nil
}

// expired reports whether a stored value (expiry and value) has expired,
// or is too short to be one (which reads as absent too).
func (s *Bolt) expired(v []byte) bool {
	if len(v) < boltHeader {
		return true
	}
	exp := int64(binary.BigEndian.Uint64(v))
	return exp != 0 && s.now().UnixNano() >= exp
}

// expiryKey returns the key of the expiries bucket that indexes the doc
// key whose stored value begins with exp.
func expiryKey(exp, key []byte) []byte {
	return append(slices.Clip(exp[:boltHeader]), key...)
}

// sweep removes up to sweepBatch docs whose expiry has passed, by the
// expiries bucket, and their index entries.
func (s *Bolt) sweep(tx *bolt.Tx) error {
	b, x := tx.Bucket(bucketDocs), tx.Bucket(bucketExpiries)
	now := uint64(s.now().UnixNano())
	var done [][]byte
	c := x.Cursor()
	for k, _ := c.First(); k != nil && len(done) < sweepBatch; k, _ = c.Next() {
		if len(k) < boltHeader || binary.BigEndian.Uint64(k) > now {
			break
		}
		done = append(done, slices.Clone(k))
	}
	for _, k := range done {
		if err := x.Delete(k); err != nil {
			return err
		}
		// The doc goes only if it still has this expiry: Update removes
		// the entry of a value it replaces, but a file may hold others.
		doc := k[boltHeader:]
		if v := b.Get(doc); v != nil && bytes.Equal(v[:min(len(v), boltHeader)], k[:boltHeader]) {
			if err := b.Delete(doc); err != nil {
				return err
			}
		}
	}
	return nil
}

// Get returns a copy of key's value, or an error wrapping ErrNotFound.
func (s *Bolt) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketDocs).Get([]byte(key))
		if v == nil || s.expired(v) {
			return fmt.Errorf("account: %q: %w", key, ErrNotFound)
		}
		out = slices.Clone(v[boltHeader:])
		return nil
	})
	return out, err
}

// Update replaces key's value by fn(old) in one transaction, as
// Store.Update says.
func (s *Bolt) Update(ctx context.Context, key string, ttl time.Duration, fn func(old []byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k := []byte(key)
	if maxKey := bolt.MaxKeySize - boltHeader; len(k) == 0 || len(k) > maxKey {
		return fmt.Errorf("%w: a Bolt key is 1 to %d bytes, not %d", ErrInvalid, maxKey, len(k))
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		if err := s.sweep(tx); err != nil {
			return err
		}
		b, x := tx.Bucket(bucketDocs), tx.Bucket(bucketExpiries)
		var old, prevExp []byte
		if v := b.Get(k); len(v) >= boltHeader {
			prevExp = slices.Clone(v[:boltHeader])
			if !s.expired(v) {
				old = slices.Clone(v[boltHeader:])
			}
		}
		v, err := fn(old)
		if err != nil {
			return err
		}
		if prevExp != nil && binary.BigEndian.Uint64(prevExp) != 0 {
			if err := x.Delete(expiryKey(prevExp, k)); err != nil {
				return err
			}
		}
		if v == nil {
			return b.Delete(k)
		}
		var exp int64
		if ttl > 0 {
			exp = s.now().Add(ttl).UnixNano()
		}
		buf := make([]byte, boltHeader+len(v))
		binary.BigEndian.PutUint64(buf, uint64(exp))
		copy(buf[boltHeader:], v)
		if exp != 0 {
			if err := x.Put(expiryKey(buf, k), nil); err != nil {
				return err
			}
		}
		return b.Put(k, buf)
	})
}

// List returns the live keys that begin with prefix, in order.
func (s *Bolt) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := []byte(prefix)
	var keys []string
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketDocs).Cursor()
		for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
			if !s.expired(v) {
				keys = append(keys, string(k))
			}
		}
		return nil
	})
	return keys, err
}
