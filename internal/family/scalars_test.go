package family

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// bookTool has parameters whose schemas bound what a call may write: an
// enum, lengths, an integer range.
var bookTool = Tool{Name: "book", Parameters: json.RawMessage(`{"type":"object","properties":{
	"city":{"type":"string","maxLength":8},
	"unit":{"type":"string","enum":["c","f"]},
	"code":{"type":"string","minLength":2,"maxLength":3},
	"note":{"type":"string","minLength":2},
	"days":{"type":"integer","minimum":1,"maximum":14}},
	"required":["city","unit"]}`)}

// arg is a parameter of a call: its key, and its value as JSON.
type arg struct{ key, json string }

// textCall is how a family whose values are written as text writes a
// call of book.
type textCall struct {
	family *Family
	sorted bool // keys sorted, else in the schema's order
	// ints says integers are bounded by this package's grammar, not by
	// the engine's JSON Schema converter.
	ints  bool
	write func(args []arg) string
}

// textCalls are the families whose string values are text.
var textCalls = []textCall{
	{family: qwen3Coder, write: xmlWrite},
	{family: qwen35, write: xmlWrite},
	{family: nemotron, sorted: true, write: xmlWrite},
	{family: glm45, write: func(args []arg) string {
		s := "<tool_call>book\n"
		for _, a := range args {
			s += "<arg_key>" + a.key + "</arg_key>\n<arg_value>" + bare(a.json) + "</arg_value>\n"
		}
		return s + "</tool_call>"
	}},
	{family: glm47, write: func(args []arg) string {
		s := "<tool_call>book"
		for _, a := range args {
			s += "<arg_key>" + a.key + "</arg_key><arg_value>" + bare(a.json) + "</arg_value>"
		}
		return s + "</tool_call>"
	}},
	{family: gemma4, sorted: true, ints: true, write: keyedWrite(`<|tool_call>`, `<tool_call|>`, `<|"|>`)},
	{family: functionGemma, sorted: true, ints: true, write: keyedWrite(`<start_function_call>`, `<end_function_call>`, `<escape>`)},
	{family: lfm2, sorted: true, ints: true, write: func(args []arg) string {
		var parts []string
		for _, a := range args {
			v := a.json
			if s, ok := jsonString(a.json); ok {
				v, _ = pythonValues.text.write(s)
			}
			parts = append(parts, a.key+"="+v)
		}
		return "<|tool_call_start|>[book(" + strings.Join(parts, ", ") + ")]<|tool_call_end|>"
	}},
}

func xmlWrite(args []arg) string {
	s := "<tool_call>\n<function=book>\n"
	for _, a := range args {
		s += "<parameter=" + a.key + ">\n" + bare(a.json) + "\n</parameter>\n"
	}
	return s + "</function>\n</tool_call>"
}

func keyedWrite(open, close, delim string) func([]arg) string {
	return func(args []arg) string {
		var parts []string
		for _, a := range args {
			v := a.json
			if s, ok := jsonString(a.json); ok {
				v = delim + s + delim
			}
			parts = append(parts, a.key+":"+v)
		}
		return open + "call:book{" + strings.Join(parts, ",") + "}" + close
	}
}

// bare is a JSON value as tagged text writes it: a string bare.
func bare(v string) string {
	if s, ok := jsonString(v); ok {
		return s
	}
	return v
}

func jsonString(v string) (string, bool) {
	var s string
	return s, json.Unmarshal([]byte(v), &s) == nil
}

// TestTextValuesFollowSchema: the grammar of every family that writes
// values as text admits the values a parameter's schema admits (its enum,
// strings within its lengths, integers in its range), refuses others,
// and its parser reads the admitted call back.
func TestTextValuesFollowSchema(t *testing.T) {
	type call struct {
		what string
		args []arg
		ok   bool
		ints bool // an integer's bound: checked where this package bounds it
	}
	calls := []call{
		{"required only", []arg{{"city", `"Oslo"`}, {"unit", `"c"`}}, true, false},
		{"all, at their bounds", []arg{{"city", `"Tromsø N"`}, {"unit", `"f"`}, {"code", `"ab"`}, {"note", `"ok"`}, {"days", `14`}}, true, false},
		{"at the least", []arg{{"city", `""`}, {"unit", `"f"`}, {"code", `"abc"`}, {"days", `1`}}, true, false},
		{"not in the enum", []arg{{"city", `"Oslo"`}, {"unit", `"k"`}}, false, false},
		{"an enum value's prefix", []arg{{"city", `"Oslo"`}, {"unit", `""`}}, false, false},
		{"over maxLength", []arg{{"city", `"Trondheim"`}, {"unit", `"c"`}}, false, false},
		{"under minLength", []arg{{"city", `"Oslo"`}, {"unit", `"c"`}, {"code", `"a"`}}, false, false},
		{"under minLength, no maxLength", []arg{{"city", `"Oslo"`}, {"unit", `"c"`}, {"note", `"a"`}}, false, false},
		{"over maxLength of two", []arg{{"city", `"Oslo"`}, {"unit", `"c"`}, {"code", `"abcd"`}}, false, false},
		{"over maximum", []arg{{"city", `"Oslo"`}, {"unit", `"c"`}, {"days", `15`}}, false, true},
		{"under minimum", []arg{{"city", `"Oslo"`}, {"unit", `"c"`}, {"days", `0`}}, false, true},
		{"too many digits", []arg{{"city", `"Oslo"`}, {"unit", `"c"`}, {"days", `140`}}, false, true},
		{"negative", []arg{{"city", `"Oslo"`}, {"unit", `"c"`}, {"days", `-1`}}, false, true},
	}
	order, _, err := orderedObject(json.RawMessage(`{"city":0,"unit":0,"code":0,"note":0,"days":0}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range textCalls {
		t.Run(tc.family.Name, func(t *testing.T) {
			src, err := tc.family.Tools.Grammar([]Tool{bookTool}, "book", true, testSchema)
			if err != nil {
				t.Fatal(err)
			}
			g, err := parseGBNF(src)
			if err == nil {
				err = g.check()
			}
			if err != nil {
				t.Fatalf("%v in\n%s", err, src)
			}
			for _, c := range calls {
				if c.ints && !tc.ints {
					continue
				}
				args := slices.Clone(c.args)
				slices.SortStableFunc(args, func(a, b arg) int {
					if tc.sorted {
						return strings.Compare(a.key, b.key)
					}
					return slices.Index(order, a.key) - slices.Index(order, b.key)
				})
				s := tc.write(args)
				if got := g.matches(s); got != c.ok {
					t.Errorf("%s: matches(%q) = %v, want %v\n%s", c.what, s, got, c.ok, src)
					continue
				}
				if !c.ok {
					continue
				}
				got := stream(t, tc.family, ParserConfig{Tools: []Tool{bookTool}}, []string{s}, false)
				want := map[string]any{}
				for _, a := range c.args {
					var v any
					_ = json.Unmarshal([]byte(a.json), &v)
					want[a.key] = v
				}
				var gotArgs map[string]any
				if len(got.Calls) != 1 || got.Text != "" || json.Unmarshal([]byte(got.Calls[0].Arguments), &gotArgs) != nil ||
					!reflect.DeepEqual(gotArgs, want) {
					t.Errorf("%s: parsed %q as %+v, want the arguments %v", c.what, s, got, want)
				}
			}
		})
	}
}

// TestIntBody checks the integers that intBody admits against their
// range, and that each admits no leading zero nor sign but "-".
func TestIntBody(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct{ lo, hi *float64 }{
		{f(1), f(14)}, {f(0), f(100)}, {f(7), f(7)}, {f(-25), f(310)}, {f(-999), f(-101)},
		{f(95), f(1005)}, {f(0.5), f(9.5)}, {nil, f(42)}, {f(-3), nil}, {nil, nil}, {f(10), f(1)},
	} {
		name := fmt.Sprint(deref(tc.lo), "..", deref(tc.hi))
		src := "root ::= " + intBody(tc.lo, tc.hi) + "\n"
		g, err := parseGBNF(src)
		if err != nil {
			t.Fatalf("%s: %v in %s", name, err, src)
		}
		in := func(n int) bool {
			if tc.lo != nil && tc.hi != nil && *tc.lo > *tc.hi {
				return true // no integer: no bound
			}
			return (tc.lo == nil || float64(n) >= *tc.lo) && (tc.hi == nil || float64(n) <= *tc.hi)
		}
		for n := -1100; n <= 1100; n++ {
			if got := g.matches(strconv.Itoa(n)); got != in(n) {
				t.Errorf("%s: matches(%d) = %v", name, n, got)
			}
		}
		for _, s := range []string{"", "-", "+1", "01", "-0", "007", "1.5"} {
			if g.matches(s) {
				t.Errorf("%s: matches(%q)", name, s)
			}
		}
	}
	unbounded, _ := parseGBNF("root ::= " + intBody(nil, nil) + "\n")
	if !unbounded.matches("-9999999999999999") || unbounded.matches("10000000000000000") {
		t.Errorf("an unbounded integer is not of at most %d digits", maxDigits)
	}
	num, _ := parseGBNF("root ::= " + numBody(f(-1.5), f(99)) + "\n")
	for s, want := range map[string]bool{"12.25": true, "-1.5": true, "0": true, "99": true, "100": false, "-2": false, "1e3": false, "1.": false} {
		if num.matches(s) != want {
			t.Errorf("numBody(-1.5, 99): matches(%q) = %v", s, !want)
		}
	}
}

func deref(v *float64) any {
	if v == nil {
		return "∞"
	}
	return *v
}
