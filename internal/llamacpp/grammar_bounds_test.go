package llamacpp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/internal/llamacpp"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
	"github.com/ollama/ollama/llama"
)

// nested returns a schema whose arrays nest depth levels deep, one level
// of JSON each.
func nested(depth int) string {
	return strings.Repeat(`{"type":"array","items":`, depth-1) + `{"type":"string"}` + strings.Repeat("}", depth-1)
}

// nestedObjects returns a schema of objects nested n deep (2n levels of
// JSON), the shape of the 185 KB request at n = 5000.
func nestedObjects(n int) string {
	return strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"string"}` + strings.Repeat("}}", n)
}

func properties(n int, required bool, schema func(i int) string) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":%s`, i, schema(i))
	}
	b.WriteString("}")
	if required {
		b.WriteString(`,"required":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"p%d"`, i)
		}
		b.WriteString("]")
	}
	return b.String() + "}"
}

func pattern(p string) string {
	q, _ := json.Marshal(p)
	return `{"type":"string","pattern":` + string(q) + `}`
}

// Schemas over the bounds are refused before C, with an error naming the
// bound; each of them crashes, hangs or takes seconds in llama.cpp.
func TestSchemaGrammarRefuses(t *testing.T) {
	typeLists := `{"type":"string"}`
	for range 20 {
		typeLists = `{"type":["object","object"],"properties":{"a":` + typeLists + `},"required":["a"]}`
	}
	// Refused for the grammar they convert to: CheckSchema accepts them.
	converted := map[string]bool{"pattern can match nothing twice": true, "pattern left recursion": true}
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"deep objects", nestedObjects(5000), "nests deeper than 64 levels"},
		{"deep arrays", nested(llamacpp.MaxSchemaDepth + 1), "nests deeper than 64 levels"},
		{"big", properties(3000, true, func(int) string { return `{"type":"string"}` }), "over 65536"},
		{"minItems", `{"type":"array","items":{},"minItems":100000}`, "minItems 100000 is over 2000"},
		{"maxLength", `{"type":"string","maxLength":1e9}`, "maxLength 1e9 is over 2000"},
		{"minLength fraction", `{"type":"string","minLength":2.5}`, "not a whole number"},
		{"minItems over maxItems", `{"type":"array","items":{},"minItems":5,"maxItems":2}`, "minItems 5 is over maxItems 2"},
		{"minLength over maxLength", `{"type":"string","minLength":5,"maxLength":2}`, "minLength 5 is over maxLength 2"},
		{"pattern repetition", pattern("^a{100000}$"), "is over 2000"},
		{"pattern repetition backwards", pattern("^a{5,2}$"), "minimum over its maximum"},
		{"pattern (?:", pattern("^(?:ab)+$"), "nothing to repeat"},
		{"pattern star first", pattern("^*$"), "nothing to repeat"},
		{"pattern stray bracket", pattern("^a]$"), `unescaped ']'`},
		{"pattern stray brace", pattern("^a}$"), `unescaped '}'`},
		{"pattern unanchored", pattern("a+"), "must start with ^ and end with $"},
		{"pattern deep groups", pattern("^" + strings.Repeat("(", 100) + "a" + strings.Repeat(")", 100) + "$"), "groups nest deeper"},
		{"pattern can match nothing twice", pattern("^(a*)?$"), "match nothing"},
		{"pattern left recursion", pattern("^(a?)*$"), "left-recursive"},
		{"integer range", `{"type":"integer","maximum":1e30}`, "out of the range"},
		{"integer exclusive", `{"type":["integer","null"],"exclusiveMinimum":9223372036854775807}`, "out of the range"},
		{"integer bounds crossed", `{"type":"integer","minimum":10,"maximum":5}`, "minimum 10 over maximum 5"},
		{"ref cycle", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"allOf":[{"$ref":"#/$defs/a"}]}`, "leads back to itself"},
		{"ref missing", `{"$ref":"#/$defs/nope"}`, "does not resolve"},
		{"ref remote", `{"$ref":"https://example.com/schema.json"}`, "not local"},
		{"ref not string", `{"$ref":1}`, "not a string"},
		{"long key", `{"type":"object","properties":{"` + strings.Repeat("!", 300) + `":{}}}`, "key of 300 bytes"},
		{"optional properties", properties(600, false, func(int) string { return `{"type":"integer"}` }), "too many optional properties"},
		{"type lists", typeLists, "grammar of more than"},
		{"punctuation", collisions(2000), "differ only in punctuation"},
		{"not JSON", `{"type":`, "not valid JSON"},
		{"trailing data", `{} {}`, "not valid JSON"},
		{"not UTF-8", "{\"const\":\"\xff\"}", "not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			g, err := llamacpp.SchemaGrammar([]byte(tc.schema))
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("SchemaGrammar: %v (grammar of %d bytes), want an error with %q", err, len(g), tc.want)
			}
			if !errors.Is(err, llamacpp.ErrGrammar) {
				t.Errorf("error %v does not wrap ErrGrammar", err)
			}
			if err := llamacpp.CheckSchema([]byte(tc.schema)); (err == nil) != converted[tc.name] {
				t.Errorf("CheckSchema: %v", err)
			}
			if took > 2*time.Second {
				t.Errorf("took %v", took)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
		})
	}
}

// collisions returns an object of n required properties whose names
// differ only in a character the converter turns into '-'.
func collisions(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	var req []string
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		name := "a" + string(rune(0x4e00+i))
		fmt.Fprintf(&b, `%q:{"const":%d}`, name, i)
		req = append(req, fmt.Sprintf("%q", name))
	}
	return b.String() + `},"required":[` + strings.Join(req, ",") + "]}"
}

// Schemas within the bounds convert as llama.cpp's converter converts
// them, including large, deep, recursive and referencing ones.
func TestSchemaGrammarAccepts(t *testing.T) {
	// Each definition refers to the next twice: expanding refs would be
	// exponential; the converter writes each once.
	var defs []string
	for i := range 30 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"type":"object","properties":{"x":{"$ref":"#/$defs/d%d"},"y":{"$ref":"#/$defs/d%d"}},"required":["x","y"]}`, i, i+1, i+1))
	}
	defs = append(defs, `"d30":{"type":"integer"}`)
	for _, tc := range []struct {
		name, schema string
	}{
		{"object", `{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":100},"age":{"type":"integer","minimum":0,"maximum":150},"tags":{"type":"array","items":{"type":"string"},"maxItems":10},"email":{"type":"string","pattern":"^[a-z]+@[a-z]+\\.[a-z]{2,3}$"},"kind":{"enum":["a","b"]}},"required":["name","age"]}`},
		{"depth at the bound", nested(llamacpp.MaxSchemaDepth)},
		{"objects at the bound", nestedObjects(llamacpp.MaxSchemaDepth/2 - 1)},
		{"wide", properties(1900, true, func(int) string { return `{"type":"string"}` })},
		{"optional", properties(200, false, func(int) string { return `{"type":"integer"}` })},
		{"repetitions at the bound", `{"type":"array","items":{"type":"string","maxLength":2000},"minItems":2000,"maxItems":2000}`},
		{"recursive", `{"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["value"]}},"$ref":"#/$defs/node"}`},
		{"references", `{"$defs":{` + strings.Join(defs, ",") + `},"$ref":"#/$defs/d0"}`},
		{"integer extremes", `{"type":"integer","minimum":-9223372036854775807,"maximum":9223372036854775806}`},
		{"whitespace", "{\n  \"type\": \"object\",\n  \"properties\": {\"a\": {\"type\": \"boolean\"}}\n}" + strings.Repeat(" ", 100000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			g, err := llamacpp.SchemaGrammar([]byte(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v", took)
			}
			if want := string(llama.SchemaToGrammar(padded(tc.schema))); g != want {
				t.Errorf("SchemaGrammar differs from llama.cpp's converter:\n%.300s\nwant\n%.300s", g, want)
			}
		})
	}
}

// padded pads a schema with spaces so that ollama's SchemaToGrammar gives
// its result room up to 1 MiB rather than cutting it.
func padded(schema string) []byte {
	return []byte(schema + strings.Repeat(" ", max(0, 256<<10-len(schema))))
}

func tinyModel(t testing.TB) *llamacpp.Model {
	t.Helper()
	m, err := llamacpp.LoadModel(inferencetest.Model(t, inferencetest.Options{}), llamacpp.ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// Grammars over the bounds, or on which llama.cpp would crash or hang, are
// refused before they reach its parser.
func TestNewGrammarRefuses(t *testing.T) {
	m := tinyModel(t)
	chain := func(n int, rule string) string {
		var b strings.Builder
		b.WriteString("root ::= r0\n")
		for i := range n {
			fmt.Fprintf(&b, rule+"\n", i, i+1, i+1)
		}
		fmt.Fprintf(&b, "r%d ::= \"x\"\n", n)
		return b.String()
	}
	for _, tc := range []struct {
		name, gbnf, want string
	}{
		{"empty", "", "empty"},
		{"NUL", "root ::= \"a\"\x00", "NUL"},
		{"big", `root ::= "` + strings.Repeat("a", llamacpp.MaxGrammarBytes) + `"`, "over 1048576"},
		{"repetitions of repetitions", `root ::= "a"{2000}{2000}{2000}`, "expands to more than 32 MiB"},
		{"repetitions of a long item", `root ::= "` + strings.Repeat("ab", 10000) + `"{2000}`, "expands to more than 32 MiB"},
		{"repetition backwards", `root ::= "a"{5,2}`, "maximum under its minimum"},
		{"repetition over 2000", `root ::= "a"{2001}`, "over 2000"},
		{"parentheses", "root ::= " + strings.Repeat("(", 10000) + `"a"` + strings.Repeat(")", 10000), "parentheses nest deeper than 512"},
		{"left recursion", "root ::= a\na ::= a \"x\" | \"y\"", "left-recursive"},
		{"hidden left recursion", "root ::= (\"a\"?)*", "left-recursive"},
		{"hidden left recursion later", "root ::= \"x\" a\na ::= c a \"z\" | \"q\"\nc ::= \"y\"?", "left-recursive"},
		{"exponential left recursion check", chain(40, "r%d ::= | r%d r%d"), "left recursion check"},
		{"exponential advance", "x ::= \"a\"?\n" + chain(40, `r%d ::= x r%d | x r%d "b"`), "too ambiguous"},
		{"empty in two ways", `root ::= "x" ("a"? | "b"?)`, "match nothing in 2 ways"},
		{"undefined rule", `root ::= a`, `"a" is used but not defined`},
		{"no root", `a ::= "a"`, "no root"},
		{"root only referenced", `a ::= root{0}`, "no root"},
		{"unterminated literal", `root ::= "a`, "unexpected end"},
		{"unterminated class", `root ::= [a`, "unexpected end"},
		{"unclosed group", `root ::= ("a"`, "expecting ')'"},
		{"unknown escape", `root ::= "\q"`, "unknown escape"},
		{"quantifier first", `root ::= *`, "expecting an item"},
		{"bad hex", `root ::= "\x4"`, "hex"},
		{"no ::=", `root = "a"`, "expecting ::="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			g, err := llamacpp.NewGrammar(m, tc.gbnf)
			if err == nil {
				g.Close()
				t.Fatalf("NewGrammar accepts it, want an error with %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || !errors.Is(err, llamacpp.ErrGrammar) {
				t.Fatalf("NewGrammar: %v, want ErrGrammar with %q", err, tc.want)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

// The grammars llama.cpp ships and the converter's grammars pass, and
// constrain sampling as before.
func TestNewGrammarAccepts(t *testing.T) {
	m := tinyModel(t)
	for _, tc := range []struct{ name, gbnf string }{
		{"literal", `root ::= "a"`},
		{"json", jsonGBNF},
		{"repetitions", `root ::= [a-z]{0,2000} ("," [0-9]+){3,10} "x"? | "y"*`},
		{"comments and CRLF", "# a comment\r\nroot ::= a | b # another\r\na ::= \"a\"\r\nb ::= [^a]\r\n"},
		{"tokens", `root ::= <[1]> !<[2]>`},
		{"nested groups", "root ::= " + strings.Repeat("(", 500) + `"a"` + strings.Repeat(")", 500)},
		{"right recursion", `root ::= "a" root | "b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := llamacpp.NewGrammar(m, tc.gbnf)
			if err != nil {
				t.Fatal(err)
			}
			g.Close()
		})
	}
}

// A converted schema constrains generation to JSON it admits.
func TestSchemaGrammarGenerates(t *testing.T) {
	m := tinyModel(t)
	gbnf, err := llamacpp.SchemaGrammar([]byte(`{"type":"object","properties":{"a":{"enum":["x","y"]},"b":{"type":"boolean"},"c":{"type":"integer","minimum":1,"maximum":12}},"required":["a","b","c"]}`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := llamacpp.NewGrammar(m, gbnf)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx, err := llamacpp.NewContext(m, llamacpp.ContextParams{Context: 256, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	b := llamacpp.NewBatch(ctx, 8)
	defer b.Close()
	s, err := llamacpp.NewSampler(m, llamacpp.SamplerParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tok := m.BOS()
	var text []byte
	for pos := range 200 {
		b.Clear()
		if _, err := b.Add(tok, pos, []int{0}, true); err != nil {
			t.Fatal(err)
		}
		if err := ctx.Decode(b); err != nil {
			t.Fatal(err)
		}
		if tok = s.Sample(ctx, 0, g); tok < 0 || m.IsEOG(tok) {
			break
		}
		text = append(text, m.Piece(tok, false)...)
	}
	var v struct {
		A string
		B bool
		C int
	}
	if err := json.Unmarshal(text, &v); err != nil || v.A != "x" && v.A != "y" || v.C < 1 || v.C > 12 {
		t.Fatalf("generated %q: %v", text, err)
	}
}

// jsonGBNF is llama.cpp's grammars/json.gbnf.
const jsonGBNF = `root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
`
