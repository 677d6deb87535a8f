package httpapi

import (
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// Defaults of MemoryStoreConfig.
const (
	DefaultStoreTTL        = 24 * time.Hour
	DefaultStoreMaxEntries = 10000
	DefaultStoreMaxBytes   = 64 << 20
)

// MemoryStoreConfig configures a MemoryStore. The zero value is useful:
// see each field's default.
type MemoryStoreConfig struct {
	// TTL is how long a response is kept after it was put. 0 means
	// DefaultStoreTTL.
	TTL time.Duration
	// MaxEntries bounds the responses kept; past it the oldest go first.
	// 0 means DefaultStoreMaxEntries.
	MaxEntries int
	// MaxBytes bounds the size of the responses kept, measured as their
	// JSON; past it the oldest go first. 0 means DefaultStoreMaxBytes.
	MaxBytes int64
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// MemoryStore is a ResponseStore in memory, bounded by a TTL, a number of
// entries and a size: entries expire TTL after they were put, and the
// oldest are evicted first when a bound is reached. It is safe for
// concurrent use, starts no goroutine (expired entries are dropped as the
// store is used) and has nothing to close. Its contents are lost with the
// process.
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
	key     memKey
	value   StoredResponse
	size    int64
	expires time.Time
}

// NewMemoryStore returns an empty store. It fails on a negative bound.
func NewMemoryStore(cfg MemoryStoreConfig) (*MemoryStore, error) {
	if cfg.TTL < 0 || cfg.MaxEntries < 0 || cfg.MaxBytes < 0 {
		return nil, fmt.Errorf("httpapi: MemoryStoreConfig has a negative bound: %+v", cfg)
	}
	s := &MemoryStore{ttl: cfg.TTL, maxEntries: cfg.MaxEntries, maxBytes: cfg.MaxBytes, now: cfg.Now,
		order: list.New(), index: map[memKey]*list.Element{}}
	if s.ttl == 0 {
		s.ttl = DefaultStoreTTL
	}
	if s.maxEntries == 0 {
		s.maxEntries = DefaultStoreMaxEntries
	}
	if s.maxBytes == 0 {
		s.maxBytes = DefaultStoreMaxBytes
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Get returns the response id of owner, or ErrNotFound.
func (s *MemoryStore) Get(_ context.Context, owner, id string) (StoredResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
	el, ok := s.index[memKey{owner, id}]
	if !ok {
		return StoredResponse{}, ErrNotFound
	}
	return el.Value.(*memEntry).value, nil
}

// Put stores r under owner and its response's id. A response larger
// than MaxBytes on its own is refused with an error.
func (s *MemoryStore) Put(_ context.Context, owner string, r StoredResponse) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("httpapi: sizing a stored response: %w", err)
	}
	size := int64(len(b))
	if size > s.maxBytes {
		return fmt.Errorf("httpapi: response %s is %d bytes, over the store's %d", r.Response.ID, size, s.maxBytes)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := memKey{owner, r.Response.ID}
	if el, ok := s.index[key]; ok {
		s.remove(el)
	}
	s.expire()
	for s.order.Len() > 0 && (s.order.Len() >= s.maxEntries || s.bytes+size > s.maxBytes) {
		s.remove(s.order.Front())
	}
	e := &memEntry{key: key, value: r, size: size, expires: s.now().Add(s.ttl)}
	s.index[key] = s.order.PushBack(e)
	s.bytes += size
	return nil
}

// Delete removes the response id of owner, or returns ErrNotFound.
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

// Len returns the number of responses kept, expired ones left out.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
	return s.order.Len()
}

// expire drops the entries whose TTL has passed: the oldest, since every
// entry lives the same TTL. The caller holds mu.
func (s *MemoryStore) expire() {
	now := s.now()
	for el := s.order.Front(); el != nil && !now.Before(el.Value.(*memEntry).expires); el = s.order.Front() {
		s.remove(el)
	}
}

// remove drops one entry. The caller holds mu.
func (s *MemoryStore) remove(el *list.Element) {
	e := s.order.Remove(el).(*memEntry)
	delete(s.index, e.key)
	s.bytes -= e.size
}
