package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/inferkit/inferkit/"

// layerOf is the layer of a folder of the module, by its first element
// (its first two under internal/, whose packages are all at the bottom).
var layerOf = map[string]int{
	"internal": 0,
	"catalog":  1, "ratelimit": 1, "cache": 1, "search": 1, "policy": 1,
	"account":   2,
	"inference": 3,
	"formats":   4, "decision": 4,
	"httpapi": 5, "console": 5, "codereview": 5,
	"examples": 6, "scripts": 6,
}

// mechanisms take the hosted product's data (policy) as data: their code
// does not import it; their tests and test suites may.
var mechanisms = []string{"ratelimit", "catalog", "cache", "search"}

// loader is the file that picks a backend: the packages under internal/
// it imports, the seam apart, are the backends.
const loader = "inference/loader.go"

// backendsOf returns the backends the loader at path imports.
func backendsOf(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if rel, ok := strings.CutPrefix(p, module); ok && strings.HasPrefix(rel, "internal/") && rel != "internal/backend" {
			out = append(out, rel)
		}
	}
	if len(out) < 2 {
		t.Fatalf("the loader %s imports %d backends: %v", path, len(out), out)
	}
	return out
}

// mayImportBackends are the files outside the backends that import one:
// the loader, and tests that check a file against a backend directly.
// The list only shrinks.
var mayImportBackends = []string{
	loader,
	"inference/backend_bench_test.go", "inference/bench_test.go",
	"inference/image_test.go", "inference/kvcache_bench_test.go", "inference/plan_test.go",
	"inference/prefixstore_bench_test.go",
	"internal/tinymodel/newarch_engine_test.go", "internal/tinymodel/tokenizer_llamacpp_test.go",
	"internal/goengine/tokenize_test.go",    // the Go engine's tokens against llama.cpp's
	"inference/libllama_test.go",            // the library's version in the agreement table
	"internal/libllama/backend_test.go",     // the library's numbers against the compiled-in llama.cpp's
	"examples/server/library_bench_test.go", // the bare loop that the served streams are measured against
}

func layer(dir string) (int, bool) {
	top, _, _ := strings.Cut(dir, "/")
	l, ok := layerOf[top]
	return l, ok
}

// TestImportsPointDown: every Go file, tests included, imports packages
// of its own layer or lower ones, and a backend only where it may.
func TestImportsPointDown(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	backends := backendsOf(t, filepath.Join(root, loader))
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		dir := filepath.ToSlash(filepath.Dir(rel))
		from, ok := layer(dir)
		if !ok {
			t.Errorf("%s: the folder %s has no layer in layerOf", rel, dir)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			target, ok := strings.CutPrefix(p, module)
			if !ok {
				continue
			}
			to, known := layer(target)
			switch {
			case !known:
				t.Errorf("%s imports %s, whose folder has no layer", rel, target)
			case to > from:
				t.Errorf("%s (layer %d) imports %s (layer %d): upward", rel, from, target, to)
			}
			top, _, _ := strings.Cut(dir, "/")
			test := strings.HasSuffix(name, "_test.go") || strings.HasSuffix(filepath.Base(dir), "test")
			if target == "policy" && slices.Contains(mechanisms, top) && !test {
				t.Errorf("%s imports policy: %s takes the product's data as data", rel, top)
			}
			for _, b := range backends {
				if (target == b || strings.HasPrefix(target, b+"/")) && dir != b && !strings.HasPrefix(dir, b+"/") && !slices.Contains(mayImportBackends, rel) {
					t.Errorf("%s imports the backend %s: only the backends and the loader may", rel, target)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files: is the module root %s?", files, root)
	}
	for _, rel := range mayImportBackends {
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			t.Errorf("mayImportBackends names %s, which is gone: strike it off", rel)
		}
	}
}

// narrow are packages that import fewer of the module's packages than
// their layer allows: each may import only those listed (its tests also
// those in narrowTests). The decode machinery speaks the backend seam and
// the model families, so that it builds and tests without cgo, below
// everything it serves.
var (
	narrow = map[string][]string{
		"internal/runner": {"internal/backend", "internal/family"},
	}
	narrowTests = map[string][]string{
		"internal/runner": {"internal/backend/fakebackend"},
	}
)

// TestNarrowImports: a narrow package imports, of the module, only what
// narrow lists for it.
func TestNarrowImports(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for dir, allowed := range narrow {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		files := 0
		for _, ent := range entries {
			name := ent.Name()
			if ent.IsDir() || !strings.HasSuffix(name, ".go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, dir, name), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			files++
			ok := allowed
			if strings.HasSuffix(name, "_test.go") {
				ok = append(slices.Clip(allowed), narrowTests[dir]...)
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if target, mod := strings.CutPrefix(p, module); mod && !slices.Contains(ok, target) {
					t.Errorf("%s/%s imports %s: %s imports only %v of the module", dir, name, target, dir, ok)
				}
			}
		}
		if files == 0 {
			t.Errorf("%s holds no Go file", dir)
		}
	}
}
