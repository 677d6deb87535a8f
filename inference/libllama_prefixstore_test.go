//go:build cgo && unix

package inference

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
)

// The prompt cache on disk works on libllama: a prefix saved by one
// engine is restored by the next after a restart and continues as the
// first engine did. Entries whose checksums are sound but whose states
// are crafted (libllama's format: magic, source sequence, stream count,
// cell count, then cells of 12 bytes from byte 16) are refused before
// the library reads them, removed and logged, and the request is served
// as without the cache.
func TestLibraryPromptCache(t *testing.T) {
	cfg := Config{Backend: backend.LibLlama, Library: testLibrary(t)}
	dir := t.TempDir()
	a := diskEngine(t, dir, cfg)
	generate(t, a, diskFirst)
	if res := generate(t, a, diskSecond); res.Usage.CachedTokens != bytePrefix(diskFirst, diskSecond) {
		t.Fatalf("in process: %d cached tokens, want %d", res.Usage.CachedTokens, bytePrefix(diskFirst, diskSecond))
	}
	warm := generate(t, a, diskSecond)
	a.Close()
	if kv, _ := entries(t, dir); len(kv) == 0 {
		t.Fatal("no entry saved at Close")
	}
	b := diskEngine(t, dir, cfg)
	got := generate(t, b, diskSecond)
	if got.Usage.CachedTokens != len(diskSecond)-1 {
		t.Errorf("after a restart: %d cached tokens, want %d", got.Usage.CachedTokens, len(diskSecond)-1)
	}
	if got.Text != warm.Text {
		t.Errorf("after a restart: %q, in process %q", got.Text, warm.Text)
	}
	b.Close()

	want := generate(t, diskEngine(t, "", cfg), diskSecond)
	for _, tc := range []struct {
		name   string
		damage func(s []byte) []byte
	}{
		{"a position of -1", func(s []byte) []byte { return set32(s, 16+12*5, 0xffffffff) }},
		{"a huge cell count", func(s []byte) []byte { return set32(s, 12, 1<<24) }},
		{"a byte appended", func(s []byte) []byte { return append(s, 0) }},
		{"a truncated state", func(s []byte) []byte { return s[:len(s)-100] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := diskEngine(t, dir, cfg)
			generate(t, a, diskSecond)
			generate(t, a, diskSecond)
			a.Close()
			kv, _ := entries(t, dir)
			if len(kv) == 0 {
				t.Fatal("no entry saved")
			}
			damaged := map[string][]byte{}
			for _, path := range kv {
				rewriteState(t, path, tc.damage)
				damaged[path], _ = os.ReadFile(path)
			}
			var logs logBuffer
			cfg := cfg
			cfg.Logger = warnLogger(&logs)
			b := diskEngine(t, dir, cfg)
			got := generate(t, b, diskSecond)
			if got.Usage.CachedTokens != 0 || got.Text != want.Text {
				t.Errorf("got %q with %d cached tokens, want %q with none", got.Text, got.Usage.CachedTokens, want.Text)
			}
			b.disk.Flush()
			for path, bad := range damaged {
				if now, err := os.ReadFile(path); err == nil && bytes.Equal(now, bad) {
					t.Errorf("the damaged entry %s is still there", filepath.Base(path))
				}
			}
			if !strings.Contains(logs.String(), "failed its check and was removed") {
				t.Errorf("no refused entry logged:\n%s", logs.String())
			}
		})
	}
}
