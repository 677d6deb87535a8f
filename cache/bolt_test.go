package cache_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/inferkit/inferkit/cache"
	"github.com/inferkit/inferkit/cache/cachetest"
)

func TestBoltConformance(t *testing.T) {
	cachetest.Run(t, func(t *testing.T, cfg cachetest.Config) cache.Store {
		return openBolt(t, filepath.Join(t.TempDir(), "responses.db"),
			cache.BoltConfig{TTL: cfg.TTL, Now: cfg.Now, MaxEntries: cfg.MaxEntries, MaxBytes: cfg.MaxBytes,
				MaxOwnerEntries: cfg.MaxOwnerEntries, MaxOwnerBytes: cfg.MaxOwnerBytes})
	})
}

// openBolt opens a store that the test closes at its end.
func openBolt(t *testing.T, path string, cfg cache.BoltConfig) *cache.BoltStore {
	t.Helper()
	s, err := cache.OpenBolt(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var ctx = context.Background()

func rec(owner, id string) cache.Record {
	return cache.Record{Owner: owner, ID: id, Response: []byte("response " + id), Transcript: []byte("transcript " + id)}
}

// check fails t unless s holds exactly the records ids of owner "a" that
// want says, and counts n records.
func check(t *testing.T, s *cache.BoltStore, want map[string]bool, n int) {
	t.Helper()
	for id, ok := range want {
		got, err := s.Get(ctx, "a", id)
		switch {
		case ok && (err != nil || string(got.Response) != "response "+id || string(got.Transcript) != "transcript "+id):
			t.Errorf("Get(%q): %q %q, %v", id, got.Response, got.Transcript, err)
		case !ok && !errors.Is(err, cache.ErrNotFound):
			t.Errorf("Get(%q): %v, want ErrNotFound", id, err)
		}
	}
	if got, err := s.Len(); err != nil || got != n {
		t.Errorf("Len %d, %v; want %d", got, err, n)
	}
}

func TestBoltReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "responses.db")
	c := &clock{t: time.Unix(1e9, 0)}
	cfg := cache.BoltConfig{TTL: time.Hour, Now: c.Now}
	s, err := cache.OpenBolt(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"r1", "r2", "r3"} {
		if err := s.Put(ctx, rec("a", id)); err != nil {
			t.Fatal(err)
		}
		c.Advance(10 * time.Minute)
	}
	if err := s.Delete(ctx, "a", "r2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, rec("a", "late")); err == nil {
		t.Error("Put after Close succeeded")
	}

	s = openBolt(t, path, cfg)
	check(t, s, map[string]bool{"r1": true, "r2": false, "r3": true}, 2)
	if r, _ := s.Get(ctx, "a", "r1"); !r.Expires.Equal(time.Unix(1e9, 0).Add(time.Hour)) {
		t.Errorf("Expires %v after reopening", r.Expires)
	}
	s.Close()

	// Closed past r1's TTL: reopening sweeps it, with no Get needed.
	c.Advance(35 * time.Minute)
	s = openBolt(t, path, cfg)
	if n, _ := s.Len(); n != 1 {
		t.Errorf("Len %d after reopening past a TTL", n)
	}
	check(t, s, map[string]bool{"r1": false, "r3": true}, 1)
}

func TestBoltReopenSmaller(t *testing.T) {
	path := filepath.Join(t.TempDir(), "responses.db")
	c := &clock{t: time.Unix(1e9, 0)}
	s, err := cache.OpenBolt(path, cache.BoltConfig{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := s.Put(ctx, rec("a", fmt.Sprint("r", i))); err != nil {
			t.Fatal(err)
		}
		c.Advance(time.Second)
	}
	s.Close()
	// Smaller bounds evict the oldest on opening.
	s = openBolt(t, path, cache.BoltConfig{Now: c.Now, MaxEntries: 2, MaxOwnerEntries: 2})
	check(t, s, map[string]bool{"r0": false, "r1": false, "r2": false, "r3": true, "r4": true}, 2)
	s.Close()
	s = openBolt(t, path, cache.BoltConfig{Now: c.Now})
	if err := s.Put(ctx, rec("b", "r0")); err != nil {
		t.Fatal(err)
	}
	check(t, s, map[string]bool{"r3": true, "r4": true}, 3)
	s.Close()
	// So do smaller bounds of owners: a keeps its newest, b its one.
	s = openBolt(t, path, cache.BoltConfig{Now: c.Now, MaxOwnerEntries: 1})
	check(t, s, map[string]bool{"r3": false, "r4": true}, 2)
	if _, err := s.Get(ctx, "b", "r0"); err != nil {
		t.Error(err)
	}
}

// TestBoltUnclosed copies the file of a store that is still open, as if
// the process had stopped without Close: every Put that returned is in
// the copy.
func TestBoltUnclosed(t *testing.T) {
	dir := t.TempDir()
	s := openBolt(t, filepath.Join(dir, "responses.db"), cache.BoltConfig{})
	for _, id := range []string{"r1", "r2"} {
		if err := s.Put(ctx, rec("a", id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(ctx, "a", "r1"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "responses.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "copy.db"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	c := openBolt(t, filepath.Join(dir, "copy.db"), cache.BoltConfig{})
	check(t, c, map[string]bool{"r1": false, "r2": true}, 1)
}

// crashEnv names the file the child process of TestBoltCrash writes to.
const crashEnv = "INFERKIT_CACHE_CRASH_CHILD"

// TestBoltCrashChild is the process TestBoltCrash kills: it puts records
// until it dies, printing each id once its Put has returned.
func TestBoltCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("run by TestBoltCrash")
	}
	s, err := cache.OpenBolt(path, cache.BoltConfig{})
	if err != nil {
		t.Fatal(err)
	}
	payload := bytes.Repeat([]byte("x"), 64<<10) // spans several pages
	for i := 0; ; i++ {
		r := rec("a", fmt.Sprint("r", i))
		r.Transcript = append([]byte("transcript r"+fmt.Sprint(i)), payload...)
		if err := s.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("put r%d\n", i)
	}
}

// TestBoltCrash kills a process in the middle of its writes (SIGKILL: no
// Close, no deferred call) and checks that every write it reported done is
// there, that the file is sound, and that the store goes on working.
func TestBoltCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	path := filepath.Join(t.TempDir(), "responses.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestBoltCrashChild$", "-test.v")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var done []string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if id, ok := strings.CutPrefix(lines.Text(), "put "); ok {
			done = append(done, id)
			if len(done) == 40 {
				cmd.Process.Kill()
			}
		}
	}
	cmd.Wait()
	if len(done) < 40 {
		t.Fatalf("the child reported %d writes before it ended", len(done))
	}

	// bbolt's own consistency check of the file.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.View(func(tx *bolt.Tx) error { return errors.Join(collect(tx.Check())...) }); err != nil {
		t.Errorf("bbolt check: %v", err)
	}
	db.Close()

	s := openBolt(t, path, cache.BoltConfig{})
	n, err := s.Len()
	t.Logf("%d writes reported before the kill, %d records after it", len(done), n)
	if err != nil || n < len(done) || n > len(done)+1 {
		t.Errorf("Len %d, %v after %d reported writes", n, err, len(done))
	}
	for _, id := range done {
		r, err := s.Get(ctx, "a", id)
		if err != nil || !bytes.HasPrefix(r.Transcript, []byte("transcript "+id)) {
			t.Errorf("Get(%q) after the crash: %v", id, err)
		}
	}
	if err := s.Put(ctx, rec("a", "after")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "a", "after"); err != nil {
		t.Error(err)
	}
}

func collect(errs <-chan error) []error {
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return all
}

// TestBoltDamaged writes damaged values over records, as a write cut
// short would leave them: such a record reads as not found and is
// removed, and the rest of the store is unharmed.
func TestBoltDamaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "responses.db")
	s, err := cache.OpenBolt(path, cache.BoltConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"cut", "flipped", "empty", "fine"} {
		if err := s.Put(ctx, rec("a", id)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("records"))
		if b == nil {
			return errors.New("no records bucket")
		}
		damage := map[string]func([]byte) []byte{
			"cut":     func(v []byte) []byte { return v[:len(v)/2] },
			"flipped": func(v []byte) []byte { v[len(v)/2] ^= 1; return v },
			"empty":   func([]byte) []byte { return []byte{} },
		}
		found := 0
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			for id, f := range damage {
				if bytes.HasSuffix(k, []byte(id)) {
					if err := b.Put(bytes.Clone(k), f(bytes.Clone(v))); err != nil {
						return err
					}
					found++
				}
			}
		}
		if found != len(damage) {
			return fmt.Errorf("damaged %d records", found)
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	s = openBolt(t, path, cache.BoltConfig{})
	if _, err := s.Get(ctx, "a", "cut"); !errors.Is(err, cache.ErrNotFound) || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("Get of a cut record: %v", err)
	}
	if _, err := s.Get(ctx, "a", "flipped"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("Get of a flipped record: %v", err)
	}
	if err := s.Delete(ctx, "a", "empty"); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("Delete of a damaged record: %v", err)
	}
	check(t, s, map[string]bool{"cut": false, "flipped": false, "empty": false, "fine": true}, 1)
	if err := s.Put(ctx, rec("a", "cut")); err != nil {
		t.Fatal(err)
	}
	check(t, s, map[string]bool{"cut": true, "fine": true}, 2)
}

func TestBoltOpenErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "responses.db")
	openBolt(t, path, cache.BoltConfig{})
	if _, err := cache.OpenBolt(path, cache.BoltConfig{LockTimeout: 10 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "another BoltStore") {
		t.Errorf("a second store on an open file: %v", err)
	}
	for _, cfg := range []cache.BoltConfig{{TTL: -1}, {MaxEntries: -1}, {MaxBytes: -1}, {MaxOwnerEntries: -1}, {MaxOwnerBytes: -1}, {LockTimeout: -1},
		{MaxOwnerEntries: cache.DefaultBoltMaxEntries + 1}, {MaxEntries: 10, MaxOwnerEntries: 11}, {MaxBytes: 10, MaxOwnerBytes: 11}} {
		if _, err := cache.OpenBolt(filepath.Join(dir, "neg.db"), cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	if _, err := cache.OpenBolt(filepath.Join(dir, "missing", "x.db"), cache.BoltConfig{}); err == nil {
		t.Error("a file in a missing folder opened")
	}
	// A file of another format is refused, not changed.
	other := filepath.Join(dir, "other.db")
	db, err := bolt.Open(other, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("meta"))
		if err != nil {
			return err
		}
		return b.Put([]byte("format"), []byte{99})
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cache.OpenBolt(other, cache.BoltConfig{}); err == nil || !strings.Contains(err.Error(), "format") {
		t.Errorf("a file of another format: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "junk.db")); b == nil {
		os.WriteFile(filepath.Join(dir, "junk.db"), bytes.Repeat([]byte("junk"), 4096), 0o600)
	}
	if _, err := cache.OpenBolt(filepath.Join(dir, "junk.db"), cache.BoltConfig{}); err == nil {
		t.Error("a file that is not bbolt opened")
	}
}
