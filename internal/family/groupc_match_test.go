package family

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// groupCTemplates are the templates of testdata/templates that are group
// C's, with a GGUF architecture of the family and the family they are.
var groupCTemplates = []struct{ file, arch, family string }{
	{"gemma3.jinja", "gemma3", "gemma3"},
	{"gemma4-e2b.jinja", "gemma4", "gemma4"},
	{"gemma4-31b.jinja", "gemma4", "gemma4"},
	{"gemma4-tiny.jinja", "gemma4", "gemma4"},
	{"nemotron3-nano.jinja", "nemotron_h_moe", "nemotron"},
	{"functiongemma.excerpt.jinja", "gemma3", "functiongemma"},
	{"lfm2.excerpt.jinja", "lfm2", "lfm2"},
	{"lfm2-thinking.excerpt.jinja", "lfm2", "lfm2-thinking"},
	{"olmo3.excerpt.jinja", "olmo2", "olmo3"},
	{"olmo3-think.excerpt.jinja", "olmo2", "olmo3-think"},
}

var groupC = []*Family{functionGemma, gemma4, gemma3, lfm2Thinking, lfm2, olmo3Think, olmo3, nemotron}

func readTemplate(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "templates", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGroupCMatch checks that Lookup finds each template's family and
// that no other family of group C claims it.
func TestGroupCMatch(t *testing.T) {
	for _, tt := range groupCTemplates {
		t.Run(tt.file, func(t *testing.T) {
			tmpl := readTemplate(t, tt.file)
			if f := Lookup(tt.arch, tmpl); f == nil || f.Name != tt.family {
				t.Errorf("Lookup(%q, %s) = %v, want %s", tt.arch, tt.file, f, tt.family)
			}
			for _, f := range groupC {
				if f.Name != tt.family && f.Match(tt.arch, tmpl) {
					t.Errorf("%s also matches", f.Name)
				}
			}
		})
	}
}

// TestGroupCMatchOthers checks that group C's families claim none of the
// other templates in testdata/templates, under the architectures others
// have, and none of group C's own under another family's architecture
// where the family needs its own.
func TestGroupCMatchOthers(t *testing.T) {
	ours := map[string]bool{}
	for _, tt := range groupCTemplates {
		ours[tt.file] = true
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "templates"))
	if err != nil {
		t.Fatal(err)
	}
	archs := []string{"", "llama", "qwen3", "qwen3moe", "qwen35", "deepseek2", "gpt-oss", "glm4moe", "mistral3", "phi3", "granite"}
	for _, e := range entries {
		if ours[e.Name()] || !strings.Contains(e.Name(), ".jinja") {
			continue
		}
		tmpl := readTemplate(t, e.Name())
		for _, arch := range archs {
			for _, f := range groupC {
				if f.Match(arch, tmpl) {
					t.Errorf("%s matches %s (arch %q), a template of another group", f.Name, e.Name(), arch)
				}
			}
		}
	}
	// Nemotron, Olmo 3 and LFM2 keep to their architectures: a Qwen
	// model with Nemotron's or Olmo's ChatML-like template is not theirs.
	for _, tt := range []struct{ file, family string }{
		{"nemotron3-nano.jinja", "nemotron"}, {"olmo3.excerpt.jinja", "olmo3"}, {"olmo3-think.excerpt.jinja", "olmo3-think"},
		{"gemma3.jinja", "gemma3"},
	} {
		tmpl := readTemplate(t, tt.file)
		for _, f := range groupC {
			if f.Name == tt.family && f.Match("qwen3", tmpl) {
				t.Errorf("%s matches %s under arch qwen3", f.Name, tt.file)
			}
		}
	}
}
