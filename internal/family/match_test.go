package family

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// templates are the real chat templates of testdata/templates (see its
// README), the architecture a GGUF of them carries, and the family each
// is; "" for none.
var templates = []struct{ file, arch, family string }{
	{"qwen3.jinja", "qwen3", "qwen3"},
	{"qwen3.jinja", "qwen3moe", "qwen3"},
	{"qwen3-next.jinja", "qwen3next", "qwen3"},
	{"qwen3.5-4b.jinja", "qwen35", "qwen3.5"},
	{"qwen3.5-4b.jinja", "qwen3", "qwen3.5"},
	{"qwen3-coder-30b.jinja", "qwen3moe", "qwen3-coder"},
	{"qwen2.5.jinja", "qwen2", "hermes"},
	{"qwen3.jinja", "llama", "hermes"},
	{"qwen3-next.jinja", "llama", "hermes"},
	{"deepseek-v3.jinja", "deepseek2", "deepseek-v3"},
	{"deepseek-r1.jinja", "deepseek2", "deepseek-r1"},
	{"deepseek-r1-distill-llama-8b.jinja", "llama", "deepseek-r1"},
	{"deepseek-v3.1.jinja", "deepseek2", "deepseek-v3.1"},
	{"glm-4.6.jinja", "glm4moe", "glm-4.5"},
	{"glm-4.7-flash.jinja", "deepseek2", "glm-4.7"},

	{"gpt-oss-20b.jinja", "gpt-oss", "gpt-oss"},
	{"gpt-oss-20b.jinja", "", "gpt-oss"},
	{"llama3.1-8b.jinja", "llama", "llama3"},
	{"llama3.2-3b.jinja", "llama", "llama3"},
	{"llama3.2-vision.jinja", "mllama", "llama3"},
	{"llama3.1-nemotron-70b.jinja", "llama", "llama3"},
	{"llama4.jinja", "llama4", "llama4"},
	{"llama4.jinja", "", "llama4"},
	{"mistral-7b-instruct-v0.3.jinja", "llama", "mistral"},
	{"mistral-nemo-instruct-2407.jinja", "llama", "mistral"},
	{"ministral-3-14b-instruct-2512.jinja", "mistral3", "ministral"},
	{"granite3.1-moe-1b.jinja", "granitemoe", "granite3"},
	{"granite3.2-8b.jinja", "granite", "granite3.2"},
	{"granite3.3-2b.jinja", "granite", "granite3.3"},
	{"granite4.jinja", "granitehybrid", "granite4"},
	{"phi4-mini.jinja", "phi3", "phi4-mini"},
	{"phi4-mini-reasoning.jinja", "phi3", "phi4-reasoning"},
	{"phi4-reasoning.jinja", "phi3", "phi4-reasoning"},
	{"phi4.jinja", "phi3", "phi4"},
	// Templates of no family: Llama 3 without tools, older Mistral,
	// Firefunction (a Llama 3 fine-tune with its own call format).
	{"llama3-8b.jinja", "llama", ""},
	{"mistral-7b-instruct-notools.jinja", "llama", ""},
	{"firefunction-v2.jinja", "llama", ""},

	{"gemma3.jinja", "gemma3", "gemma3"},
	{"gemma4-e2b.jinja", "gemma4", "gemma4"},
	{"gemma4-31b.jinja", "gemma4", "gemma4"},
	{"gemma4-tiny.jinja", "gemma4", "gemma4"},
	{"nemotron3-nano.jinja", "nemotron_h_moe", "nemotron"},
	// Under another architecture, Nemotron's template is of Qwen3.5's
	// kind: its calls, enable_thinking.
	{"nemotron3-nano.jinja", "llama", "qwen3.5"},
	{"functiongemma.excerpt.jinja", "gemma3", "functiongemma"},
	{"lfm2.excerpt.jinja", "lfm2", "lfm2"},
	{"lfm2-thinking.excerpt.jinja", "lfm2", "lfm2-thinking"},
	{"olmo3.excerpt.jinja", "olmo2", "olmo3"},
	{"olmo3-think.excerpt.jinja", "olmo2", "olmo3-think"},
}

func readTemplate(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "templates", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func lookupName(arch, template string) string {
	if f := Lookup(arch, template); f != nil {
		return f.Name
	}
	return ""
}

// TestMatch checks that Lookup finds each real template's family under
// its architecture; that under an architecture no family claims, a
// template is its own family's or none's, never another's; and that the
// families that keep to their architectures do.
func TestMatch(t *testing.T) {
	own := map[string][]string{} // template → the families it is
	for _, tt := range templates {
		own[tt.file] = append(own[tt.file], tt.family)
		if got := lookupName(tt.arch, readTemplate(t, tt.file)); got != tt.family {
			t.Errorf("Lookup(%q, %s) = %q, want %q", tt.arch, tt.file, got, tt.family)
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "templates", "*.jinja"))
	for _, path := range files {
		file := filepath.Base(path)
		if own[file] == nil {
			t.Errorf("%s is in no test case", file)
		}
		for _, arch := range []string{"", "llama"} {
			if got := lookupName(arch, readTemplate(t, file)); got != "" && !slices.Contains(own[file], got) {
				t.Errorf("Lookup(%q, %s) = %s, a family not its own", arch, file, got)
			}
		}
	}
	// Nemotron, Olmo 3 and Gemma 3 keep to their architectures.
	for _, tt := range []struct{ file, family string }{
		{"nemotron3-nano.jinja", "nemotron"}, {"olmo3.excerpt.jinja", "olmo3"},
		{"olmo3-think.excerpt.jinja", "olmo3-think"}, {"gemma3.jinja", "gemma3"},
	} {
		if got := lookupName("qwen3", readTemplate(t, tt.file)); got == tt.family {
			t.Errorf("Lookup(qwen3, %s) = %s", tt.file, got)
		}
	}
	// inferkit's own ChatML template, which the engine renders for a
	// model whose GGUF has none, and the empty template that stands for
	// it, are hermes: the registry's last family.
	for _, tmpl := range []string{ChatML, ""} {
		for _, arch := range []string{"llama", "qwen2", "qwen3", "gemma3"} {
			if got := lookupName(arch, tmpl); got != "hermes" {
				t.Errorf("Lookup(%q, inferkit's ChatML %.20q) = %q, want hermes", arch, tmpl, got)
			}
		}
	}
	if r := registry(); r[len(r)-1] != hermes {
		t.Errorf("the registry's last family is %s, want hermes", r[len(r)-1].Name)
	}
	// A ChatML template with no tools in it says nothing of calls.
	const plain = "{%- for message in messages -%}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' -}}{%- endfor -%}"
	if got := lookupName("llama", plain); got != "" {
		t.Errorf("Lookup(plain ChatML) = %s, want none", got)
	}
}
