package account

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Memory is a Store in this process's memory: for tests and for servers
// that need not remember accounts across restarts. Values with a TTL
// expire on the wall clock (time.Now); expired values read as absent, and
// each Update drops up to 100 of them, oldest expiry first, so
// that the values of owners and sessions never seen again do not pile up.
//
// Update runs fn outside the store's lock and commits only if the key
// has not changed meanwhile (retrying fn otherwise), so fn may itself
// read the store. A Memory is safe for concurrent use. Create it with
// NewMemory; it has nothing to close. The zero value is not usable.
type Memory struct {
	mu   sync.Mutex
	docs map[string]memoryDoc
	seq  uint64 // counts writes; a doc's seq is the write that made it
	now  func() time.Time
	// expiries indexes the writes with a TTL by expiry; an entry whose
	// doc has since been rewritten or deleted is dropped in its turn.
	expiries expiryHeap
}

// sweepBatch is the most expired values an Update of a Memory or a Bolt
// removes besides its own: the work an Update does for expiry is
// bounded, and as each Update adds one value at most, expired values are
// removed faster than they come.
const sweepBatch = 100

// expiry is an entry of a Memory's expiry index: the doc of key made by
// write seq expires at expires.
type expiry struct {
	expires time.Time
	key     string
	seq     uint64
}

// expiryHeap is a min-heap of expiries by time, for container/heap.
type expiryHeap []expiry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].expires.Before(h[j].expires) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// sweep removes up to sweepBatch expired docs, and the index entries of
// docs rewritten or deleted since, whose time has come. m.mu is held.
func (m *Memory) sweep() {
	now := m.now()
	for range sweepBatch {
		if len(m.expiries) == 0 || now.Before(m.expiries[0].expires) {
			return
		}
		e := heap.Pop(&m.expiries).(expiry)
		if d, ok := m.docs[e.key]; ok && d.seq == e.seq {
			delete(m.docs, e.key)
		}
	}
}

// memoryDoc is one value of a Memory.
type memoryDoc struct {
	value   []byte
	expires time.Time // zero: never
	seq     uint64
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{docs: make(map[string]memoryDoc), now: time.Now}
}

// lookup returns the live doc of key, dropping it if it expired. m.mu is
// held.
func (m *Memory) lookup(key string) (memoryDoc, bool) {
	d, ok := m.docs[key]
	if ok && !d.expires.IsZero() && !m.now().Before(d.expires) {
		delete(m.docs, key)
		return memoryDoc{}, false
	}
	return d, ok
}

// Get returns a copy of key's value, or an error wrapping ErrNotFound.
func (m *Memory) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.lookup(key)
	if !ok {
		return nil, fmt.Errorf("account: %q: %w", key, ErrNotFound)
	}
	return slices.Clone(d.value), nil
}

// Update replaces key's value by fn(old) as Store.Update says.
func (m *Memory) Update(ctx context.Context, key string, ttl time.Duration, fn func(old []byte) ([]byte, error)) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		m.mu.Lock()
		d, ok := m.lookup(key)
		m.mu.Unlock()
		var old []byte
		if ok {
			old = slices.Clone(d.value)
		}
		v, err := fn(old)
		if err != nil {
			return err
		}
		m.mu.Lock()
		cur, curOK := m.lookup(key)
		if curOK != ok || cur.seq != d.seq {
			m.mu.Unlock()
			continue // another writer won: run fn on its value
		}
		m.seq++
		m.sweep()
		switch {
		case v == nil:
			delete(m.docs, key)
		default:
			nd := memoryDoc{value: slices.Clone(v), seq: m.seq}
			if ttl > 0 {
				nd.expires = m.now().Add(ttl)
				heap.Push(&m.expiries, expiry{expires: nd.expires, key: key, seq: nd.seq})
			}
			m.docs[key] = nd
		}
		m.mu.Unlock()
		return nil
	}
}

// List returns the live keys that begin with prefix, in order.
func (m *Memory) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []string
	for k := range m.docs {
		if strings.HasPrefix(k, prefix) {
			if _, ok := m.lookup(k); ok {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys, nil
}
