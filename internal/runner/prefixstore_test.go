package runner

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestPrefixStoreLRU(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	state := make([]byte, 1000)
	size := headerSize("k", 3) + int64(len(state)) + 4
	s, err := OpenPrefixStore(dir, 2*size, log, clock)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := []int32{1, 2, 3}, []int32{1, 2, 4}, []int32{5, 6, 7}
	s.Save("k", a, state)
	now = now.Add(time.Second)
	s.Save("k", b, state)
	now = now.Add(time.Second)
	if e, n := s.Longest("k", []int32{1, 2, 3, 9}, 10, 100, true); e == nil || n != 3 {
		t.Fatalf("longest: %v, %d", e, n)
	}
	if e, _ := s.Longest("k", []int32{1, 2, 3, 9}, 10, 2, true); e != nil {
		t.Error("an entry longer than a sequence holds matched")
	}
	if _, err := s.Load(s.entryOf(a), 1<<20); err != nil { // a is now the most recently used
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	s.Save("k", c, state)
	if s.entryOf(b) != nil || s.entryOf(a) == nil || s.entryOf(c) == nil {
		t.Errorf("after a third entry in room for two: a %v, b %v, c %v; want b evicted", s.entryOf(a) != nil, s.entryOf(b) != nil, s.entryOf(c) != nil)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "k", "*.kv")); len(files) != 2 {
		t.Errorf("%d files, want 2", len(files))
	}

	// Another key, an entry too large, and the order across a reopening.
	if e, _ := s.Longest("other", a, 10, 100, true); e != nil {
		t.Error("an entry of another key matched")
	}
	s.Save("k", []int32{8}, make([]byte, 3*size))
	if s.entryOf([]int32{8}) != nil {
		t.Error("an entry larger than the store was kept")
	}
	s2, err := OpenPrefixStore(dir, size, log, clock)
	if err != nil {
		t.Fatal(err)
	}
	if s2.entryOf(c) == nil || s2.entryOf(a) != nil {
		t.Error("reopened with room for one, the most recent entry should stay")
	}
	// Exact matches only, for a state that cannot be cut short.
	if e, _ := s2.Longest("k", []int32{5, 6}, 10, 100, false); e != nil {
		t.Error("a longer entry matched a shorter prompt without partial")
	}
	if !s2.Covered("k", []int32{5, 6}, true) || s2.Covered("k", []int32{5, 6}, false) {
		t.Error("covered")
	}
}

func TestPrefixKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	body := make([]byte, 3<<20)
	a := write("a.gguf", body)
	b := write("b.gguf", body) // a copy: the same model
	body[len(body)/2] = 1
	c := write("c.gguf", body) // another fine-tune, of middle layers only
	key := func(path, settings string) string {
		k, err := PrefixKey(path, settings)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if key(a, "f16/f16") != key(b, "f16/f16") {
		t.Error("a copy of the file has another key")
	}
	if key(a, "f16/f16") == key(c, "f16/f16") {
		t.Error("a file with other last tensors has the same key")
	}
	if key(a, "f16/f16") == key(a, "q8_0/f16") {
		t.Error("another key cache type has the same key")
	}
}

// entryOf returns the entry for tokens, or nil.
func (s *PrefixStore) entryOf(tokens []int32) *StoredPrefix {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries {
		if slices.Equal(e.Tokens, tokens) {
			return e
		}
	}
	return nil
}
