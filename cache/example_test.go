package cache_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/inferkit/inferkit/cache"
)

func Example() {
	ctx := context.Background()
	s, err := cache.NewMemoryStore(cache.MemoryConfig{TTL: time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	_ = s.Put(ctx, cache.Record{Owner: "key-1", ID: "resp_1", Response: []byte(`{"id":"resp_1"}`)})

	r, err := s.Get(ctx, "key-1", "resp_1")
	fmt.Printf("%s %v\n", r.Response, err)
	// Another owner sees nothing.
	_, err = s.Get(ctx, "key-2", "resp_1")
	fmt.Println(errors.Is(err, cache.ErrNotFound))
	// Output:
	// {"id":"resp_1"} <nil>
	// true
}

// One key writing on and on evicts its own oldest records, never another
// key's.
func ExampleNewMemoryStore_owners() {
	ctx := context.Background()
	s, err := cache.NewMemoryStore(cache.MemoryConfig{MaxEntries: 100, MaxOwnerEntries: 10})
	if err != nil {
		log.Fatal(err)
	}
	_ = s.Put(ctx, cache.Record{Owner: "key-2", ID: "resp_kept"})
	for i := range 1000 {
		_ = s.Put(ctx, cache.Record{Owner: "key-1", ID: fmt.Sprint("resp_", i)})
	}
	_, err = s.Get(ctx, "key-2", "resp_kept")
	fmt.Println(s.Len(), err)
	// Output: 11 <nil>
}

func ExampleOpenBolt() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cache-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "responses.db")

	s, err := cache.OpenBolt(path, cache.BoltConfig{TTL: 30 * 24 * time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Put(ctx, cache.Record{Owner: "key-1", ID: "resp_1", Response: []byte("kept")}); err != nil {
		log.Fatal(err)
	}
	s.Close() // a restart

	s, err = cache.OpenBolt(path, cache.BoltConfig{TTL: 30 * 24 * time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	r, err := s.Get(ctx, "key-1", "resp_1")
	fmt.Printf("%s %v\n", r.Response, err)
	// Output: kept <nil>
}
