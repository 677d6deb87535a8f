package formats_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayout keeps the hub and spoke: the core and internal/wire import
// no wire style, and a style imports no other style but the one whose
// errors it answers in (legacy completions in chat's names).
func TestLayout(t *testing.T) {
	const root = "github.com/inferkit/inferkit/formats"
	styles := map[string]bool{"chat": true, "messages": true, "responses": true, "completions": true, "embeddings": true}
	allowed := map[string]map[string]bool{"completions": {"chat": true}}
	for _, dir := range []string{".", "internal/wire", "chat", "messages", "responses", "completions", "embeddings"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v %v", dir, files, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range f.Imports {
				path, _ := strconv.Unquote(im.Path.Value)
				style, ok := strings.CutPrefix(path, root+"/")
				if !ok || !styles[style] || style == dir || allowed[dir][style] {
					continue
				}
				t.Errorf("%s imports %s: the core and the styles' shared pieces import no style, and a style no other", file, path)
			}
		}
	}
}
