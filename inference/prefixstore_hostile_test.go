//go:build cgo && unix

package inference

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inferkit/inferkit/internal/boundedtest"
	"github.com/inferkit/inferkit/internal/logtest"
	"github.com/inferkit/inferkit/internal/runner"
)

// logBuffer collects an engine's log, safe for its goroutines.
type logBuffer = logtest.Buffer

// warnLogger logs at Warn and above into l.
func warnLogger(l *logBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// savedEntries runs an engine of cfg on dir that serves diskSecond twice
// and closes, and returns the entries it saved.
func savedEntries(t *testing.T, dir string, cfg Config) []string {
	t.Helper()
	a := diskEngine(t, dir, cfg)
	generate(t, a, diskSecond)
	generate(t, a, diskSecond)
	a.Close()
	kv, _ := entries(t, dir)
	if len(kv) == 0 {
		t.Fatal("no entry saved")
	}
	return kv
}

// rewriteState replaces the state of the entry at path with what damage
// makes of it, under a sound checksum: what bit rot the checksum missed,
// a half-copied backup or another program would leave.
func rewriteState(t *testing.T, path string, damage func([]byte) []byte) {
	t.Helper()
	key := filepath.Base(filepath.Dir(path))
	e, state, err := runner.ReadEntry(path, key, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.WriteEntry(path, key, e.Tokens, damage(bytes.Clone(state))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runner.ReadEntry(path, key, 1<<40); err != nil {
		t.Fatalf("the rewritten entry fails the store's own check: %v", err)
	}
}

// In the state of a sequence of the byte-level tiny model (one stream):
// the stream count, the cell count, the cells of 12 bytes from byte 8,
// then value transposition, layer count, and each layer's key type and
// row size.
func stateCells(s []byte) int { return int(binary.LittleEndian.Uint32(s[4:])) }
func stateData(s []byte) int  { return 8 + 12*stateCells(s) }
func set32(s []byte, off int, v uint32) []byte {
	binary.LittleEndian.PutUint32(s[off:], v)
	return s
}

// TestPromptCacheDamagedStates gives the next start entries whose
// checksums are sound but whose states are not what llama.cpp wrote. Each
// is refused before llama.cpp reads it (a position of -1 aborted the
// process in llama.cpp's assertion, a huge cell count made it allocate
// what it claimed), removed, and said so once; the request is served as
// an engine without the cache serves it.
func TestPromptCacheDamagedStates(t *testing.T) {
	checkDamagedStates(t, Config{}, []damagedState{
		{"a position of -1", func(s []byte) []byte { return set32(s, 8+12*5, 0xffffffff) }},
		{"a huge cell count", func(s []byte) []byte { return set32(s, 4, 1<<24) }},
		{"another layer count", func(s []byte) []byte {
			return set32(s, stateData(s)+4, binary.LittleEndian.Uint32(s[stateData(s)+4:])+1)
		}},
		{"another key row size", func(s []byte) []byte {
			return set32(s, stateData(s)+12, 2*binary.LittleEndian.Uint32(s[stateData(s)+12:]))
		}},
		{"a truncated state", func(s []byte) []byte { return s[:len(s)-100] }},
		{"a state longer than the context holds", func(s []byte) []byte { return make([]byte, 4<<20) }},
	})
}

// damagedState is a named way to damage a saved state.
type damagedState struct {
	name   string
	damage func(s []byte) []byte
}

// checkDamagedStates saves entries with an engine of cfg, damages their
// states under sound checksums, and checks that the next engine refuses
// each before its library reads it, removes it, says so once, and serves
// the request as an engine without the cache.
func checkDamagedStates(t *testing.T, cfg Config, cases []damagedState) {
	want := generate(t, diskEngine(t, "", cfg), diskSecond)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			kv := savedEntries(t, dir, cfg)
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
			refused := 0
			for path, bad := range damaged {
				// The request may have saved a sound entry of its own
				// under the same name.
				if now, err := os.ReadFile(path); err == nil && bytes.Equal(now, bad) {
					t.Errorf("the damaged entry %s is still there", filepath.Base(path))
				}
				if n := strings.Count(logs.String(), filepath.Base(path)); n > 1 {
					t.Errorf("the entry %s is named %d times in the log, want once", filepath.Base(path), n)
				} else {
					refused += n
				}
			}
			if refused == 0 || !strings.Contains(logs.String(), "failed its check and was removed") {
				t.Errorf("no refused entry logged:\n%s", logs.String())
			}
		})
	}
}

// unblockFIFO opens the FIFO at path for writing and closes it, again
// and again for a while, which frees readers blocked opening it (the
// runner tries the next entry, another FIFO, when one fails): a
// regression then fails its test rather than hanging it.
func unblockFIFO(path string) {
	for range 500 {
		if fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			syscall.Close(fd)
		} else if os.IsNotExist(err) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// nonRegular makes, at path, a file of kind that is not a regular one.
func nonRegular(t *testing.T, kind, path string) {
	t.Helper()
	var err error
	switch kind {
	case "fifo":
		err = syscall.Mkfifo(path, 0o644)
		t.Cleanup(func() { go unblockFIFO(path) })
	case "directory":
		err = os.Mkdir(path, 0o755)
	case "symlink to /dev/zero":
		err = os.Symlink("/dev/zero", path)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestPromptCacheNonRegularEntries puts a FIFO, a directory and a
// symbolic link to /dev/zero under entries' names: at start (a FIFO hung
// New before it listened) and while serving, in place of the entry a
// request restores (a FIFO blocked the model's runner for good). Neither
// hangs nor crashes; the request is served cold and the file removed.
func TestPromptCacheNonRegularEntries(t *testing.T) {
	const limit = time.Minute
	want := generate(t, diskEngine(t, "", Config{}), diskSecond)
	for _, kind := range []string{"fifo", "directory", "symlink to /dev/zero"} {
		t.Run(kind+" at start", func(t *testing.T) {
			dir := t.TempDir()
			kv := savedEntries(t, dir, Config{})
			odd := filepath.Join(filepath.Dir(kv[0]), strings.Repeat("ab", 16)+".kv")
			nonRegular(t, kind, odd)
			var b *Engine
			boundedtest.Run(t, limit, "New with a "+kind+" in the cache", func() error {
				b = diskEngine(t, dir, Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				return nil
			})
			if got := generate(t, b, diskSecond); got.Usage.CachedTokens == 0 || got.Text != want.Text {
				t.Errorf("got %q with %d cached tokens, want %q from the sound entry", got.Text, got.Usage.CachedTokens, want.Text)
			}
			if _, err := os.Lstat(odd); err == nil {
				t.Errorf("the %s is still there", kind)
			}
		})
		t.Run(kind+" while serving", func(t *testing.T) {
			dir := t.TempDir()
			kv := savedEntries(t, dir, Config{})
			var logs logBuffer
			b := diskEngine(t, dir, Config{Logger: warnLogger(&logs)})
			for _, path := range kv {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				nonRegular(t, kind, path)
			}
			var got Result
			boundedtest.Run(t, limit, "a request with a "+kind+" in the cache", func() error {
				zero := 0.0
				ctx, cancel := context.WithTimeout(context.Background(), limit)
				defer cancel()
				var err error
				got, err = b.Generate(ctx, Request{Model: "tiny", Prompt: diskSecond, MaxTokens: 6, Temperature: &zero})
				return err
			})
			if got.Usage.CachedTokens != 0 || got.Text != want.Text {
				t.Errorf("got %q with %d cached tokens, want %q with none", got.Text, got.Usage.CachedTokens, want.Text)
			}
			b.disk.Flush()
			for _, path := range kv {
				if info, err := os.Lstat(path); err == nil && !info.Mode().IsRegular() {
					t.Errorf("the %s %s is still there", kind, filepath.Base(path))
				}
			}
			if !strings.Contains(logs.String(), "not a regular file") && !strings.Contains(logs.String(), "symbolic link") {
				t.Errorf("the log does not say why:\n%s", logs.String())
			}
			boundedtest.Run(t, limit, "Close", func() error { b.Close(); return nil })
		})
	}
}
