package cache

import (
	"bytes"
	"container/heap"
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
	// MaxEntries bounds the records kept; past it the oldest record of
	// the owner holding the most goes first (see Store.Put). 0 means
	// DefaultMemoryMaxEntries.
	MaxEntries int
	// MaxBytes bounds the sum of the records' Size, the same way. 0 means
	// DefaultMemoryMaxBytes.
	MaxBytes int64
	// MaxOwnerEntries bounds the records of one owner; past it the
	// owner's own oldest go first. 0 means MaxEntries/DefaultOwnerShare,
	// at least 1: 1,250 with the default MaxEntries. It may not exceed
	// MaxEntries; set it equal to MaxEntries for no bound of its own.
	MaxOwnerEntries int
	// MaxOwnerBytes bounds the sum of the Size of one owner's records,
	// the same way. 0 means MaxBytes/DefaultOwnerShare, at least 1:
	// 8 MiB with the default MaxBytes. It may not exceed MaxBytes.
	MaxOwnerBytes int64
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// MemoryStore is a Store in memory, bounded by a TTL, a number of
// entries and a size, each of these per owner and in all: records
// expire TTL after they were put, and when a bound is reached the oldest
// records are evicted, the owner's own or those of the owner holding the
// most (see Store.Put). It is safe for concurrent use, starts no
// goroutine (expired records are dropped as the store is used) and has
// nothing to close. Its contents are lost with the process. Create it
// with NewMemoryStore; the zero value is not usable.
type MemoryStore struct {
	ttl             time.Duration
	maxEntries      int
	maxBytes        int64
	maxOwnerEntries int
	maxOwnerBytes   int64
	now             func() time.Time

	mu     sync.Mutex
	order  list.List // of *memEntry, oldest first
	index  map[memKey]*memEntry
	bytes  int64
	owners map[string]*memOwner // those holding records
	// byEntries and byBytes order the owners, the one holding the most
	// first.
	byEntries, byBytes ownerHeap
}

type memKey struct{ owner, id string }

type memEntry struct {
	key    memKey
	record Record
	size   int64
	owner  *memOwner
	// el and ownerEl are the entry's places in the store's order and in
	// its owner's.
	el, ownerEl *list.Element
}

// memOwner is what one owner holds.
type memOwner struct {
	name  string
	order list.List // of *memEntry, oldest first
	bytes int64
	at    [2]int // indexes in byEntries and byBytes
}

// held returns what o holds by entries, or by bytes. A nil owner holds
// nothing.
func (o *memOwner) held(byBytes bool) int64 {
	switch {
	case o == nil:
		return 0
	case byBytes:
		return o.bytes
	default:
		return int64(o.order.Len())
	}
}

// NewMemoryStore returns an empty store. It fails on a negative bound, or
// on a per-owner bound over the global one.
func NewMemoryStore(cfg MemoryConfig) (*MemoryStore, error) {
	if cfg.TTL < 0 || cfg.MaxEntries < 0 || cfg.MaxBytes < 0 || cfg.MaxOwnerEntries < 0 || cfg.MaxOwnerBytes < 0 {
		return nil, fmt.Errorf("cache: MemoryConfig has a negative bound: TTL %v, MaxEntries %d, MaxBytes %d, MaxOwnerEntries %d, MaxOwnerBytes %d",
			cfg.TTL, cfg.MaxEntries, cfg.MaxBytes, cfg.MaxOwnerEntries, cfg.MaxOwnerBytes)
	}
	s := &MemoryStore{ttl: cfg.TTL, now: cfg.Now, index: map[memKey]*memEntry{}, owners: map[string]*memOwner{},
		byEntries: ownerHeap{which: 0}, byBytes: ownerHeap{which: 1}}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	var err error
	s.maxEntries, s.maxOwnerEntries, err = bounds("MemoryConfig", "Entries", cfg.MaxEntries, cfg.MaxOwnerEntries, DefaultMemoryMaxEntries)
	if err != nil {
		return nil, err
	}
	s.maxBytes, s.maxOwnerBytes, err = bounds("MemoryConfig", "Bytes", cfg.MaxBytes, cfg.MaxOwnerBytes, DefaultMemoryMaxBytes)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// bounds applies the defaults to a global bound and its per-owner twin,
// both not negative, and checks that the owner's fits the global one.
func bounds[N int | int64](config, what string, global, owner, def N) (N, N, error) {
	if global == 0 {
		global = def
	}
	if owner == 0 {
		owner = max(global/DefaultOwnerShare, 1)
	}
	if owner > global {
		return 0, 0, fmt.Errorf("cache: %s has MaxOwner%s %d over Max%s %d", config, what, owner, what, global)
	}
	return global, owner, nil
}

// Get returns the record id of owner, or ErrNotFound.
func (s *MemoryStore) Get(_ context.Context, owner, id string) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
	e, ok := s.index[memKey{owner, id}]
	// expire stops at the first live record; a clock that stepped back
	// can leave an expired one behind it.
	if !ok || !s.now().Before(e.record.Expires) {
		return Record{}, ErrNotFound
	}
	return clone(e.record), nil
}

// Put stores a copy of r, evicting records as Store.Put says. A record
// whose Size exceeds MaxOwnerBytes on its own is refused with an error
// wrapping ErrTooLarge.
func (s *MemoryStore) Put(_ context.Context, r Record) error {
	if r.ID == "" {
		return errors.New("cache: Put of a record without an ID")
	}
	size := r.Size()
	if size > s.maxOwnerBytes {
		return fmt.Errorf("%w: record %q is %d bytes, over the store's %d per owner", ErrTooLarge, r.ID, size, s.maxOwnerBytes)
	}
	r = clone(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	key := memKey{r.Owner, r.ID}
	if e, ok := s.index[key]; ok {
		s.remove(e)
	}
	s.expire()
	s.evict(r.Owner, size)
	o := s.owners[r.Owner]
	if o == nil {
		o = &memOwner{name: r.Owner}
		s.owners[r.Owner] = o
		heap.Push(&s.byEntries, o)
		heap.Push(&s.byBytes, o)
	}
	r.Expires = s.now().Add(s.ttl)
	e := &memEntry{key: key, record: r, size: size, owner: o}
	e.el = s.order.PushBack(e)
	e.ownerEl = o.order.PushBack(e)
	s.index[key] = e
	s.bytes += size
	o.bytes += size
	heap.Fix(&s.byEntries, o.at[0])
	heap.Fix(&s.byBytes, o.at[1])
	return nil
}

// evict makes room for one more record of owner, of size bytes: first
// within the owner's bounds, from its own records, then within the
// store's, from the owner holding the most. The caller holds mu.
func (s *MemoryStore) evict(owner string, size int64) {
	o := s.owners[owner]
	for o.held(false) > 0 && (o.held(false)+1 > int64(s.maxOwnerEntries) || o.held(true)+size > s.maxOwnerBytes) {
		s.remove(o.order.Front().Value.(*memEntry))
		o = s.owners[owner] // gone with its last record
	}
	for s.order.Len() > 0 && (s.order.Len()+1 > s.maxEntries || s.bytes+size > s.maxBytes) {
		h, would := &s.byBytes, o.held(true)+size
		if s.order.Len()+1 > s.maxEntries {
			h, would = &s.byEntries, o.held(false)+1
		}
		victim := h.owners[0]
		if o != nil && would >= victim.held(h.which == 1) {
			victim = o
		}
		s.remove(victim.order.Front().Value.(*memEntry))
		o = s.owners[owner]
	}
}

// Delete removes the record id of owner, or returns ErrNotFound.
func (s *MemoryStore) Delete(_ context.Context, owner, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
	e, ok := s.index[memKey{owner, id}]
	if !ok {
		return ErrNotFound
	}
	s.remove(e)
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
		s.remove(el.Value.(*memEntry))
	}
}

// remove drops one record, and its owner with its last record. The caller
// holds mu.
func (s *MemoryStore) remove(e *memEntry) {
	s.order.Remove(e.el)
	delete(s.index, e.key)
	s.bytes -= e.size
	o := e.owner
	o.order.Remove(e.ownerEl)
	o.bytes -= e.size
	if o.order.Len() == 0 {
		heap.Remove(&s.byEntries, o.at[0])
		heap.Remove(&s.byBytes, o.at[1])
		delete(s.owners, o.name)
		return
	}
	heap.Fix(&s.byEntries, o.at[0])
	heap.Fix(&s.byBytes, o.at[1])
}

// ownerHeap is a container/heap of owners, the one holding the most
// entries (which 0) or bytes (which 1) first. It keeps each owner's index
// in at[which].
type ownerHeap struct {
	owners []*memOwner
	which  int
}

func (h *ownerHeap) Len() int { return len(h.owners) }

func (h *ownerHeap) Less(i, j int) bool {
	return h.owners[i].held(h.which == 1) > h.owners[j].held(h.which == 1)
}

func (h *ownerHeap) Swap(i, j int) {
	h.owners[i], h.owners[j] = h.owners[j], h.owners[i]
	h.owners[i].at[h.which], h.owners[j].at[h.which] = i, j
}

func (h *ownerHeap) Push(x any) {
	o := x.(*memOwner)
	o.at[h.which] = len(h.owners)
	h.owners = append(h.owners, o)
}

func (h *ownerHeap) Pop() any {
	o := h.owners[len(h.owners)-1]
	h.owners[len(h.owners)-1] = nil
	h.owners = h.owners[:len(h.owners)-1]
	return o
}

// clone returns r with its own copies of the byte slices.
func clone(r Record) Record {
	r.Response = bytes.Clone(r.Response)
	r.Transcript = bytes.Clone(r.Transcript)
	return r
}
