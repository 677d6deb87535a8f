//go:build cgo

package inference

import (
	"bufio"
	"context"
	"errors"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/runner"
)

// diskEngine is a byte-level tiny model (one token per byte) with a prompt
// cache in dir that saves prefixes of 32 tokens when reused and of 64
// when decoded at once (dir "" for none).
func diskEngine(t *testing.T, dir string, cfg Config) *Engine {
	t.Helper()
	cfg.Models = []catalog.Model{{ID: "tiny", Path: inferencetest.Model(t, inferencetest.Options{ContextLength: 4096})}}
	cfg.Threads, cfg.ContextTokens, cfg.Parallel, cfg.CacheDir = 1, 1024, 2, dir
	e, err := New(WithSaveThresholds(cfg, 32, 64))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// entries lists the prompt cache's entries and temporary files under dir.
func entries(t *testing.T, dir string) (kv, tmp []string) {
	t.Helper()
	kv, _ = filepath.Glob(filepath.Join(dir, "*", "*.kv"))
	tmp, _ = filepath.Glob(filepath.Join(dir, "*", ".tmp-*"))
	return kv, tmp
}

const (
	diskSystem = "You are a careful assistant. Answer in one short sentence, and never more than that. "
	diskFirst  = diskSystem + "What is the capital of France?"
	diskSecond = diskSystem + "Name a colour."
)

func TestPromptCacheSurvivesRestart(t *testing.T) {
	checkSurvivesRestart(t, Config{})
}

// checkSurvivesRestart checks that a prefix saved by an engine of cfg is
// restored by the next one after a restart, and continues as the first
// engine did.
func checkSurvivesRestart(t *testing.T, cfg Config) {
	dir := t.TempDir()
	a := diskEngine(t, dir, cfg)
	generate(t, a, diskFirst)
	if res := generate(t, a, diskSecond); res.Usage.CachedTokens != bytePrefix(diskFirst, diskSecond) {
		t.Fatalf("in process: %d cached tokens, want %d", res.Usage.CachedTokens, bytePrefix(diskFirst, diskSecond))
	}
	// The same prompt again decodes its last token alone, as it will
	// after the restart: the two outputs are then computed alike.
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
}

func TestPromptCacheSavesLongPrompts(t *testing.T) {
	dir := t.TempDir()
	a := diskEngine(t, dir, Config{})
	long := strings.Repeat("a long prompt ", 6) // 84 tokens, decoded at once
	generate(t, a, long)
	a.disk.Flush()
	kv, _ := entries(t, dir)
	if len(kv) != 1 {
		t.Fatalf("%d entries after a long prompt, want 1", len(kv))
	}
	e, err := runner.ReadPrefixHeader(kv[0], filepath.Base(filepath.Dir(kv[0])))
	if err != nil || len(e.Tokens) != len(long) {
		t.Fatalf("the entry: %v, %d tokens, want the prompt's %d", err, len(e.Tokens), len(long))
	}
	generate(t, a, "short") // below the thresholds: nothing more
	a.disk.Flush()
	if kv, _ := entries(t, dir); len(kv) != 1 {
		t.Errorf("%d entries after a short prompt, want 1", len(kv))
	}
}

// TestPromptCacheDamagedEntries damages a saved entry in each way a crash
// or a disk could, and checks that the next start serves the request as an
// engine without the cache does, and removes the entry.
func TestPromptCacheDamagedEntries(t *testing.T) {
	want := generate(t, diskEngine(t, "", Config{}), diskSecond)
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
		kept   bool // the entry no longer matches the prompt: it is never read
	}{
		{"truncated", func(t *testing.T, path string) {
			info, _ := os.Stat(path)
			if err := os.Truncate(path, info.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a byte of the state flipped", func(t *testing.T, path string) { flip(t, path, -100) }, false},
		{"the checksum flipped", func(t *testing.T, path string) { flip(t, path, -1) }, false},
		{"a token flipped", func(t *testing.T, path string) { flip(t, path, 70) }, true},
		{"another version", func(t *testing.T, path string) { flip(t, path, len("inferkv\n")) }, false}, // the version, after the magic
		{"empty", func(t *testing.T, path string) {
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := diskEngine(t, dir, Config{})
			generate(t, a, diskSecond)
			generate(t, a, diskSecond)
			a.Close()
			kv, _ := entries(t, dir)
			if len(kv) == 0 {
				t.Fatal("no entry saved")
			}
			for _, path := range kv {
				tc.damage(t, path)
			}
			b := diskEngine(t, dir, Config{})
			got := generate(t, b, diskSecond)
			if got.Usage.CachedTokens != 0 || got.Text != want.Text {
				t.Errorf("got %q with %d cached tokens, want %q with none", got.Text, got.Usage.CachedTokens, want.Text)
			}
			b.disk.Flush()
			for _, path := range kv {
				if _, err := os.Stat(path); err == nil && !tc.kept {
					// The request may have saved a sound entry of its own
					// under the same name.
					if _, _, err := runner.ReadEntry(path, filepath.Base(filepath.Dir(path)), 1<<40); err != nil {
						t.Errorf("the damaged entry %s is still there", filepath.Base(path))
					}
				}
			}
		})
	}
}

// flip inverts the byte at offset off of the file (from its end when
// negative).
func flip(t *testing.T, path string, off int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += len(b)
	}
	b[off] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPromptCacheKilledMidSave kills a process while it writes an entry,
// then starts again on the same directory: the partial entry is never
// read, and the request is served as without a cache.
func TestPromptCacheKilledMidSave(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPromptCacheMidSaveChild$", "-test.v")
	cmd.Env = append(os.Environ(), "INFERKIT_MIDSAVE_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	saving := false
	for lines.Scan() {
		if lines.Text() == "mid-save" {
			saving = true
			break
		}
	}
	if !saving {
		t.Fatal("the child ended without starting to save")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	kv, tmp := entries(t, dir)
	if len(kv) != 0 || len(tmp) != 1 {
		t.Fatalf("after the kill: entries %v, temporary files %v; want one temporary file", kv, tmp)
	}
	// A crash an hour ago leaves a file that the next start removes.
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(tmp[0], old, old)

	want := generate(t, diskEngine(t, "", Config{}), diskFirst)
	b := diskEngine(t, dir, Config{})
	got := generate(t, b, diskFirst)
	if got.Usage.CachedTokens != 0 || got.Text != want.Text {
		t.Errorf("after the crash: %q with %d cached tokens, want %q with none", got.Text, got.Usage.CachedTokens, want.Text)
	}
	if _, err := os.Stat(tmp[0]); err == nil {
		t.Errorf("the crash's temporary file is still there")
	}
}

// TestPromptCacheMidSaveChild is TestPromptCacheKilledMidSave's child: it
// decodes a long prompt, whose entry it starts to write, and stops in the
// middle of the file until it is killed.
func TestPromptCacheMidSaveChild(t *testing.T) {
	dir := os.Getenv("INFERKIT_MIDSAVE_DIR")
	if dir == "" {
		t.Skip("run by TestPromptCacheKilledMidSave")
	}
	e := diskEngine(t, dir, Config{})
	e.OnMidSave(func() {
		os.Stdout.WriteString("mid-save\n")
		select {}
	})
	generate(t, e, diskFirst)
	select {}
}

func TestKeepAliveUnloadsAndReloads(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	var progress []float64
	e := diskEngine(t, dir, Config{KeepAlive: 5 * time.Minute, Now: clock.Now, CacheTTL: time.Hour,
		Progress: func(_ string, f float64) { progress = append(progress, f) }})
	loaded := func() bool { return e.Models()[0].Loaded }
	if !loaded() {
		t.Fatal("not loaded after New")
	}
	generate(t, e, diskFirst)

	// A request at work keeps the model loaded however long it takes.
	zero := 0.0
	next, stop := iter.Pull2(e.Stream(context.Background(), Request{Model: "tiny", Prompt: "Hello", MaxTokens: 1000, Temperature: &zero, IgnoreEOS: true}))
	if _, err, ok := next(); !ok || err != nil {
		t.Fatalf("stream: %v", err)
	}
	clock.Advance(time.Hour)
	e.Sweep()
	if !loaded() {
		t.Fatal("unloaded with a request at work")
	}
	stop()
	waitFor(t, "the stream's sequence to be free", func() bool { return e.Stats()[0].Active == 0 })

	clock.Advance(4 * time.Minute)
	e.Sweep()
	if !loaded() {
		t.Fatal("unloaded after 4 minutes idle, KeepAlive is 5")
	}
	clock.Advance(2 * time.Minute)
	progress = nil
	e.Sweep()
	if loaded() {
		t.Fatal("still loaded after 6 minutes idle")
	}
	if s := e.Stats()[0]; s.Sequences != 0 {
		t.Errorf("stats of an unloaded model: %+v", s)
	}
	if kv, _ := entries(t, dir); len(kv) == 0 {
		t.Error("unloading saved no prompt prefix")
	}

	// The next request loads the model again, with progress, and finds
	// its prefixes on disk.
	res := generate(t, e, diskSecond)
	if !loaded() {
		t.Error("not loaded after a request")
	}
	if len(progress) == 0 || progress[len(progress)-1] != 1 {
		t.Errorf("progress while loading again: %v", progress)
	}
	if want := bytePrefix(diskFirst, diskSecond); res.Usage.CachedTokens < want {
		t.Errorf("after reloading: %d cached tokens, want at least %d from disk", res.Usage.CachedTokens, want)
	}

	// Unload waits for the requests at work; Load brings the model back.
	next, stop = iter.Pull2(e.Stream(context.Background(), Request{Model: "tiny", Prompt: "Hello", MaxTokens: 1000, Temperature: &zero, IgnoreEOS: true}))
	next()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if err := e.Unload(ctx, "tiny"); err != context.DeadlineExceeded {
		t.Errorf("Unload with a request at work: %v, want the deadline", err)
	}
	cancel()
	done := make(chan error)
	go func() { done <- e.Unload(context.Background(), "tiny") }()
	stop()
	if err := <-done; err != nil || loaded() {
		t.Fatalf("Unload: %v, loaded %v", err, loaded())
	}
	// A file that went away fails the request that needs it, clearly,
	// and the next one loads it once it is back.
	path := e.Models()[0].Path
	if err := os.Rename(path, path+".away"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Generate(context.Background(), Request{Model: "tiny", Prompt: "Hello", MaxTokens: 1}); err == nil || !strings.Contains(err.Error(), "loading") {
		t.Errorf("with the model file gone: %v, want a loading error", err)
	}
	if err := os.Rename(path+".away", path); err != nil {
		t.Fatal(err)
	}
	if err := e.Load(context.Background(), "tiny"); err != nil || !loaded() {
		t.Fatalf("Load: %v, loaded %v", err, loaded())
	}
	// A caller that has stopped waiting loads nothing.
	if err := e.Unload(context.Background(), "tiny"); err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Prepare(gone, Request{Model: "tiny", Prompt: "Hello"}); !errors.Is(err, context.Canceled) || loaded() {
		t.Errorf("Prepare with a cancelled context: %v, loaded %v; want context.Canceled and no load", err, loaded())
	}
	if _, err := e.Prepare(context.Background(), Request{Model: "tiny", Prompt: "Hello"}); err != nil || !loaded() {
		t.Errorf("Prepare: %v, loaded %v", err, loaded())
	}
	if err := e.Unload(context.Background(), "nope"); err == nil {
		t.Error("Unload of an unknown model succeeded")
	}
}

// An Unload that waits for a request does not hold Close back: Close ends
// the request at once.
func TestCloseDuringUnload(t *testing.T) {
	e := diskEngine(t, "", Config{})
	zero := 0.0
	next, stop := iter.Pull2(e.Stream(context.Background(), Request{Model: "tiny", Prompt: "Hello", MaxTokens: 1000, Temperature: &zero, IgnoreEOS: true}))
	defer stop()
	if _, err, ok := next(); !ok || err != nil {
		t.Fatalf("stream: %v", err)
	}
	unloaded := make(chan error, 1)
	go func() { unloaded <- e.Unload(context.Background(), "tiny") }()
	waitFor(t, "Unload to wait for the request", func() bool {
		st := e.res.of[e.names["tiny"]]
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.released != nil
	})
	e.Close()
	for {
		ev, err, ok := next()
		if !ok {
			t.Fatal("the stream ended without an error")
		}
		if err != nil {
			if !errors.Is(err, ErrClosed) {
				t.Errorf("stream: %v, want ErrClosed", err)
			}
			break
		}
		if ev.Final != nil {
			t.Fatal("the request ran to its end: Close waited for it")
		}
	}
	if err := <-unloaded; err != nil {
		t.Errorf("Unload: %v", err)
	}
}
