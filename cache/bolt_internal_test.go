package cache

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// verifyBolt fails t unless the counters and indexes of s's file agree
// with its records: meta's counters, the owners' counters, byowner,
// bycount and bybytes are all rebuilt from the expiry bucket and
// compared.
func verifyBolt(t *testing.T, s *BoltStore) {
	t.Helper()
	err := s.db.View(func(tx *bolt.Tx) error {
		var errs []error
		type usage struct{ count, bytes int64 }
		owners := map[string]*usage{}
		var count, size int64
		byOwner := map[string]bool{}
		c := tx.Bucket(bucketExpiry).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			n, key := expiryValue(v)
			if tx.Bucket(bucketRecords).Get(key) == nil {
				errs = append(errs, fmt.Errorf("expiry entry %x without its record %q", k, key))
			}
			owner, ok := ownerOf(key)
			if !ok {
				errs = append(errs, fmt.Errorf("record key %q without an owner", key))
				continue
			}
			count++
			size += n
			u := owners[string(owner)]
			if u == nil {
				u = &usage{}
				owners[string(owner)] = u
			}
			u.count++
			u.bytes += n
			byOwner[string(join(owner, k))] = true
		}
		if n := tx.Bucket(bucketRecords).Stats().KeyN; int64(n) != count {
			errs = append(errs, fmt.Errorf("%d records, %d expiry entries", n, count))
		}
		meta := tx.Bucket(bucketMeta)
		if got := readCounter(meta.Get(metaCount)); got != count {
			errs = append(errs, fmt.Errorf("meta count %d, want %d", got, count))
		}
		if got := readCounter(meta.Get(metaBytes)); got != size {
			errs = append(errs, fmt.Errorf("meta bytes %d, want %d", got, size))
		}
		wantCount, wantBytes := map[string]bool{}, map[string]bool{}
		for owner, u := range owners {
			v := tx.Bucket(bucketOwners).Get([]byte(owner))
			if want := join(counter(u.count), counter(u.bytes)); !bytes.Equal(v, want) {
				errs = append(errs, fmt.Errorf("owner %q has counters %x, want %x", owner, v, want))
			}
			wantCount[string(join(counter(u.count), []byte(owner)))] = true
			wantBytes[string(join(counter(u.bytes), []byte(owner)))] = true
		}
		for _, b := range []struct {
			name []byte
			want map[string]bool
		}{{bucketByOwner, byOwner}, {bucketByCount, wantCount}, {bucketByBytes, wantBytes}} {
			got := map[string]bool{}
			tx.Bucket(b.name).ForEach(func(k, _ []byte) error { got[string(k)] = true; return nil })
			if fmt.Sprint(got) != fmt.Sprint(b.want) {
				errs = append(errs, fmt.Errorf("bucket %s: %q, want %q", b.name, keys(got), keys(b.want)))
			}
		}
		if n := tx.Bucket(bucketOwners).Stats().KeyN; n != len(owners) {
			errs = append(errs, fmt.Errorf("%d owners' counters, want %d", n, len(owners)))
		}
		return errors.Join(errs...)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

type testClock struct{ t time.Time }

func (c *testClock) Now() time.Time { return c.t }

// TestBoltCounters runs random Puts of records of several sizes, Gets,
// Deletes, clock steps, damaged values and reopenings with other bounds,
// and checks the file's counters and indexes after each.
func TestBoltCounters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "responses.db")
	c := &testClock{t: time.Unix(1e9, 0)}
	cfgs := []BoltConfig{
		{TTL: time.Hour, Now: c.Now, MaxEntries: 12, MaxOwnerEntries: 4},
		{TTL: time.Hour, Now: c.Now, MaxBytes: 3000, MaxOwnerBytes: 1200},
		{TTL: time.Hour, Now: c.Now, MaxEntries: 6, MaxOwnerEntries: 3, MaxBytes: 2000, MaxOwnerBytes: 2000},
		{TTL: time.Hour, Now: c.Now},
	}
	open := func(cfg BoltConfig) *BoltStore {
		s, err := OpenBolt(path, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open(cfgs[0])
	defer func() { s.Close() }()
	rng := rand.New(rand.NewPCG(3, 4))
	owners := []string{"", "a", "a", "a", "bb", "c\x00", strings.Repeat("d", 200)}
	for step := range 800 {
		owner, id := owners[rng.IntN(len(owners))], fmt.Sprint("r", rng.IntN(8))
		var err error
		switch p := rng.IntN(100); {
		case p < 60:
			r := Record{Owner: owner, ID: id, Response: bytes.Repeat([]byte("x"), rng.IntN(600))}
			if err = s.Put(ctx, r); errors.Is(err, ErrTooLarge) {
				err = nil
			}
		case p < 72:
			if _, err = s.Get(ctx, owner, id); errors.Is(err, ErrNotFound) {
				err = nil
			}
		case p < 84:
			if err = s.Delete(ctx, owner, id); errors.Is(err, ErrNotFound) {
				err = nil
			}
		case p < 94:
			c.t = c.t.Add(time.Duration(rng.IntN(15)) * time.Minute)
		case p < 97:
			// A damaged value, as a write cut short would leave it.
			err = s.db.Update(func(tx *bolt.Tx) error {
				b := tx.Bucket(bucketRecords)
				k, v := b.Cursor().First()
				if k == nil {
					return nil
				}
				return b.Put(bytes.Clone(k), v[:len(v)/2])
			})
		default:
			s.Close()
			s = open(cfgs[rng.IntN(len(cfgs))])
		}
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		verifyBolt(t, s)
		over := func(n, b int64) bool {
			return n > int64(s.maxOwnerEntries) || b > s.maxOwnerBytes
		}
		s.db.View(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketOwners).ForEach(func(k, v []byte) error {
				if over(readCounter(v[:8]), readCounter(v[8:])) {
					t.Fatalf("step %d: owner %q holds %d records, %d bytes", step, k, readCounter(v[:8]), readCounter(v[8:]))
				}
				return nil
			})
		})
	}
}

// TestBoltUpgrade opens a file of format 1, written before owners were
// counted: its records are kept, indexed by owner, and held to the
// owners' bounds.
func TestBoltUpgrade(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "responses.db")
	c := &testClock{t: time.Unix(1e9, 0)}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		records, err := tx.CreateBucket(bucketRecords)
		if err != nil {
			return err
		}
		expiry, err := tx.CreateBucket(bucketExpiry)
		if err != nil {
			return err
		}
		var n, size int64
		for i, r := range []Record{
			{Owner: "a", ID: "r0"}, {Owner: "b", ID: "r0"}, {Owner: "a", ID: "r1"},
			{Owner: "a", ID: "r2", Response: []byte("response")}, {Owner: "a", ID: "r3"},
		} {
			ok := orderKey(c.t.Add(time.Hour+time.Duration(i)*time.Second), uint64(i+1))
			key := recordKey(r.Owner, r.ID)
			if err := records.Put(key, encodeValue(ok, r.Response, r.Transcript)); err != nil {
				return err
			}
			if err := expiry.Put(ok, append(binary.BigEndian.AppendUint64(nil, uint64(r.Size())), key...)); err != nil {
				return err
			}
			n++
			size += r.Size()
		}
		if err := meta.Put(metaCount, counter(n)); err != nil {
			return err
		}
		if err := meta.Put(metaBytes, counter(size)); err != nil {
			return err
		}
		return meta.Put(metaFormat, []byte{1})
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	s, err := OpenBolt(path, BoltConfig{Now: c.Now, MaxOwnerEntries: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	verifyBolt(t, s)
	if _, err := s.Get(ctx, "a", "r0"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a's oldest past the owner's bound: %v", err)
	}
	for _, k := range [][2]string{{"b", "r0"}, {"a", "r1"}, {"a", "r2"}, {"a", "r3"}} {
		if _, err := s.Get(ctx, k[0], k[1]); err != nil {
			t.Errorf("Get(%q, %q): %v", k[0], k[1], err)
		}
	}
	if r, _ := s.Get(ctx, "a", "r2"); string(r.Response) != "response" {
		t.Errorf("a's r2: %q", r.Response)
	}
	// The owner's bound holds from then on.
	if err := s.Put(ctx, Record{Owner: "a", ID: "r4"}); err != nil {
		t.Fatal(err)
	}
	verifyBolt(t, s)
	if _, err := s.Get(ctx, "a", "r1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a's oldest after a Put: %v", err)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		if f := tx.Bucket(bucketMeta).Get(metaFormat); !bytes.Equal(f, []byte{boltFormat}) {
			return fmt.Errorf("format %v after opening", f)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}
