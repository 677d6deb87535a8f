package family

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata")

// goldenCase is one realistic output of a family, streamed through its
// parser.
type goldenCase struct {
	name string
	cfg  ParserConfig
	in   string
}

// weatherTool is the tool the cases call.
var weatherTool = Tool{
	Name:        "get_weather",
	Description: "Current weather in a city.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},"metric":{"type":"boolean"}},"required":["city"]}`),
}

// collect pushes pieces through a new parser and ends it.
func collect(f *Family, cfg ParserConfig, pieces []string, truncated bool) Output {
	p := f.NewParser(cfg)
	var all Output
	add := func(o Output) {
		all.Text += o.Text
		all.Reasoning += o.Reasoning
		all.Calls = append(all.Calls, o.Calls...)
	}
	for _, s := range pieces {
		if !utf8.ValidString(s) {
			panic("piece cuts a character")
		}
		add(p.Push(s))
	}
	add(p.Flush(truncated))
	return all
}

// splits returns in whole, split in two at every character boundary, and
// one character at a time.
func splits(in string) [][]string {
	out := [][]string{{in}}
	for i := range in {
		if i > 0 {
			out = append(out, []string{in[:i], in[i:]})
		}
	}
	var runes []string
	for _, r := range in {
		runes = append(runes, string(r))
	}
	return append(out, runes)
}

// testGolden streams each case through f's parser, split in every way
// splits gives, and checks each split gives what testdata/<dir>/<case>.json
// holds.
func testGolden(t *testing.T, f *Family, dir string, cases []goldenCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			whole := collect(f, c.cfg, []string{c.in}, false)
			path := filepath.Join("testdata", dir, c.name+".json")
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "\t")
			if err := enc.Encode(whole); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if string(got) != string(want) {
				t.Fatalf("whole output:\n%s\nwant\n%s", got, want)
			}
			for _, pieces := range splits(c.in) {
				if split := collect(f, c.cfg, pieces, false); !reflect.DeepEqual(split, whole) {
					t.Fatalf("split %q:\n%+v\nwant\n%+v", pieces, split, whole)
				}
			}
		})
	}
}

// brokenCase is an output whose call does not parse, so it stays text,
// and one cut by the token limit inside a call, so the call is dropped.
type brokenCase struct {
	malformed, wantText string
	cut, wantCutText    string
}

// testBroken checks malformed calls become text and cut ones are
// dropped, however the output is split.
func testBroken(t *testing.T, f *Family, c brokenCase) {
	cfg := ParserConfig{Tools: []Tool{weatherTool}}
	for _, pieces := range splits(c.malformed) {
		if got := collect(f, cfg, pieces, false); got.Text != c.wantText || len(got.Calls) != 0 || got.Reasoning != "" {
			t.Fatalf("malformed call split %q: %+v, want text %q", pieces, got, c.wantText)
		}
	}
	for _, pieces := range splits(c.cut) {
		if got := collect(f, cfg, pieces, true); got.Text != c.wantCutText || len(got.Calls) != 0 {
			t.Fatalf("cut call split %q: %+v, want text %q and no call", pieces, got, c.wantCutText)
		}
	}
	// The same output, not cut by the limit, shows the unfinished call.
	if got := collect(f, cfg, []string{c.cut}, false); !strings.Contains(got.Text, strings.TrimSpace(strings.TrimPrefix(c.cut, c.wantCutText))) {
		t.Fatalf("unfinished call not cut by the limit: %+v, want its text", got)
	}
}

// fakeSchema stands in for llama.cpp's JSON Schema converter: a grammar of
// any JSON object, with rule names as the converter writes them (space,
// char, and names with dashes), a repetition count and a character class.
func fakeSchema(js []byte) (string, error) {
	if !json.Valid(js) {
		return "", os.ErrInvalid
	}
	return `root ::= object
object ::= "{" space ( string ":" space value ("," space string ":" space value)* )? "}" space
value ::= object | string | integral-part space | "true" space | "false" space
string ::= "\"" char* "\"" space
char ::= [^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})
integral-part ::= [0] | [1-9] [0-9]{0,15}
space ::= | " " | "\n"{1,2} [ \t]{0,20}
`, nil
}

// gbnfRules parses a grammar's rules, checking that each is defined once,
// root first, and that every name used is defined.
func gbnfRules(t *testing.T, g string) map[string][]gbnfToken {
	t.Helper()
	rules := map[string][]gbnfToken{}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(g), "\n") {
		name, body, ok := strings.Cut(line, " ::= ")
		if !ok || !regexp.MustCompile(`^[a-zA-Z0-9_-]+$`).MatchString(name) {
			t.Fatalf("line %q is not a rule", line)
		}
		if _, dup := rules[name]; dup {
			t.Fatalf("rule %s defined twice", name)
		}
		rules[name] = gbnfTokens(t, body)
		order = append(order, name)
	}
	if order[0] != "root" {
		t.Fatalf("first rule %s, want root", order[0])
	}
	for name, toks := range rules {
		for _, tok := range toks {
			if tok.kind == 'n' && rules[tok.text] == nil {
				t.Fatalf("rule %s uses %s, which is not defined", name, tok.text)
			}
		}
	}
	return rules
}

// gbnfToken is a literal ('"', its decoded text), a character class
// ('['), a rule name ('n'), a repetition count ('{') or an operator.
type gbnfToken struct {
	kind byte
	text string
}

func gbnfTokens(t *testing.T, body string) []gbnfToken {
	t.Helper()
	var toks []gbnfToken
	depth := 0
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == ' ':
			i++
		case c == '"':
			var lit strings.Builder
			j := i + 1
			for ; j < len(body) && body[j] != '"'; j++ {
				if body[j] == '\\' {
					j++
					switch body[j] {
					case 'n':
						lit.WriteByte('\n')
					case 't':
						lit.WriteByte('\t')
					case 'r':
						lit.WriteByte('\r')
					case 'x':
						lit.WriteByte(0) // \xHH: not in our literals
						j += 2
					default:
						lit.WriteByte(body[j])
					}
					continue
				}
				lit.WriteByte(body[j])
			}
			if j >= len(body) {
				t.Fatalf("unterminated literal in %q", body)
			}
			toks = append(toks, gbnfToken{'"', lit.String()})
			i = j + 1
		case c == '[':
			j := i + 1
			for ; j < len(body) && body[j] != ']'; j++ {
				if body[j] == '\\' {
					j++
				}
			}
			if j >= len(body) {
				t.Fatalf("unterminated class in %q", body)
			}
			toks = append(toks, gbnfToken{'[', body[i : j+1]})
			i = j + 1
		case c == '{':
			j := strings.IndexByte(body[i:], '}')
			toks = append(toks, gbnfToken{'{', body[i : i+j+1]})
			i += j + 1
		case strings.IndexByte("()|*+?", c) >= 0:
			depth += map[byte]int{'(': 1, ')': -1}[c]
			toks = append(toks, gbnfToken{c, string(c)})
			i++
		default:
			j := i
			for j < len(body) && (body[j] == '-' || body[j] == '_' || body[j] >= '0' && body[j] <= '9' || body[j] >= 'a' && body[j] <= 'z' || body[j] >= 'A' && body[j] <= 'Z') {
				j++
			}
			if j == i {
				t.Fatalf("unexpected %q in %q", c, body)
			}
			toks = append(toks, gbnfToken{'n', body[i:j]})
			i = j
		}
	}
	if depth != 0 {
		t.Fatalf("unbalanced parentheses in %q", body)
	}
	return toks
}

// spelled turns rule into a regular expression: the family's own rules
// expanded, with their literals, groups and repetitions, and the JSON
// Schema and text-value rules as a hole each. A call the grammar admits
// matches it.
func spelled(rules map[string][]gbnfToken, rule string) string {
	var b strings.Builder
	for _, tok := range rules[rule] {
		switch {
		case tok.kind == '"':
			b.WriteString(regexp.QuoteMeta(tok.text))
		case tok.kind == 'n' && (tok.text == "textvalue" || strings.HasPrefix(tok.text, "t") && strings.HasSuffix(tok.text, "-root")):
			b.WriteString("(?s:.*?)")
		case tok.kind == 'n':
			b.WriteString("(?:" + spelled(rules, tok.text) + ")")
		case tok.kind == '(':
			b.WriteString("(?:")
		case strings.IndexByte(")|?*+", tok.kind) >= 0:
			b.WriteByte(tok.kind)
		}
	}
	return b.String()
}

// grammarCase is a grammar of a family for one tool, single, and a call
// it must admit, as the family's template writes it.
type grammarCase struct {
	call string // a realistic call, markers included
	want Call   // what the family's parser reads from it
}

// testGrammar checks f's grammars structurally, that a realistic call is
// what the single-call grammar's literal parts spell, and that the
// parser reads that call.
func testGrammar(t *testing.T, f *Family, c grammarCase) {
	tools := []Tool{weatherTool, {Name: "now"}}
	for _, tc := range []struct {
		name   string
		single bool
	}{{"", true}, {"", false}, {"get_weather", true}, {"now", false}} {
		g, err := f.Tools.Grammar(tools, tc.name, tc.single, fakeSchema)
		if err != nil {
			t.Fatalf("Grammar(%q, %v): %v", tc.name, tc.single, err)
		}
		gbnfRules(t, g)
	}
	if _, err := f.Tools.Grammar(tools, "nope", true, fakeSchema); err == nil {
		t.Fatal("Grammar of a tool not offered: no error")
	}
	g, err := f.Tools.Grammar(tools, "get_weather", true, fakeSchema)
	if err != nil {
		t.Fatal(err)
	}
	pattern := "^" + spelled(gbnfRules(t, g), "root") + "$"
	if !regexp.MustCompile(pattern).MatchString(c.call) {
		t.Fatalf("call %q is not what the grammar spells, %q:\n%s", c.call, pattern, g)
	}
	got := collect(f, ParserConfig{Tools: tools}, []string{c.call}, false)
	if len(got.Calls) != 1 || got.Calls[0] != c.want || got.Text != "" {
		t.Fatalf("parsed %+v, want the call %+v", got, c.want)
	}
}

func TestPrefixRules(t *testing.T) {
	g, _ := fakeSchema([]byte(`{}`))
	got := prefixRules(g, "t1-")
	for _, want := range []string{
		`t1-root ::= t1-object`,
		`t1-value ::= t1-object | t1-string | t1-integral-part t1-space | "true" t1-space`,
		`t1-char ::= [^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})`,
		`t1-space ::= | " " | "\n"{1,2} [ \t]{0,20}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("prefixed grammar lacks %q:\n%s", want, got)
		}
	}
}

// templatesWant are the real templates of testdata/templates, the
// architecture their GGUFs carry, and the family each is.
var templatesWant = []struct{ file, arch, family string }{
	{"qwen3.jinja", "qwen3", "qwen3"},
	{"qwen3.jinja", "qwen3moe", "qwen3"},
	{"qwen3-next.jinja", "qwen3next", "qwen3"},
	{"qwen3.5-4b.jinja", "qwen35", "qwen3.5"},
	{"qwen3.5-4b.jinja", "qwen3", "qwen3.5"},
	{"qwen3-coder-30b.jinja", "qwen3moe", "qwen3-coder"},
	{"qwen2.5.jinja", "qwen2", "hermes"},
	{"qwen3.jinja", "llama", "hermes"},
	{"deepseek-v3.jinja", "deepseek2", "deepseek-v3"},
	{"deepseek-r1.jinja", "deepseek2", "deepseek-r1"},
	{"deepseek-r1-distill-llama-8b.jinja", "llama", "deepseek-r1"},
	{"deepseek-v3.1.jinja", "deepseek2", "deepseek-v3.1"},
	{"glm-4.6.jinja", "glm4moe", "glm-4.5"},
	{"glm-4.7-flash.jinja", "deepseek2", "glm-4.7"},
}

func TestLookupGroupA(t *testing.T) {
	mine := map[string]bool{}
	for _, tc := range templatesWant {
		mine[tc.file] = true
		b, err := os.ReadFile(filepath.Join("testdata", "templates", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if f := Lookup(tc.arch, string(b)); f == nil || f.Name != tc.family {
			t.Errorf("Lookup(%q, %s) = %v, want %s", tc.arch, tc.file, f, tc.family)
		}
	}
	// inferkit's own ChatML template, which the engine renders for a
	// model whose GGUF has none, and the empty template that stands for
	// it.
	src, err := os.ReadFile(filepath.Join("..", "..", "inference", "template.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)const chatML = `(.*?)`").FindSubmatch(src)
	if m == nil {
		t.Fatal("inference/template.go has no chatML")
	}
	for _, tmpl := range []string{string(m[1]), ""} {
		for _, arch := range []string{"llama", "qwen2", "qwen3", "gemma3"} {
			if f := Lookup(arch, tmpl); f == nil || f.Name != "hermes" {
				t.Errorf("Lookup(%q, inferkit's ChatML %.20q) = %v, want hermes", arch, tmpl, f)
			}
		}
	}
	// A ChatML template with no tools in it says nothing of calls.
	const plain = "{%- for message in messages -%}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' -}}{%- endfor -%}"
	if f := Lookup("llama", plain); f != nil {
		t.Errorf("Lookup(plain ChatML) = %s, want none", f.Name)
	}
	// No other template here is taken by a family of this group.
	ours := map[string]bool{}
	for _, f := range []*Family{qwen35, qwen3Coder, qwen3, deepSeekV31, deepSeekR1, deepSeekV3, glm47, glm45, hermes} {
		ours[f.Name] = true
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "templates", "*.jinja"))
	for _, file := range files {
		if mine[filepath.Base(file)] {
			continue
		}
		b, _ := os.ReadFile(file)
		for _, arch := range []string{"llama", "gemma3", "qwen3"} {
			if f := Lookup(arch, string(b)); f != nil && ours[f.Name] {
				t.Errorf("Lookup(%q, %s) = %s, a family of group A", arch, file, f.Name)
			}
		}
	}
}
