package family

import (
	"reflect"
	"strings"
	"testing"
)

// TestGroupCGrammars builds each family's grammar for any tool and for one
// named tool, checks it with the test GBNF matcher, and checks that it
// admits realistic calls in the family's syntax, which its parser reads
// back, and refuses what is not such a call.
func TestGroupCGrammars(t *testing.T) {
	tests := []struct {
		family *Family
		// one and two are calls of get_weather and of search; bad ones are
		// refused by the grammar of any tool.
		one, two string
		calls    []Call
		bad      []string
	}{
		{family: gemma4,
			one: `<|tool_call>call:get_weather{days:3,location:<|"|>Paris, FR<|"|>,unit:<|"|>celsius<|"|>}<tool_call|>`,
			two: `<|tool_call>call:search{filters:{lang:<|"|>fr<|"|>,tags:[<|"|>a<|"|>,<|"|>b<|"|>]},query:<|"|>vent "fort"<|"|>}<tool_call|>`,
			calls: []Call{{"get_weather", `{"days":3,"location":"Paris, FR","unit":"celsius"}`},
				{"search", `{"filters":{"lang":"fr","tags":["a","b"]},"query":"vent \"fort\""}`}},
			bad: []string{
				`<|tool_call>call:get_weather{location:<|"|>Paris<|"|>,unit:<|"|>kelvin<|"|>}<tool_call|>`,
				`<|tool_call>call:get_weather{unit:<|"|>celsius<|"|>}<tool_call|>`,
				`<|tool_call>call:get_weather{location:"Paris"}<tool_call|>`,
				`<|tool_call>call:delete_all{}<tool_call|>`,
				`Sure! <|tool_call>call:get_weather{location:<|"|>Paris<|"|>}<tool_call|>`,
			}},
		{family: functionGemma,
			one:   `<start_function_call>call:get_weather{location:<escape>Zürich<escape>}<end_function_call>`,
			two:   `<start_function_call>call:search{exact:true,query:<escape>föhn<escape>}<end_function_call>`,
			calls: []Call{{"get_weather", `{"location":"Zürich"}`}, {"search", `{"exact":true,"query":"föhn"}`}},
			bad: []string{
				`<start_function_call>call:get_weather{days:<escape>3<escape>,location:<escape>Zürich<escape>}<end_function_call>`,
				`<start_function_call>call:get_weather{}<end_function_call>`,
			}},
		{family: lfm2,
			one: `get_weather(location='Paris', unit='fahrenheit')`,
			two: `search(exact=False, filters={"lang": 'en'}, query='it\'s')`,
			calls: []Call{{"get_weather", `{"location":"Paris","unit":"fahrenheit"}`},
				{"search", `{"exact":false,"filters":{"lang":"en"},"query":"it's"}`}},
			bad: []string{
				`<|tool_call_start|>[get_weather(location="Paris")]<|tool_call_end|>`,
				`<|tool_call_start|>[get_weather(unit='celsius', location='Paris')]<|tool_call_end|>`,
				`<|tool_call_start|>get_weather(location='Paris')<|tool_call_end|>`,
			}},
		{family: olmo3,
			one:   `get_weather(days=2, location="New York")`,
			two:   `search(query="a \"b\"")`,
			calls: []Call{{"get_weather", `{"days":2,"location":"New York"}`}, {"search", `{"query":"a \"b\""}`}},
			bad: []string{
				`<function_calls>get_weather(location='New York')</function_calls>`,
				`<function_calls>get_weather(days="2", location="New York")</function_calls>`,
			}},
		{family: nemotron,
			one: "<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n<parameter=location>\nParis, FR\n</parameter>\n</function>\n</tool_call>",
			two: "<tool_call>\n<function=search>\n<parameter=exact>\ntrue\n</parameter>\n<parameter=query>\n42 <b>\n</parameter>\n</function>\n</tool_call>",
			calls: []Call{{"get_weather", `{"days":3,"location":"Paris, FR"}`},
				{"search", `{"exact":true,"query":"42 <b>"}`}},
			bad: []string{
				"<tool_call>\n<function=get_weather>\n<parameter=days>\nthree\n</parameter>\n<parameter=location>\nParis\n</parameter>\n</function>\n</tool_call>",
				"<tool_call>\n<function=get_weather>\n</function>\n</tool_call>",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.family.Name, func(t *testing.T) {
			one, two, both := tt.one, tt.two, tt.one+tt.two
			switch tt.family {
			case lfm2:
				wrap := func(s string) string { return "<|tool_call_start|>[" + s + "]<|tool_call_end|>" }
				one, two, both = wrap(tt.one), wrap(tt.two), wrap(tt.one+", "+tt.two)
			case olmo3:
				wrap := func(s string) string { return "<function_calls>" + s + "</function_calls>" }
				one, two, both = wrap(tt.one), wrap(tt.two), wrap(tt.one+"\n"+tt.two)
			case nemotron:
				both = tt.one + "\n" + tt.two
			}
			build := func(name string, single bool) gbnfGrammar {
				t.Helper()
				text, err := tt.family.Tools.Grammar(weatherTools, name, single, fakeJSONSchema)
				if err != nil {
					t.Fatal(err)
				}
				return parseGBNF(t, text)
			}
			anyMany, anyOne, named := build("", false), build("", true), build("search", true)
			for _, c := range []struct {
				g    gbnfGrammar
				what string
				s    string
				want bool
			}{
				{anyMany, "any, several: one", one, true},
				{anyMany, "any, several: two", both, true},
				{anyOne, "any, single: one", two, true},
				{anyOne, "any, single: two", both, false},
				{named, "search: search", two, true},
				{named, "search: get_weather", one, false},
			} {
				if got := c.g.matches(c.s); got != c.want {
					t.Errorf("%s: matches(%q) = %v, want %v", c.what, c.s, got, c.want)
				}
			}
			for _, s := range tt.bad {
				if anyMany.matches(s) {
					t.Errorf("admits %q", s)
				}
			}
			got := run(parserCase{family: tt.family, cfg: ParserConfig{Tools: weatherTools}}, []string{both})
			if got.Text != "" || got.Reasoning != "" || !reflect.DeepEqual(got.Calls, tt.calls) {
				t.Errorf("parsed %q as %+v, want calls %v", both, got, tt.calls)
			}
			if _, err := tt.family.Tools.Grammar(weatherTools, "delete_all", true, fakeJSONSchema); err == nil || !strings.Contains(err.Error(), "delete_all") {
				t.Errorf("a tool not offered: err = %v", err)
			}
		})
	}
}

// TestRenameRules checks that renaming the converter's rules leaves its
// literals, classes, counts and comments alone.
func TestRenameRules(t *testing.T) {
	in := "root ::= obj-1 space # a [comment]\nobj-1 ::= \"{\\\"x\\\" \" [^\"\\\\] char{0,4} \"]\"\n"
	want := "p-root ::= p-obj-1 p-space # a [comment]\np-obj-1 ::= \"{\\\"x\\\" \" [^\"\\\\] p-char{0,4} \"]\"\n"
	if got := renameRules(in, "p-"); got != want {
		t.Errorf("renameRules:\n got %q\nwant %q", got, want)
	}
}
