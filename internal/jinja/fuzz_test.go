package jinja

import (
	"strings"
	"testing"
)

// FuzzRender checks that Parse and Render never panic or hang, whatever the
// template: go test -fuzz FuzzRender ./internal/jinja
func FuzzRender(f *testing.F) {
	for _, c := range engineCases {
		f.Add(c.tpl)
	}
	f.Add("{% for m in messages %}{{ m.content|trim }}{% if loop.last %}{{ m['role'] }}{% endif %}{% endfor %}")
	f.Add("{{ (messages[0].content if messages else '')|tojson(indent=2) }}")
	vars := map[string]any{
		"messages": []any{
			map[string]any{"role": "user", "content": "hi"},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "x"}}},
		},
		"tools":                 nil,
		"add_generation_prompt": true,
	}
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Parse(src)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("Parse panicked: %v", err)
			}
			return
		}
		if _, err := tpl.Render(vars); err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("Render panicked: %v", err)
		}
	})
}
