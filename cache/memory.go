package cache

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Defaults of MemoryConfig.
const (
	DefaultMemoryMaxEntries = 10000
	DefaultMemoryMaxBytes   = 64 << 20
)

// MemoryConfig configures a MemoryStore. The zero value is useful: see
// each field's default.
type MemoryConfig struct {
	// TTL is how long a record is kept after it was put. 0 means
	// DefaultTTL.
	TTL time.Duration
	// MaxEntries bounds the records kept; past it the oldest go first.
	// 0 means DefaultMemoryMaxEntries.
	MaxEntries int
	// MaxBytes bounds the sum of the records' Size; past it the oldest go
	// first. 0 means DefaultMemoryMaxBytes.
	MaxBytes int64
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// MemoryStore is a Store in memory, bounded by a TTL, a number of
// entries and a size: records expire TTL after they were put, and the
// oldest are evicted first when a bound is reached. It is safe for
// concurrent use, starts no goroutine (expired records are dropped as the
// store is used) and has nothing to close. Its contents are lost with the
// process. Create it with NewMemoryStore; the zero value is not usable.
type MemoryStore struct {
	ttl        time.Duration
	maxEntries int
	maxBytes   int64
	now        func() time.Time

	mu    sync.Mutex
	order *list.List // of *memEntry, oldest first
	index map[memKey]*list.Element
	bytes int64
}

type memKey struct{ owner, id string }

type memEntry struct {
	key    memKey
	record Record
	size   int64
}

// NewMemoryStore returns an empty store. It fails on a negative bound.
func NewMemoryStore(cfg MemoryConfig) (*MemoryStore, error) {
	if cfg.TTL < 0 || cfg.MaxEntries < 0 || cfg.MaxBytes < 0 {
		return nil, fmt.Errorf("cache: MemoryConfig has a negative bound: TTL %v, MaxEntries %d, MaxBytes %d",
			cfg.TTL, cfg.MaxEntries, cfg.MaxBytes)
	}
	s := &MemoryStore{ttl: cfg.TTL, maxEntries: cfg.MaxEntries, maxBytes: cfg.MaxBytes, now: cfg.Now,
		order: list.New(), index: map[memKey]*list.Element{}}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if s.maxEntries == 0 {
		s.maxEntries = DefaultMemoryMaxEntries
	}
	if s.maxBytes == 0 {
		s.maxBytes = DefaultMemoryMaxBytes
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Get returns the record id of owner, or ErrNotFound.
func (s *MemoryStore) Get(_ context.Context, owner, id string) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
	el, ok := s.index[memKey{owner, id}]
	// expire stops at the first live record; a clock that stepped back
	// can leave an expired one behind it.
	if !ok || !s.now().Before(el.Value.(*memEntry).record.Expires) {
		return Record{}, ErrNotFound
	}
	return clone(el.Value.(*memEntry).record), nil
}

// Put stores a copy of r, evicting the oldest records as needed. A record
// whose Size exceeds MaxBytes on its own is refused with an error
// wrapping ErrTooLarge.
func (s *MemoryStore) Put(_ context.Context, r Record) error {
	if r.ID == "" {
		return errors.New("cache: Put of a record without an ID")
	}
	size := r.Size()
	if size > s.maxBytes {
		return fmt.Errorf("%w: record %q is %d bytes, over the store's %d", ErrTooLarge, r.ID, size, s.maxBytes)
	}
	r = clone(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	key := memKey{r.Owner, r.ID}
	if el, ok := s.index[key]; ok {
		s.remove(el)
	}
	s.expire()
	for s.order.Len() > 0 && (s.order.Len() >= s.maxEntries || s.bytes+size > s.maxBytes) {
		s.remove(s.order.Front())
	}
	r.Expires = s.now().Add(s.ttl)
	s.index[key] = s.order.PushBack(&memEntry{key: key, record: r, size: size})
	s.bytes += size
	return nil
}

// Delete removes the record id of owner, or returns ErrNotFound.
func (s *MemoryStore) Delete(_ context.Context, owner, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
	el, ok := s.index[memKey{owner, id}]
	if !ok {
		return ErrNotFound
	}
	s.remove(el)
	return nil
}

// Len returns the number of records kept, expired ones left out.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
	return s.order.Len()
}

// expire drops the records whose TTL has passed: the oldest, since every
// record lives the same TTL. The caller holds mu.
func (s *MemoryStore) expire() {
	now := s.now()
	for el := s.order.Front(); el != nil && !now.Before(el.Value.(*memEntry).record.Expires); el = s.order.Front() {
		s.remove(el)
	}
}

// remove drops one record. The caller holds mu.
func (s *MemoryStore) remove(el *list.Element) {
	e := s.order.Remove(el).(*memEntry)
	delete(s.index, e.key)
	s.bytes -= e.size
}

// clone returns r with its own copies of the byte slices.
func clone(r Record) Record {
	r.Response = bytes.Clone(r.Response)
	r.Transcript = bytes.Clone(r.Transcript)
	return r
}
