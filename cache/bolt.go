package cache

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Defaults of BoltConfig.
const (
	DefaultBoltMaxEntries  = 1_000_000
	DefaultBoltMaxBytes    = 1 << 30
	DefaultBoltLockTimeout = time.Second
)

// BoltConfig configures a BoltStore. The zero value is useful: see each
// field's default.
type BoltConfig struct {
	// TTL is how long a record is kept after it was put. 0 means
	// DefaultTTL. A store reopened with another TTL keeps the expiry
	// times its records were put with.
	TTL time.Duration
	// MaxEntries bounds the records kept; past it the oldest record of
	// the owner holding the most is evicted (see Store.Put). 0 means
	// DefaultBoltMaxEntries.
	MaxEntries int
	// MaxBytes bounds the sum of the records' Size, the same way. The
	// file is somewhat larger, and bbolt does not give back the space
	// of deleted records to the file system: it reuses it. 0 means
	// DefaultBoltMaxBytes.
	MaxBytes int64
	// MaxOwnerEntries bounds the records of one owner; past it the
	// owner's own oldest go first. 0 means MaxEntries/DefaultOwnerShare,
	// at least 1: 125,000 with the default MaxEntries. It may not exceed
	// MaxEntries; set it equal to MaxEntries for no bound of its own.
	MaxOwnerEntries int
	// MaxOwnerBytes bounds the sum of the Size of one owner's records,
	// the same way. 0 means MaxBytes/DefaultOwnerShare, at least 1:
	// 128 MiB with the default MaxBytes. It may not exceed MaxBytes.
	MaxOwnerBytes int64
	// LockTimeout is how long OpenBolt waits for the file's lock, held
	// while another BoltStore (in this or another process) has it open.
	// 0 means DefaultBoltLockTimeout.
	LockTimeout time.Duration
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// BoltStore is a Store kept in one file by go.etcd.io/bbolt, so that
// records survive a restart. Its bounds are those of MemoryStore: a TTL,
// a number of entries and a size, each per owner and in all, the oldest
// records evicted first as Store.Put says.
//
// Every Put, Delete and removal of an expired record is one bbolt
// transaction, synced to disk before the call returns: a crash (the
// process killed, the machine losing power) loses at most the write in
// flight, and never leaves a half-written record, nor counters (the
// store's, an owner's) that disagree with the records. Expired records
// are removed when they are met, by every Put and when the store is
// opened; no goroutine runs in the background.
//
// A BoltStore is safe for concurrent use: reads run in parallel, writes
// one at a time. Only one BoltStore at a time may have a file open: the
// file is locked. Create it with OpenBolt; whoever opened it calls Close
// once, after its last use (for a server: after the HTTP server has shut
// down). The zero value is not usable.
type BoltStore struct {
	db              *bolt.DB
	ttl             time.Duration
	maxEntries      int
	maxBytes        int64
	maxOwnerEntries int
	maxOwnerBytes   int64
	now             func() time.Time
}

// The file's layout: seven buckets, all changed in the same transactions.
//
//   - records: key recordKey(owner, id), value encodeValue(...): a format
//     byte, the record's order key, the response with its length, the
//     transcript, and a CRC-32C of all that.
//   - expiry: key an order key (expiry time in nanoseconds, then a
//     sequence number, both big-endian, so that keys sort by expiry),
//     value the record's Size (8 bytes) and its record key. Sweeps walk
//     it from the front.
//   - meta: "format" (one byte), "count" and "bytes" (8 bytes each).
//   - owners: key an owner key (the owner's length, the owner: the start
//     of its record keys), value the count and bytes of its records
//     (8 bytes each). Owners without records have no key.
//   - byowner: key an owner key and an order key, value empty: each
//     owner's records, oldest first.
//   - bycount, bybytes: key an owner's count, or bytes (8 bytes,
//     big-endian), and its owner key, value empty: the owners, the one
//     holding the most last.
//
// Format 1 had the first three buckets only; OpenBolt adds the others.
var (
	bucketRecords = []byte("records")
	bucketExpiry  = []byte("expiry")
	bucketMeta    = []byte("meta")
	bucketOwners  = []byte("owners")
	bucketByOwner = []byte("byowner")
	bucketByCount = []byte("bycount")
	bucketByBytes = []byte("bybytes")
	metaFormat    = []byte("format")
	metaCount     = []byte("count")
	metaBytes     = []byte("bytes")
)

// boltFormat is the version of the file's layout.
const boltFormat = 2

// valueFormat is the version of a record's value in the records bucket.
const valueFormat = 1

// orderKeyLen is the length of an order key.
const orderKeyLen = 16

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// OpenBolt opens the store in the file path, creating it if needed, and
// removes the records that expired while it was closed (and the oldest
// beyond the bounds, if they are smaller than before). A file of format 1,
// written before the per-owner bounds, is brought to the current format
// in one transaction. It fails on a negative bound, a per-owner bound
// over the global one, a file of another format, or a file another
// BoltStore keeps open past LockTimeout.
func OpenBolt(path string, cfg BoltConfig) (*BoltStore, error) {
	if cfg.TTL < 0 || cfg.MaxEntries < 0 || cfg.MaxBytes < 0 || cfg.MaxOwnerEntries < 0 || cfg.MaxOwnerBytes < 0 || cfg.LockTimeout < 0 {
		return nil, fmt.Errorf("cache: BoltConfig has a negative bound: TTL %v, MaxEntries %d, MaxBytes %d, MaxOwnerEntries %d, MaxOwnerBytes %d, LockTimeout %v",
			cfg.TTL, cfg.MaxEntries, cfg.MaxBytes, cfg.MaxOwnerEntries, cfg.MaxOwnerBytes, cfg.LockTimeout)
	}
	s := &BoltStore{ttl: cfg.TTL, now: cfg.Now}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	var err error
	s.maxEntries, s.maxOwnerEntries, err = bounds("BoltConfig", "Entries", cfg.MaxEntries, cfg.MaxOwnerEntries, DefaultBoltMaxEntries)
	if err != nil {
		return nil, err
	}
	s.maxBytes, s.maxOwnerBytes, err = bounds("BoltConfig", "Bytes", cfg.MaxBytes, cfg.MaxOwnerBytes, DefaultBoltMaxBytes)
	if err != nil {
		return nil, err
	}
	timeout := cfg.LockTimeout
	if timeout == 0 {
		timeout = DefaultBoltLockTimeout
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("cache: %s is open in another BoltStore: %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("cache: opening %s: %w", path, err)
	}
	s.db = db
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		upgrade := false
		switch f := meta.Get(metaFormat); {
		case f == nil || len(f) == 1 && f[0] == 1:
			upgrade = f != nil
			if err := meta.Put(metaFormat, []byte{boltFormat}); err != nil {
				return err
			}
		case len(f) != 1 || f[0] != boltFormat:
			return fmt.Errorf("cache: %s has format %v, not %d", path, f, boltFormat)
		}
		for _, name := range [][]byte{bucketRecords, bucketExpiry, bucketOwners, bucketByOwner, bucketByCount, bucketByBytes} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		w := s.begin(tx)
		if upgrade {
			if err := w.indexOwners(); err != nil {
				return err
			}
		}
		if err := w.sweep(s.now()); err != nil {
			return err
		}
		if err := w.trimOwners(); err != nil {
			return err
		}
		if err := w.evict(nil, 0, 0); err != nil {
			return err
		}
		return w.flush()
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("cache: opening %s: %w", path, err)
	}
	return s, nil
}

// Get returns the record id of owner, or an error wrapping ErrNotFound.
// A record found expired, or damaged on disk, is removed.
func (s *BoltStore) Get(ctx context.Context, owner, id string) (Record, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, err
	}
	key := recordKey(owner, id)
	now := s.now()
	var (
		rec    Record
		stale  bool
		damage error
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketRecords).Get(key)
		if v == nil {
			return ErrNotFound
		}
		d, err := decodeValue(v)
		switch {
		case err != nil:
			stale, damage = true, err
		case !now.Before(d.expires):
			stale = true
		default:
			// v lives only as long as the transaction: copy.
			rec = Record{Owner: owner, ID: id, Response: bytes.Clone(d.response),
				Transcript: bytes.Clone(d.transcript), Expires: d.expires}
		}
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return Record{}, ErrNotFound
	}
	if err != nil {
		return Record{}, fmt.Errorf("cache: reading record %q: %w", id, err)
	}
	if !stale {
		return rec, nil
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		w := s.begin(tx)
		v := w.records.Get(key)
		if v == nil {
			return nil
		}
		if d, err := decodeValue(v); err == nil && now.Before(d.expires) {
			return nil // replaced since
		}
		if err := w.removeRecord(key, v); err != nil {
			return err
		}
		return w.flush()
	})
	if err != nil {
		return Record{}, fmt.Errorf("cache: removing record %q: %w", id, err)
	}
	if damage != nil {
		return Record{}, fmt.Errorf("cache: record %q was damaged (%v) and is removed: %w", id, damage, ErrNotFound)
	}
	return Record{}, ErrNotFound
}

// Put stores r and syncs it to disk, evicting records as Store.Put says.
// A record whose Size exceeds MaxOwnerBytes on its own is refused with an
// error wrapping ErrTooLarge.
func (s *BoltStore) Put(ctx context.Context, r Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.ID == "" {
		return errors.New("cache: Put of a record without an ID")
	}
	size := r.Size()
	if size > s.maxOwnerBytes {
		return fmt.Errorf("%w: record %q is %d bytes, over the store's %d per owner", ErrTooLarge, r.ID, size, s.maxOwnerBytes)
	}
	key := recordKey(r.Owner, r.ID)
	now := s.now()
	err := s.db.Update(func(tx *bolt.Tx) error {
		w := s.begin(tx)
		if v := w.records.Get(key); v != nil {
			if err := w.removeRecord(key, v); err != nil {
				return err
			}
		}
		if err := w.sweep(now); err != nil {
			return err
		}
		owner := ownerKey(r.Owner)
		if err := w.evictOwn(owner, size); err != nil {
			return err
		}
		if err := w.evict(owner, 1, size); err != nil {
			return err
		}
		seq, err := w.expiry.NextSequence()
		if err != nil {
			return err
		}
		ok := orderKey(now.Add(s.ttl), seq)
		if err := w.records.Put(key, encodeValue(ok, r.Response, r.Transcript)); err != nil {
			return err
		}
		if err := w.expiry.Put(ok, append(binary.BigEndian.AppendUint64(nil, uint64(size)), key...)); err != nil {
			return err
		}
		if err := w.byOwner.Put(join(owner, ok), []byte{}); err != nil {
			return err
		}
		if err := w.addOwner(owner, 1, size); err != nil {
			return err
		}
		w.count++
		w.bytes += size
		return w.flush()
	})
	if err != nil {
		return fmt.Errorf("cache: storing record %q: %w", r.ID, err)
	}
	return nil
}

// Delete removes the record id of owner and syncs the removal to disk,
// or returns an error wrapping ErrNotFound.
func (s *BoltStore) Delete(ctx context.Context, owner, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key := recordKey(owner, id)
	now := s.now()
	found := false
	err := s.db.Update(func(tx *bolt.Tx) error {
		w := s.begin(tx)
		v := w.records.Get(key)
		if v == nil {
			return nil
		}
		d, err := decodeValue(v)
		found = err == nil && now.Before(d.expires)
		if err := w.removeRecord(key, v); err != nil {
			return err
		}
		return w.flush()
	})
	if err != nil {
		return fmt.Errorf("cache: deleting record %q: %w", id, err)
	}
	if !found {
		return ErrNotFound
	}
	return nil
}

// Len returns the number of records kept, after removing the expired
// ones.
func (s *BoltStore) Len() (int, error) {
	var n int
	err := s.db.Update(func(tx *bolt.Tx) error {
		w := s.begin(tx)
		if err := w.sweep(s.now()); err != nil {
			return err
		}
		n = int(w.count)
		return w.flush()
	})
	if err != nil {
		return 0, fmt.Errorf("cache: counting records: %w", err)
	}
	return n, nil
}

// Close closes the file, after the calls in progress end. Every record
// put before is on disk already; calls after Close fail.
func (s *BoltStore) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("cache: closing %s: %w", s.db.Path(), err)
	}
	return nil
}

// writer changes the store within one update transaction, keeping the
// counters of meta, which flush writes back. The counters of owners, and
// their indexes, it writes as it goes.
type writer struct {
	s                                 *BoltStore
	records, expiry, meta             *bolt.Bucket
	owners, byOwner, byCount, byBytes *bolt.Bucket
	count, bytes                      int64
	countBefore, bytesBefore          int64
}

// begin starts a writer on tx, reading the counters.
func (s *BoltStore) begin(tx *bolt.Tx) *writer {
	w := &writer{s: s, records: tx.Bucket(bucketRecords), expiry: tx.Bucket(bucketExpiry), meta: tx.Bucket(bucketMeta),
		owners: tx.Bucket(bucketOwners), byOwner: tx.Bucket(bucketByOwner), byCount: tx.Bucket(bucketByCount), byBytes: tx.Bucket(bucketByBytes)}
	w.count = readCounter(w.meta.Get(metaCount))
	w.bytes = readCounter(w.meta.Get(metaBytes))
	w.countBefore, w.bytesBefore = w.count, w.bytes
	return w
}

// flush writes the counters back, when they changed.
func (w *writer) flush() error {
	if w.count == w.countBefore && w.bytes == w.bytesBefore {
		return nil
	}
	if err := w.meta.Put(metaCount, binary.BigEndian.AppendUint64(nil, uint64(w.count))); err != nil {
		return err
	}
	return w.meta.Put(metaBytes, binary.BigEndian.AppendUint64(nil, uint64(w.bytes)))
}

// sweep removes the records expired at now.
func (w *writer) sweep(now time.Time) error {
	c := w.expiry.Cursor()
	for k, v := c.First(); k != nil && !now.Before(expiresOf(k)); k, v = c.First() {
		if err := w.removeEntry(k, v); err != nil {
			return err
		}
	}
	return nil
}

// evictOwn removes the oldest records of owner (an owner key) until one
// more of size bytes fits the owner's bounds.
func (w *writer) evictOwn(owner []byte, size int64) error {
	for {
		n, b := w.held(owner)
		if n == 0 || n+1 <= int64(w.s.maxOwnerEntries) && b+size <= w.s.maxOwnerBytes {
			return nil
		}
		if _, err := w.removeOldest(owner); err != nil {
			return err
		}
	}
}

// trimOwners removes the oldest records of every owner over its bounds,
// which may be smaller than when the records were put.
func (w *writer) trimOwners() error {
	for _, idx := range []*bolt.Bucket{w.byCount, w.byBytes} {
		bound := int64(w.s.maxOwnerEntries)
		if idx == w.byBytes {
			bound = w.s.maxOwnerBytes
		}
		for {
			k, _ := idx.Cursor().Last()
			if k == nil || readCounter(k[:8]) <= bound {
				break
			}
			if _, err := w.removeOldest(bytes.Clone(k[8:])); err != nil {
				return err
			}
		}
	}
	return nil
}

// evict removes records until entries more records of owner (an owner
// key; nil for none), of size bytes in all, fit the store's bounds: the
// oldest of the owner holding the most, owner's own when it would hold
// as much.
func (w *writer) evict(owner []byte, entries int, size int64) error {
	for w.count > 0 && (w.count+int64(entries) > int64(w.s.maxEntries) || w.bytes+size > w.s.maxBytes) {
		n, b := w.held(owner)
		idx, would := w.byBytes, b+size
		if w.count+int64(entries) > int64(w.s.maxEntries) {
			idx, would = w.byCount, n+int64(entries)
		}
		from := owner
		if k, _ := idx.Cursor().Last(); k != nil && (n == 0 || would < readCounter(k[:8])) {
			from = bytes.Clone(k[8:])
		}
		removed := false
		if from != nil {
			var err error
			if removed, err = w.removeOldest(from); err != nil {
				return err
			}
		}
		if removed {
			continue
		}
		// No owner has records: those of the expiry bucket have none.
		k, v := w.expiry.Cursor().First()
		if k == nil {
			// Counters without records: they can only be wrong.
			w.count, w.bytes = 0, 0
			break
		}
		if err := w.removeEntry(k, v); err != nil {
			return err
		}
	}
	return nil
}

// removeOldest removes the oldest record of owner (an owner key),
// reporting whether there was one.
func (w *writer) removeOldest(owner []byte) (bool, error) {
	c := w.byOwner.Cursor()
	for k, _ := c.Seek(owner); k != nil && bytes.HasPrefix(k, owner); k, _ = c.Seek(owner) {
		ok := bytes.Clone(k[len(owner):])
		if v := w.expiry.Get(ok); v != nil {
			return true, w.removeEntry(ok, v)
		}
		// An entry without its record: a record removed without its
		// expiry entry left it (see removeRecord).
		if err := w.byOwner.Delete(bytes.Clone(k)); err != nil {
			return false, err
		}
		if err := w.addOwner(owner, -1, 0); err != nil {
			return false, err
		}
	}
	// Counters without records: they can only be wrong.
	n, b := w.held(owner)
	return false, w.addOwner(owner, -n, -b)
}

// removeEntry removes the record of the expiry entry k, v.
func (w *writer) removeEntry(k, v []byte) error {
	size, key := expiryValue(v)
	// k and v point into pages the deletes may change: copy first.
	k, key = bytes.Clone(k), bytes.Clone(key)
	if err := w.expiry.Delete(k); err != nil {
		return err
	}
	if err := w.records.Delete(key); err != nil {
		return err
	}
	w.count--
	w.bytes -= size
	if owner, ok := ownerOf(key); ok {
		if err := w.byOwner.Delete(join(owner, k)); err != nil {
			return err
		}
		return w.addOwner(owner, -1, -size)
	}
	return nil
}

// removeRecord removes the record key, whose value is v, and its expiry
// entry.
func (w *writer) removeRecord(key, v []byte) error {
	if d, err := decodeValue(v); err == nil {
		if ev := w.expiry.Get(d.order); ev != nil {
			return w.removeEntry(d.order, ev)
		}
	}
	// A damaged value: find its expiry entry the slow way.
	c := w.expiry.Cursor()
	for k, ev := c.First(); k != nil; k, ev = c.Next() {
		if _, ek := expiryValue(ev); bytes.Equal(ek, key) {
			return w.removeEntry(k, ev)
		}
	}
	// No expiry entry: its entry in byowner, if any, is found and its
	// owner's counters fixed when that owner's oldest records go.
	w.count--
	return w.records.Delete(bytes.Clone(key))
}

// held returns the count and bytes of owner's records (an owner key; nil
// holds none).
func (w *writer) held(owner []byte) (int64, int64) {
	if owner == nil {
		return 0, 0
	}
	v := w.owners.Get(owner)
	if len(v) != 16 {
		return 0, 0
	}
	return readCounter(v[:8]), readCounter(v[8:])
}

// addOwner adds n records of size bytes in all (both may be negative) to
// the counters of owner (an owner key) and to its places in bycount and
// bybytes.
func (w *writer) addOwner(owner []byte, n, size int64) error {
	count, b := w.held(owner)
	if count > 0 {
		if err := w.byCount.Delete(join(counter(count), owner)); err != nil {
			return err
		}
		if err := w.byBytes.Delete(join(counter(b), owner)); err != nil {
			return err
		}
	}
	count, b = count+n, max(b+size, 0)
	if count <= 0 {
		return w.owners.Delete(owner)
	}
	if err := w.owners.Put(join(owner), join(counter(count), counter(b))); err != nil {
		return err
	}
	if err := w.byCount.Put(join(counter(count), owner), []byte{}); err != nil {
		return err
	}
	return w.byBytes.Put(join(counter(b), owner), []byte{})
}

// indexOwners fills the buckets of owners from the expiry bucket, for a
// file of format 1.
func (w *writer) indexOwners() error {
	type usage struct{ count, bytes int64 }
	all := map[string]*usage{}
	c := w.expiry.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		size, key := expiryValue(v)
		owner, ok := ownerOf(key)
		if !ok {
			continue
		}
		if err := w.byOwner.Put(join(owner, k), []byte{}); err != nil {
			return err
		}
		h := all[string(owner)]
		if h == nil {
			h = &usage{}
			all[string(owner)] = h
		}
		h.count++
		h.bytes += size
	}
	for owner, h := range all {
		if err := w.addOwner([]byte(owner), h.count, h.bytes); err != nil {
			return err
		}
	}
	return nil
}

// ownerKey is the key of an owner: its length, then the owner; the start
// of the keys of its records.
func ownerKey(owner string) []byte {
	k := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(owner)), uint64(len(owner)))
	return append(k, owner...)
}

// ownerOf returns the owner key of a record key.
func ownerOf(key []byte) ([]byte, bool) {
	n, w := binary.Uvarint(key)
	if w <= 0 || n > uint64(len(key)-w) {
		return nil, false
	}
	return key[:w+int(n)], true
}

// counter encodes a counter.
func counter(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

// join returns a new slice of the parts one after the other: bbolt keeps
// the keys and values given to Put until the transaction ends, and the
// parts may point into its pages.
func join(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// recordKey is the key of a record: the owner's length, the owner, the
// id, so that no two (owner, id) pairs share a key.
func recordKey(owner, id string) []byte {
	k := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(owner)+len(id)), uint64(len(owner)))
	return append(append(k, owner...), id...)
}

// orderKey is the expiry bucket's key of a record expiring at t, put as
// the seq-th: sorted by expiry, then by the order of Puts.
func orderKey(t time.Time, seq uint64) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, orderKeyLen), uint64(t.UnixNano())^1<<63)
	return binary.BigEndian.AppendUint64(k, seq)
}

// expiresOf returns the expiry time of an order key.
func expiresOf(k []byte) time.Time {
	if len(k) < 8 {
		return time.Time{}
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(k)^1<<63))
}

// expiryValue splits an expiry entry's value into the record's size and
// key.
func expiryValue(v []byte) (int64, []byte) {
	if len(v) < 8 {
		return 0, nil
	}
	return int64(binary.BigEndian.Uint64(v)), v[8:]
}

// readCounter reads a counter of 8 bytes; absent is 0.
func readCounter(v []byte) int64 {
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

// encodeValue encodes a record's value.
func encodeValue(order, response, transcript []byte) []byte {
	v := make([]byte, 0, 1+orderKeyLen+binary.MaxVarintLen64+len(response)+len(transcript)+4)
	v = append(v, valueFormat)
	v = append(v, order...)
	v = binary.AppendUvarint(v, uint64(len(response)))
	v = append(v, response...)
	v = append(v, transcript...)
	return binary.BigEndian.AppendUint32(v, crc32.Checksum(v, castagnoli))
}

// decoded is a record's value, its slices pointing into the value.
type decoded struct {
	order                []byte
	expires              time.Time
	response, transcript []byte
}

// decodeValue checks and decodes a record's value.
func decodeValue(v []byte) (decoded, error) {
	if len(v) < 1+orderKeyLen+1+4 {
		return decoded{}, fmt.Errorf("value of %d bytes is too short", len(v))
	}
	body, sum := v[:len(v)-4], binary.BigEndian.Uint32(v[len(v)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return decoded{}, errors.New("checksum mismatch")
	}
	if body[0] != valueFormat {
		return decoded{}, fmt.Errorf("value format %d", body[0])
	}
	d := decoded{order: body[1 : 1+orderKeyLen]}
	d.expires = expiresOf(d.order)
	rest := body[1+orderKeyLen:]
	n, w := binary.Uvarint(rest)
	if w <= 0 || n > uint64(len(rest)-w) {
		return decoded{}, errors.New("bad response length")
	}
	d.response, d.transcript = rest[w:w+int(n)], rest[w+int(n):]
	return d, nil
}
