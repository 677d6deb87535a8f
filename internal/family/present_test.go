package family

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/internal/jinja"
)

// TestPresent renders each real template of a family that calls tools
// (not the excerpts, nor inferencetest's gemma4-tiny) with a conversation
// and tools, as the engine does: a template that does not use its tools
// variable must have a Present, and the prompt must show each tool's
// name and its parameters' names, once; with Present, a template that
// does use it is left to show them itself, and Present keeps the system
// prompt.
func TestPresent(t *testing.T) {
	newTools := func() []any {
		var out []any
		for _, src := range []string{
			`{"type":"function","function":{"name":"get_weather","description":"Current weather.","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}}}`,
			`{"type":"function","function":{"name":"get_time","description":"The time in a zone.","parameters":{"type":"object","properties":{"zone":{"type":"string"}}}}}`,
		} {
			v, err := jinja.ParseJSON([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		return out
	}
	message := func(role, content string) any {
		m := jinja.NewMap()
		m.Set("role", role)
		m.Set("content", content)
		return m
	}
	for _, tt := range templates {
		if strings.Contains(tt.file, ".excerpt.") || tt.file == "gemma4-tiny.jinja" {
			continue
		}
		src, err := os.ReadFile(filepath.Join("testdata", "templates", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		f := Lookup(tt.arch, string(src))
		if f == nil || f.Tools == nil {
			continue
		}
		t.Run(tt.file+"/"+tt.arch, func(t *testing.T) {
			tmpl, err := jinja.Parse(string(src))
			if err != nil {
				t.Fatal(err)
			}
			uses := tmpl.Uses("tools")
			if !uses && f.Tools.Present == nil {
				t.Fatalf("%s: the template does not show the tools, and the family has no Present", f.Name)
			}
			for _, system := range []bool{false, true} {
				msgs := []any{message("user", "What time is it in Oslo?")}
				if system {
					msgs = append([]any{message("system", "Be brief.")}, msgs...)
				}
				tools := newTools()
				vars := map[string]any{"add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>", "tools": tools}
				if !uses {
					msgs = f.Tools.Present(msgs, tools)
				}
				vars["messages"] = msgs
				out, err := tmpl.Render(vars)
				if err != nil {
					t.Fatal(err)
				}
				for _, want := range []string{"get_weather", "Current weather.", "city", "unit", "get_time", "zone", "What time is it in Oslo?"} {
					if !strings.Contains(out, want) {
						t.Errorf("system %v: %q is not in the prompt:\n%s", system, want, out)
					}
				}
				if system && !uses && !strings.Contains(out, "Be brief.") {
					t.Errorf("the system prompt is lost:\n%s", out)
				}
				if n := strings.Count(out, "get_weather"); n != 1 {
					t.Errorf("system %v: get_weather shown %d times:\n%s", system, n, out)
				}
			}
		})
	}
}
