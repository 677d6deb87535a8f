package family

import (
	"reflect"
	"strings"
	"testing"
)

// grammarCase is a realistic call of cityTool in a family's syntax, as
// its template writes it, and what the family's parser reads from it.
type grammarCase struct {
	call string
	want Call
}

// testGrammar checks f's grammars for any tool and a named one, single
// and several, that the single grammar of get_weather admits a realistic
// call and refuses it cut short or doubled, and that the parser reads
// that call.
func testGrammar(t *testing.T, f *Family, c grammarCase) {
	t.Helper()
	tools := []Tool{cityTool, {Name: "now"}}
	for _, tc := range []struct {
		name   string
		single bool
	}{{"", true}, {"", false}, {"get_weather", true}, {"now", false}} {
		src, err := f.Tools.Grammar(tools, tc.name, tc.single, testSchema)
		if err != nil {
			t.Fatalf("Grammar(%q, %v): %v", tc.name, tc.single, err)
		}
		g, err := parseGBNF(src)
		if err == nil {
			err = g.check()
		}
		if err != nil {
			t.Fatalf("Grammar(%q, %v): %v in\n%s", tc.name, tc.single, err, src)
		}
		if tc.name == "get_weather" {
			if !g.matches(c.call) {
				t.Fatalf("the grammar refuses %q:\n%s", c.call, src)
			}
			if g.matches(c.call[:len(c.call)-1]) || g.matches(c.call+c.call) || g.matches("Sure. "+c.call) {
				t.Fatalf("the grammar admits %q cut, doubled or after text:\n%s", c.call, src)
			}
		}
	}
	if _, err := f.Tools.Grammar(tools, "nope", true, testSchema); err == nil {
		t.Fatal("Grammar of a tool not offered: no error")
	}
	got := stream(t, f, ParserConfig{Tools: tools}, []string{c.call}, false)
	if len(got.Calls) != 1 || got.Calls[0] != c.want || got.Text != "" {
		t.Fatalf("parsed %+v, want the call %+v", got, c.want)
	}
}

// TestGrammarAdmits checks each family's grammar: it is well formed, it
// admits the calls the family writes (as its golden outputs and its
// template write them), and it refuses other tools, other syntax and a
// second call where one is allowed.
func TestGrammarAdmits(t *testing.T) {
	const (
		weather = `{"location":"Paris","unit":"celsius"}`
		tz      = `{"timezone":"Europe/Paris"}`
	)
	tests := []struct {
		family *Family
		name   string // the tool named; "" for any
		single bool
		accept []string
		refuse []string
	}{
		{gptOSS, "", false,
			[]string{`<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>` + weather,
				`<|channel|>commentary to=functions.ping <|constrain|>json<|message|>{}`},
			[]string{`<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>` + tz,
				`<|channel|>final<|message|>Hello`}},
		{gptOSS, "get_time", true,
			[]string{`<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>` + tz},
			[]string{`<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>` + weather}},
		{llama3, "", false,
			[]string{`{"name":"get_weather","parameters":` + weather + `}`},
			[]string{`{"name":"get_weather","arguments":` + weather + `}`, `{"name":"nope","parameters":{}}`,
				`{"name":"get_time","parameters":` + tz + `}{"name":"get_time","parameters":` + tz + `}`}},
		{llama4, "", false,
			[]string{`{"name":"get_weather","parameters":` + weather + `}{"name":"get_time","parameters":` + tz + `}`},
			[]string{`<|python_start|>{"name":"get_weather","parameters":` + weather + `}`}},
		{llama4, "get_time", false,
			[]string{`{"name":"get_time","parameters":` + tz + `}`},
			[]string{`{"name":"get_time","parameters":` + tz + `}{"name":"get_time","parameters":` + tz + `}`}},
		{mistral, "", false,
			[]string{`[TOOL_CALLS][{"name":"get_weather","arguments":` + weather + `},{"name":"get_time","arguments":` + tz + `}]`},
			[]string{`[TOOL_CALLS]get_weather[ARGS]` + weather}},
		{mistral, "", true,
			[]string{`[TOOL_CALLS][{"name":"get_time","arguments":` + tz + `}]`},
			[]string{`[TOOL_CALLS][{"name":"get_weather","arguments":` + weather + `},{"name":"get_time","arguments":` + tz + `}]`}},
		{ministral, "", false,
			[]string{`[TOOL_CALLS]get_weather[ARGS]` + weather + `[TOOL_CALLS]get_time[ARGS]` + tz},
			[]string{`[TOOL_CALLS]get_weather[ARGS]` + tz, `[TOOL_CALLS][{"name":"get_time","arguments":` + tz + `}]`}},
		{ministral, "get_weather", false,
			[]string{`[TOOL_CALLS]get_weather[ARGS]` + weather},
			[]string{`[TOOL_CALLS]get_weather[ARGS]` + weather + `[TOOL_CALLS]get_weather[ARGS]` + weather}},
		{granite33, "", false,
			[]string{`<|tool_call|>[{"name":"get_weather","arguments":` + weather + `},{"name":"ping","arguments":{}}]`},
			[]string{`<|tool_call|>{"name":"get_weather","arguments":` + weather + `}`}},
		{granite4, "", false,
			[]string{"<tool_call>\n" + `{"name":"get_weather","arguments":` + weather + `}` + "\n</tool_call>\n<tool_call>\n" + `{"name":"get_time","arguments":` + tz + `}` + "\n</tool_call>"},
			[]string{`<tool_call>{"name":"get_weather","arguments":` + weather + `}</tool_call>`}},
		{phi4Mini, "", false,
			[]string{`<|tool_call|>{"name":"get_weather","arguments":` + weather + `}<|/tool_call|><|tool_call|>{"name":"get_time","arguments":` + tz + `}<|/tool_call|>`},
			[]string{`<|tool_call|>{"name":"get_weather","parameters":` + weather + `}<|/tool_call|>`}},
		{phi4Mini, "", true,
			[]string{`<|tool_call|>{"name":"get_time","arguments":` + tz + `}<|/tool_call|>`},
			[]string{`<|tool_call|>{"name":"get_time","arguments":` + tz + `}<|/tool_call|><|tool_call|>{"name":"get_time","arguments":` + tz + `}<|/tool_call|>`}},
	}
	for _, tt := range tests {
		t.Run(tt.family.Name+"/"+tt.name, func(t *testing.T) {
			src, err := tt.family.Tools.Grammar(testTools, tt.name, tt.single, testSchema)
			if err != nil {
				t.Fatal(err)
			}
			g, err := parseGBNF(src)
			if err != nil {
				t.Fatalf("%v in\n%s", err, src)
			}
			if err := g.check(); err != nil {
				t.Fatalf("%v in\n%s", err, src)
			}
			for _, s := range tt.accept {
				if !g.matches(s) {
					t.Errorf("refuses %s\n%s", s, src)
				}
				// What the grammar admits, the parser reads as calls.
				got := stream(t, tt.family, ParserConfig{Tools: testTools}, []string{s}, false)
				if len(got.Calls) == 0 || got.Text != "" {
					t.Errorf("the parser reads %s as %+v", s, got)
				}
			}
			for _, s := range tt.refuse {
				if g.matches(s) {
					t.Errorf("admits %s", s)
				}
			}
		})
	}
	for _, f := range []*Family{gptOSS, llama3, llama4, mistral, ministral, granite33, granite32, granite3, granite4, phi4Mini} {
		if _, err := f.Tools.Grammar(testTools, "nope", false, testSchema); err == nil {
			t.Errorf("%s: a grammar for a tool not offered", f.Name)
		}
	}
}

// TestGrammarCalls builds each family's grammar for any tool and for one
// named tool, checks it with the test GBNF matcher, and checks that it
// admits realistic calls in the family's syntax, which its parser reads
// back, and refuses what is not such a call.
func TestGrammarCalls(t *testing.T) {
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
			build := func(name string, single bool) gbnf {
				t.Helper()
				text, err := tt.family.Tools.Grammar(testTools, name, single, testSchema)
				if err != nil {
					t.Fatal(err)
				}
				g, err := parseGBNF(text)
				if err == nil {
					err = g.check()
				}
				if err != nil {
					t.Fatalf("%v in\n%s", err, text)
				}
				return g
			}
			anyMany, anyOne, named := build("", false), build("", true), build("search", true)
			for _, c := range []struct {
				g    gbnf
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
			got := stream(t, tt.family, ParserConfig{Tools: testTools}, []string{both}, false)
			if got.Text != "" || got.Reasoning != "" || !reflect.DeepEqual(got.Calls, tt.calls) {
				t.Errorf("parsed %q as %+v, want calls %v", both, got, tt.calls)
			}
			if _, err := tt.family.Tools.Grammar(testTools, "delete_all", true, testSchema); err == nil || !strings.Contains(err.Error(), "delete_all") {
				t.Errorf("a tool not offered: err = %v", err)
			}
		})
	}
}
