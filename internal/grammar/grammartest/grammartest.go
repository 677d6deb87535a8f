// Package grammartest holds the cases that test the bounds of package
// grammar: JSON Schemas and GBNF grammars over them, each with words its
// error must carry, and large, deep or odd ones within them. Package
// grammar's tests run them through its checks without cgo; the backends'
// tests run the same cases through llama.cpp's converter and parser, so
// that the checks and llama.cpp are held to one list.
//
// It is for tests only. Its functions return fresh slices and are safe for
// concurrent use.
package grammartest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/internal/grammar"
)

// A Case is one schema or grammar.
type Case struct {
	Name string
	// Text is the schema or the grammar.
	Text string
	// Want is part of the error's text, for a case that is refused.
	Want string
	// Converted marks a schema that grammar.CheckSchema accepts and that
	// is refused only for the grammar the converter makes of it, by
	// grammar.Check.
	Converted bool
}

// nested returns a schema whose arrays nest depth levels deep, one level
// of JSON each.
func nested(depth int) string {
	return strings.Repeat(`{"type":"array","items":`, depth-1) + `{"type":"string"}` + strings.Repeat("}", depth-1)
}

// nestedObjects returns a schema of objects nested n deep (2n levels of
// JSON); at n = 5000 it is 185 KB.
func nestedObjects(n int) string {
	return strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"string"}` + strings.Repeat("}}", n)
}

// properties returns an object schema of n properties p0, p1, …, the
// schema of each given by schema, all required or all optional.
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

// RefusedSchemas returns schemas over the bounds. Each of them crashes,
// hangs or takes seconds in llama.cpp's converter, or converts to a
// grammar that does so in its parser or matcher.
func RefusedSchemas() []Case {
	typeLists := `{"type":"string"}`
	for range 20 {
		typeLists = `{"type":["object","object"],"properties":{"a":` + typeLists + `},"required":["a"]}`
	}
	return []Case{
		{Name: "deep objects", Text: nestedObjects(5000), Want: "nests deeper than 64 levels"},
		{Name: "deep arrays", Text: nested(grammar.MaxSchemaDepth + 1), Want: "nests deeper than 64 levels"},
		{Name: "big", Text: properties(3000, true, func(int) string { return `{"type":"string"}` }), Want: "over 65536"},
		{Name: "minItems", Text: `{"type":"array","items":{},"minItems":100000}`, Want: "minItems 100000 is over 2000"},
		{Name: "maxLength", Text: `{"type":"string","maxLength":1e9}`, Want: "maxLength 1e9 is over 2000"},
		{Name: "minLength fraction", Text: `{"type":"string","minLength":2.5}`, Want: "not a whole number"},
		{Name: "minItems over maxItems", Text: `{"type":"array","items":{},"minItems":5,"maxItems":2}`, Want: "minItems 5 is over maxItems 2"},
		{Name: "minLength over maxLength", Text: `{"type":"string","minLength":5,"maxLength":2}`, Want: "minLength 5 is over maxLength 2"},
		{Name: "pattern repetition", Text: pattern("^a{100000}$"), Want: "is over 2000"},
		{Name: "pattern repetition backwards", Text: pattern("^a{5,2}$"), Want: "minimum over its maximum"},
		{Name: "pattern (?:", Text: pattern("^(?:ab)+$"), Want: "nothing to repeat"},
		{Name: "pattern star first", Text: pattern("^*$"), Want: "nothing to repeat"},
		{Name: "pattern stray bracket", Text: pattern("^a]$"), Want: `unescaped ']'`},
		{Name: "pattern stray brace", Text: pattern("^a}$"), Want: `unescaped '}'`},
		{Name: "pattern unanchored", Text: pattern("a+"), Want: "must start with ^ and end with $"},
		{Name: "pattern deep groups", Text: pattern("^" + strings.Repeat("(", 100) + "a" + strings.Repeat(")", 100) + "$"), Want: "groups nest deeper"},
		{Name: "pattern can match nothing twice", Text: pattern("^(a*)?$"), Want: "match nothing", Converted: true},
		{Name: "pattern left recursion", Text: pattern("^(a?)*$"), Want: "left-recursive", Converted: true},
		{Name: "integer range", Text: `{"type":"integer","maximum":1e30}`, Want: "out of the range"},
		{Name: "integer exclusive", Text: `{"type":["integer","null"],"exclusiveMinimum":9223372036854775807}`, Want: "out of the range"},
		{Name: "integer bounds crossed", Text: `{"type":"integer","minimum":10,"maximum":5}`, Want: "minimum 10 over maximum 5"},
		{Name: "ref cycle", Text: `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"allOf":[{"$ref":"#/$defs/a"}]}`, Want: "leads back to itself"},
		{Name: "ref missing", Text: `{"$ref":"#/$defs/nope"}`, Want: "does not resolve"},
		{Name: "ref remote", Text: `{"$ref":"https://example.com/schema.json"}`, Want: "not local"},
		{Name: "ref not string", Text: `{"$ref":1}`, Want: "not a string"},
		{Name: "long key", Text: `{"type":"object","properties":{"` + strings.Repeat("!", 300) + `":{}}}`, Want: "key of 300 bytes"},
		{Name: "optional properties", Text: properties(600, false, func(int) string { return `{"type":"integer"}` }), Want: "too many optional properties"},
		{Name: "type lists", Text: typeLists, Want: "grammar of more than"},
		{Name: "punctuation", Text: collisions(2000), Want: "differ only in punctuation"},
		{Name: "not JSON", Text: `{"type":`, Want: "not valid JSON"},
		{Name: "trailing data", Text: `{} {}`, Want: "not valid JSON"},
		{Name: "not UTF-8", Text: "{\"const\":\"\xff\"}", Want: "not valid UTF-8"},
	}
}

// AcceptedSchemas returns schemas within the bounds, including large,
// deep, recursive and referencing ones, that llama.cpp's converter turns
// into grammars its parser accepts.
func AcceptedSchemas() []Case {
	// Each definition refers to the next twice: expanding refs would be
	// exponential; the converter writes each once.
	var defs []string
	for i := range 30 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"type":"object","properties":{"x":{"$ref":"#/$defs/d%d"},"y":{"$ref":"#/$defs/d%d"}},"required":["x","y"]}`, i, i+1, i+1))
	}
	defs = append(defs, `"d30":{"type":"integer"}`)
	return []Case{
		{Name: "object", Text: `{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":100},"age":{"type":"integer","minimum":0,"maximum":150},"tags":{"type":"array","items":{"type":"string"},"maxItems":10},"email":{"type":"string","pattern":"^[a-z]+@[a-z]+\\.[a-z]{2,3}$"},"kind":{"enum":["a","b"]}},"required":["name","age"]}`},
		{Name: "depth at the bound", Text: nested(grammar.MaxSchemaDepth)},
		{Name: "objects at the bound", Text: nestedObjects(grammar.MaxSchemaDepth/2 - 1)},
		{Name: "wide", Text: properties(1900, true, func(int) string { return `{"type":"string"}` })},
		{Name: "optional", Text: properties(200, false, func(int) string { return `{"type":"integer"}` })},
		{Name: "repetitions at the bound", Text: `{"type":"array","items":{"type":"string","maxLength":2000},"minItems":2000,"maxItems":2000}`},
		{Name: "recursive", Text: `{"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["value"]}},"$ref":"#/$defs/node"}`},
		{Name: "references", Text: `{"$defs":{` + strings.Join(defs, ",") + `},"$ref":"#/$defs/d0"}`},
		{Name: "integer extremes", Text: `{"type":"integer","minimum":-9223372036854775807,"maximum":9223372036854775806}`},
		{Name: "whitespace", Text: "{\n  \"type\": \"object\",\n  \"properties\": {\"a\": {\"type\": \"boolean\"}}\n}" + strings.Repeat(" ", 100000)},
	}
}

// chain returns a grammar of n rules r0 … r(n-1), each written by rule
// from its own number and the next one's (twice), ending in r(n) ::= "x".
func chain(n int, rule string) string {
	var b strings.Builder
	b.WriteString("root ::= r0\n")
	for i := range n {
		fmt.Fprintf(&b, rule+"\n", i, i+1, i+1)
	}
	fmt.Fprintf(&b, "r%d ::= \"x\"\n", n)
	return b.String()
}

// RefusedGrammars returns grammars over the bounds, or on which llama.cpp
// would crash or hang, or which it cannot parse.
func RefusedGrammars() []Case {
	return []Case{
		{Name: "empty", Text: "", Want: "empty"},
		{Name: "NUL", Text: "root ::= \"a\"\x00", Want: "NUL"},
		{Name: "big", Text: `root ::= "` + strings.Repeat("a", grammar.MaxBytes) + `"`, Want: "over 1048576"},
		{Name: "repetitions of repetitions", Text: `root ::= "a"{2000}{2000}{2000}`, Want: "expands to more than 32 MiB"},
		{Name: "repetitions of a long item", Text: `root ::= "` + strings.Repeat("ab", 10000) + `"{2000}`, Want: "expands to more than 32 MiB"},
		{Name: "repetition backwards", Text: `root ::= "a"{5,2}`, Want: "maximum under its minimum"},
		{Name: "repetition over 2000", Text: `root ::= "a"{2001}`, Want: "over 2000"},
		{Name: "parentheses", Text: "root ::= " + strings.Repeat("(", 10000) + `"a"` + strings.Repeat(")", 10000), Want: "parentheses nest deeper than 512"},
		{Name: "left recursion", Text: "root ::= a\na ::= a \"x\" | \"y\"", Want: "left-recursive"},
		{Name: "hidden left recursion", Text: "root ::= (\"a\"?)*", Want: "left-recursive"},
		{Name: "hidden left recursion later", Text: "root ::= \"x\" a\na ::= c a \"z\" | \"q\"\nc ::= \"y\"?", Want: "left-recursive"},
		{Name: "exponential left recursion check", Text: chain(40, "r%d ::= | r%d r%d"), Want: "left recursion check"},
		{Name: "exponential advance", Text: "x ::= \"a\"?\n" + chain(40, `r%d ::= x r%d | x r%d "b"`), Want: "too ambiguous"},
		{Name: "empty in two ways", Text: `root ::= "x" ("a"? | "b"?)`, Want: "match nothing in 2 ways"},
		{Name: "undefined rule", Text: `root ::= a`, Want: `"a" is used but not defined`},
		{Name: "no root", Text: `a ::= "a"`, Want: "no root"},
		{Name: "root only referenced", Text: `a ::= root{0}`, Want: "no root"},
		{Name: "unterminated literal", Text: `root ::= "a`, Want: "unexpected end"},
		{Name: "unterminated class", Text: `root ::= [a`, Want: "unexpected end"},
		{Name: "unclosed group", Text: `root ::= ("a"`, Want: "expecting ')'"},
		{Name: "unknown escape", Text: `root ::= "\q"`, Want: "unknown escape"},
		{Name: "quantifier first", Text: `root ::= *`, Want: "expecting an item"},
		{Name: "bad hex", Text: `root ::= "\x4"`, Want: "hex"},
		{Name: "no ::=", Text: `root = "a"`, Want: "expecting ::="},
	}
}

// AcceptedGrammars returns grammars llama.cpp ships and writes, and odd
// ones within the bounds, that its parser accepts for any model whose
// vocabulary has tokens 1 and 2.
func AcceptedGrammars() []Case {
	return []Case{
		{Name: "literal", Text: `root ::= "a"`},
		{Name: "json", Text: JSON},
		{Name: "repetitions", Text: `root ::= [a-z]{0,2000} ("," [0-9]+){3,10} "x"? | "y"*`},
		{Name: "comments and CRLF", Text: "# a comment\r\nroot ::= a | b # another\r\na ::= \"a\"\r\nb ::= [^a]\r\n"},
		{Name: "tokens", Text: `root ::= <[1]> !<[2]>`},
		{Name: "nested groups", Text: "root ::= " + strings.Repeat("(", 500) + `"a"` + strings.Repeat(")", 500)},
		{Name: "right recursion", Text: `root ::= "a" root | "b"`},
	}
}

// JSON is llama.cpp's grammars/json.gbnf.
const JSON = `root   ::= object
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

// Corpus returns the values of the seed corpus of a fuzz target with one
// argument written as []byte("…") or string("…"), read from dir (such as
// "../grammar/testdata/fuzz/FuzzCheckSchema"), so that a backend's fuzz
// target can start from the seeds of package grammar's. It fails tb on a
// file it cannot read.
func Corpus(tb testing.TB, dir string) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("grammartest: no seeds in %s (%v)", dir, err)
	}
	var seeds []string
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<22)
		var lines []string
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		f.Close()
		if err := sc.Err(); err != nil {
			tb.Fatalf("grammartest: %s: %v", name, err)
		}
		if len(lines) != 2 || lines[0] != "go test fuzz v1" {
			tb.Fatalf("grammartest: %s is not a corpus file of one value", name)
		}
		quoted, ok := strings.CutPrefix(lines[1], "[]byte(")
		if !ok {
			quoted, ok = strings.CutPrefix(lines[1], "string(")
		}
		quoted, ok2 := strings.CutSuffix(quoted, ")")
		v, err := strconv.Unquote(quoted)
		if !ok || !ok2 || err != nil {
			tb.Fatalf("grammartest: %s: want []byte(\"…\") or string(\"…\"), have %.40s", name, lines[1])
		}
		seeds = append(seeds, v)
	}
	return seeds
}
