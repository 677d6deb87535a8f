//go:build cgo

package inference

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/backend"
)

// npmLibrary is where scripts/fetch-testdata.sh puts llama.cpp v0.4.0,
// from node-llama-cpp's platform package.
const npmLibrary = "../.build/testdata/npm/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v0.4.0.so"

// testLibrary returns the llama.cpp library that INFERKIT_LIBLLAMA names,
// or the npm one, or skips the test when neither is there.
func testLibrary(t testing.TB) string {
	t.Helper()
	path := os.Getenv(libraryEnv)
	if path == "" {
		path = npmLibrary
	}
	if _, err := os.Stat(path); err != nil {
		t.Skipf("skipping: no llama.cpp library at %s (scripts/fetch-testdata.sh fetches one; %s names another)", path, libraryEnv)
	}
	return path
}

// LibraryFor returns the library that backend b needs in a test's
// Config: testLibrary's for backend.LibLlama (or a skip), "" for the
// others.
func LibraryFor(t testing.TB, b string) string {
	if b != backend.LibLlama {
		return ""
	}
	return testLibrary(t)
}

// With a library configured and no Backend named, the library runs the
// model: ModelInfo says so, and its greedy text is the compiled-in
// llama.cpp's on the same file.
func TestLibraryIsTriedFirst(t *testing.T) {
	lib := testLibrary(t)
	opts := inferencetest.Options{Arch: "qwen3"}
	path := inferencetest.Model(t, opts)
	e := archEngine(t, opts, path, Config{Parallel: 1, Library: lib})
	if b := e.Models()[0].Backend; b != backend.LibLlama {
		t.Fatalf("backend %q, want %q", b, backend.LibLlama)
	}
	lc := archEngine(t, opts, path, Config{Parallel: 1, Backend: backend.LlamaCpp})
	for _, p := range archPrompts[:2] {
		if a, b := greedyTiny(t, e, p, 12, false).Text, greedyTiny(t, lc, p, 12, false).Text; a != b {
			t.Errorf("%q: libllama %q, llama.cpp %q", p, a, b)
		}
	}
}

// The environment variable configures the library as Config.Library
// does; named with another Backend, it is not used.
func TestLibraryFromEnvironment(t *testing.T) {
	t.Setenv(libraryEnv, testLibrary(t))
	opts := inferencetest.Options{}
	path := inferencetest.Model(t, opts)
	if b := archEngine(t, opts, path, Config{Parallel: 1}).Models()[0].Backend; b != backend.LibLlama {
		t.Fatalf("with %s set: backend %q", libraryEnv, b)
	}
	if b := archEngine(t, opts, path, Config{Parallel: 1, Backend: backend.LlamaCpp}).Models()[0].Backend; b != backend.LlamaCpp {
		t.Fatalf("with %s set and Backend llama.cpp: backend %q", libraryEnv, b)
	}
}

// New refuses, before loading any model, a library path that names
// nothing, a library of another llama.cpp API (naming both versions), a
// libllama backend without a library, and a library beside another
// backend.
func TestLibraryRefusedAtNew(t *testing.T) {
	t.Setenv(libraryEnv, "")
	models := []catalog.Model{{ID: "m", Path: inferencetest.Model(t, inferencetest.Options{})}}
	missing := filepath.Join(t.TempDir(), "libllama.so")
	cases := []struct {
		name string
		cfg  Config
		want []string
		is   error
	}{
		{"missing", Config{Library: missing}, []string{"Config.Library", missing}, fs.ErrNotExist},
		{"no library", Config{Backend: backend.LibLlama}, []string{libraryEnv, "Config.Library"}, nil},
		{"another backend", Config{Backend: backend.Ollama, Library: missing}, []string{"Config.Library", "ollama"}, nil},
	}
	if cc, err := exec.LookPath("cc"); err == nil {
		dir := t.TempDir()
		src := filepath.Join(dir, "old.c")
		if err := os.WriteFile(src, []byte(`const char *llama_version(void) { return "0.3.1"; }`), 0o644); err != nil {
			t.Fatal(err)
		}
		old := filepath.Join(dir, "libllama.so")
		if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", old, src).CombinedOutput(); err != nil {
			t.Fatalf("cc: %v\n%s", err, out)
		}
		cases = append(cases, struct {
			name string
			cfg  Config
			want []string
			is   error
		}{"another version", Config{Library: old, Backend: backend.LibLlama}, []string{"0.3.1", "0.4.0", "Config.Library"}, nil})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Models = models
			e, err := New(c.cfg)
			if err == nil {
				e.Close()
				t.Fatal("New succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("New: %v, want it to name %q", err, w)
				}
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("New: %v, want it to wrap %v", err, c.is)
			}
		})
	}
}
