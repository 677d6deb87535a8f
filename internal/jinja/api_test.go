package jinja

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func mustRender(t *testing.T, src string, vars map[string]any) string {
	t.Helper()
	tpl, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	out, err := tpl.Render(vars)
	if err != nil {
		t.Fatalf("Render(%q): %v", src, err)
	}
	return out
}

func TestMapKeepsInsertionOrder(t *testing.T) {
	params := NewMap()
	params.Set("type", "object")
	props := NewMap()
	props.Set("zeta", map[string]any{"type": "string"})
	props.Set("alpha", map[string]any{"type": "integer", "description": "n"})
	params.Set("properties", props)
	params.Set("type", "object") // re-setting keeps the position
	got := mustRender(t, `{{ p|tojson }}|{% for k, v in p.properties.items() %}{{ k }};{% endfor %}|{{ p }}`, map[string]any{"p": params})
	want := `{"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"description": "n", "type": "integer"}}}|zeta;alpha;|{'type': 'object', 'properties': {'zeta': {'type': 'string'}, 'alpha': {'description': 'n', 'type': 'integer'}}}`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	if v, ok := params.Get("type"); !ok || v != "object" || params.Len() != 2 {
		t.Errorf("Get/Len: %v %v %d", v, ok, params.Len())
	}
	js, err := params.MarshalJSON()
	if err != nil || string(js) != `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"description":"n","type":"integer"}}}` {
		t.Errorf("MarshalJSON: %s %v", js, err)
	}
}

func TestGoValues(t *testing.T) {
	type alias string
	got := mustRender(t, `{{ a }} {{ b }} {{ c }} {{ d }} {{ e }} {{ f }} {{ g|tojson }} {{ h }}`, map[string]any{
		"a": 3, "b": int64(-4), "c": float32(0.5), "d": []string{"x", "y"},
		"e": map[string]int{"b": 1, "a": 2}, "f": nil, "g": []map[string]any{{"k": true}},
		"h": alias("s"),
	})
	want := `3 -4 0.5 ['x', 'y'] {'a': 2, 'b': 1} None [{"k": true}] s`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

func TestParseJSON(t *testing.T) {
	v, err := ParseJSON([]byte(`{"b": 1, "a": [1.5, 2, 1e2, 12345678901234567890, null, "s", {"y": 0, "x": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := mustRender(t, `{{ v }}`, map[string]any{"v": v})
	want := `{'b': 1, 'a': [1.5, 2, 100.0, 1.2345678901234567e+19, None, 's', {'y': 0, 'x': 1}]}`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	for _, bad := range []string{`{`, `{"a": 1} x`, `[1,]`} {
		if _, err := ParseJSON([]byte(bad)); err == nil {
			t.Errorf("ParseJSON(%q): no error", bad)
		}
	}
}

func TestFuncs(t *testing.T) {
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	vars := map[string]any{
		"strftime_now": Func(func(args ...any) (any, error) {
			return strftime(now, args[0].(string)), nil
		}),
		"add": Func(func(args ...any) (any, error) {
			return args[0].(int64) + args[1].(int64), nil
		}),
		"fail": Func(func(args ...any) (any, error) { return nil, errors.New("boom") }),
	}
	got := mustRender(t, `{{ strftime_now('%Y-%m-%d %H:%M:%S %d %b %-d %B %A %a %j %I%p') }} {{ add(2, 3) }} {{ add is callable }}`, vars)
	want := `2025-03-04 05:06:07 04 Mar 4 March Tuesday Tue 063 05AM 5 True`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	tpl, _ := Parse(`{{ fail() }}`)
	if _, err := tpl.Render(vars); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("error from Func not returned: %v", err)
	}
	// The default strftime_now uses the real clock.
	out := mustRender(t, `{{ strftime_now('%Y') }}`, nil)
	if out != fmt.Sprint(time.Now().Year()) && out != fmt.Sprint(time.Now().Year()-1) {
		t.Errorf("strftime_now default: %s", out)
	}
}

func TestSyntaxErrorLines(t *testing.T) {
	cases := []struct {
		src  string
		line int
	}{
		{"a\nb\n{{ 1 + }}", 3},
		{"{% if x %}\n\n{% endfor %}", 3},
		{"x\n{% for %}", 2},
		{"x\n\n{{ 'unterminated }}", 3},
		{"{# never closed", 1},
		{"{% raw %}\nno end", 1},
		{"ok\n{{ x|nosuch }}", 2},
		{"\n\n{% if a %}x", 3},
	}
	for _, c := range cases {
		_, err := Parse(c.src)
		var e *Error
		if !errors.As(err, &e) || !e.Syntax {
			t.Errorf("Parse(%q): want syntax *Error, got %v", c.src, err)
			continue
		}
		if e.Line != c.line {
			t.Errorf("Parse(%q): line %d, want %d (%v)", c.src, e.Line, c.line, err)
		}
	}
}

func TestRuntimeErrorLine(t *testing.T) {
	tpl, err := Parse("a\n{% for m in messages %}\n{{ m.content + 1 }}\n{% endfor %}")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tpl.Render(map[string]any{"messages": []any{map[string]any{"content": "x"}}})
	var e *Error
	if !errors.As(err, &e) || e.Line != 3 || e.Raised {
		t.Errorf("got %#v", err)
	}
	tpl, _ = Parse("\n{{ raise_exception('no tools') }}")
	_, err = tpl.Render(nil)
	if !errors.As(err, &e) || !e.Raised || e.Message != "no tools" || e.Line != 2 {
		t.Errorf("raise_exception: %#v", err)
	}
}

func TestLimits(t *testing.T) {
	cases := map[string]string{
		"loop":      `{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}`,
		"recursion": `{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}`,
		"output":    `{% for a in range(100000) %}{{ 'x' * 100000 }}{% endfor %}`,
		"big-str":   `{{ 'x' * 1000000000 }}`,
		"pow":       `{{ 10 ** 100 }}`,
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			tpl, err := Parse(src)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if _, err := tpl.Render(nil); err == nil {
				t.Error("no error")
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	deep := strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000)
	if _, err := Parse("{{ " + deep + " }}"); err == nil {
		t.Error("deep nesting parsed")
	}
	if _, err := Parse(strings.Repeat("{% if x %}", 5000)); err == nil {
		t.Error("deep blocks parsed")
	}
}

func TestConcurrentRender(t *testing.T) {
	tpl, err := Parse(`{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{{ m.role }}:{{ m.content }};{% endfor %}{{ ns.n }}`)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msgs := []any{map[string]any{"role": "user", "content": fmt.Sprint(i)}}
			for range 200 {
				out, err := tpl.Render(map[string]any{"messages": msgs})
				if err != nil || out != fmt.Sprintf("user:%d;1", i) {
					errs <- fmt.Errorf("got %q, %v", out, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestUnsupportedValue(t *testing.T) {
	tpl, _ := Parse(`{{ x }}`)
	if _, err := tpl.Render(map[string]any{"x": make(chan int)}); err == nil {
		t.Error("channel accepted")
	}
	self := map[string]any{}
	self["self"] = self
	if _, err := tpl.Render(map[string]any{"x": self}); err == nil {
		t.Error("cyclic value accepted")
	}
}

func BenchmarkRender(b *testing.B) {
	src := `{%- if tools %}{{- '<|im_start|>system\n' }}{%- if messages[0].role == 'system' %}{{- messages[0].content + '\n\n' }}{%- endif %}{{- "# Tools\n\n<tools>" }}{%- for tool in tools %}{{- "\n" }}{{- tool | tojson }}{%- endfor %}{{- "\n</tools><|im_end|>\n" }}{%- endif %}
{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}
{%- for message in messages %}
    {%- if message.content is string %}{%- set content = message.content %}{%- else %}{%- set content = '' %}{%- endif %}
    {%- if '</think>' in content %}{%- set content = content.split('</think>')[-1].lstrip('\n') %}{%- endif %}
    {{- '<|im_start|>' + message.role + '\n' + content + '<|im_end|>' + '\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}`
	tpl, err := Parse(src)
	if err != nil {
		b.Fatal(err)
	}
	tools, _ := ParseJSON([]byte(`[{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}}]`))
	var msgs []any
	for i := range 20 {
		msgs = append(msgs, map[string]any{"role": []string{"user", "assistant"}[i%2], "content": "<think>x</think>\nmessage number " + fmt.Sprint(i)})
	}
	vars := map[string]any{"messages": msgs, "tools": tools, "add_generation_prompt": true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tpl.Render(vars); err != nil {
			b.Fatal(err)
		}
	}
}
