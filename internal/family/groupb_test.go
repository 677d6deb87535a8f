package family

import (
	"bytes"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The -update flag rewrites golden files. It is registered here only if
// no other test file of the package has registered it.
var _ = func() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata")
	}
	return true
}()

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// The tools the golden outputs call.
var goldenTools = []Tool{
	{Name: "get_weather", Description: "Get the weather in a place", Parameters: json.RawMessage(
		`{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location","unit"]}`)},
	{Name: "get_time", Description: "Get the time in a time zone", Parameters: json.RawMessage(
		`{"type":"object","properties":{"timezone":{"type":"string"}},"required":["timezone"]}`)},
	{Name: "ping"},
}

// streamCase is one output of a family, streamed through its parser.
type streamCase struct {
	family    *Family
	name      string // testdata/<family>/<name>.txt holds the output
	thinking  bool
	truncated bool
	noTools   bool
}

var groupBCases = []streamCase{
	{family: gptOSS, name: "think-answer"},
	{family: gptOSS, name: "think-call"},
	{family: gptOSS, name: "template-call"},
	{family: gptOSS, name: "preamble-call"},
	{family: gptOSS, name: "prompt-opened-thinking", thinking: true},
	{family: gptOSS, name: "malformed-call"},
	{family: gptOSS, name: "cut-call", truncated: true},
	{family: gptOSS, name: "cut-thinking", truncated: true},

	{family: llama3, name: "bare-call"},
	{family: llama3, name: "python-tag-call"},
	{family: llama3, name: "two-calls"},
	{family: llama3, name: "answer"},
	{family: llama3, name: "json-answer"},
	{family: llama3, name: "bare-call", noTools: true},
	{family: llama3, name: "malformed-call"},
	{family: llama3, name: "cut-call", truncated: true},
	{family: llama3, name: "cut-bare-call", truncated: true},

	{family: llama4, name: "bare-call"},
	{family: llama4, name: "python-start-call"},
	{family: llama4, name: "two-calls"},
	{family: llama4, name: "answer"},
	{family: llama4, name: "cut-call", truncated: true},

	{family: mistral, name: "calls"},
	{family: mistral, name: "text-call"},
	{family: mistral, name: "answer"},
	{family: mistral, name: "malformed-call"},
	{family: mistral, name: "cut-call", truncated: true},

	{family: ministral, name: "think-calls"},
	{family: ministral, name: "prompt-opened-thinking", thinking: true},
	{family: ministral, name: "call-id"},
	{family: ministral, name: "answer"},
	{family: ministral, name: "malformed-call"},
	{family: ministral, name: "cut-call", truncated: true},

	{family: granite33, name: "think-answer"},
	{family: granite33, name: "call"},
	{family: granite33, name: "cut-call", truncated: true},
	{family: granite32, name: "think-answer"},
	{family: granite3, name: "calls"},
	{family: granite3, name: "malformed-call"},
	{family: granite4, name: "calls"},
	{family: granite4, name: "malformed-call"},
	{family: granite4, name: "cut-call", truncated: true},

	{family: phi4Mini, name: "calls"},
	{family: phi4Mini, name: "list-call"},
	{family: phi4Mini, name: "answer"},
	{family: phi4Mini, name: "unclosed-call"},
	{family: phi4Mini, name: "malformed-call"},
	{family: phi4Mini, name: "cut-call", truncated: true},
	{family: phi4Reasoning, name: "think-answer"},
	{family: phi4Reasoning, name: "prompt-opened-thinking", thinking: true},
	{family: phi4Reasoning, name: "thinking-off"},
	{family: phi4, name: "answer"},
}

func (c streamCase) id() string {
	id := c.family.Name + "/" + c.name
	if c.thinking {
		id += ".thinking"
	}
	if c.truncated {
		id += ".truncated"
	}
	if c.noTools {
		id += ".notools"
	}
	return id
}

func (c streamCase) config() ParserConfig {
	cfg := ParserConfig{Thinking: c.thinking}
	if !c.noTools {
		cfg.Tools = goldenTools
	}
	return cfg
}

// golden is a golden file: what the whole output yields.
type golden struct {
	Text      string `json:"text"`
	Reasoning string `json:"reasoning"`
	Calls     []Call `json:"calls"`
}

// stream pushes pieces through a new parser and gathers what it releases.
func stream(t *testing.T, f *Family, cfg ParserConfig, pieces []string, truncated bool) golden {
	t.Helper()
	p := f.NewParser(cfg)
	var g golden
	add := func(o Output) {
		if !utf8.ValidString(o.Text) || !utf8.ValidString(o.Reasoning) {
			t.Fatalf("released a broken UTF-8 character: %+v", o)
		}
		g.Text += o.Text
		g.Reasoning += o.Reasoning
		g.Calls = append(g.Calls, o.Calls...)
	}
	for _, piece := range pieces {
		add(p.Push(piece))
	}
	add(p.Flush(truncated))
	return g
}

// splits returns ways to stream s: whole, in two at every character
// boundary, a character at a time, and in random pieces.
func splits(s string) [][]string {
	out := [][]string{{s}}
	for i := 1; i < len(s); i++ {
		if utf8.RuneStart(s[i]) {
			out = append(out, []string{s[:i], s[i:]})
		}
	}
	var runes []string
	for _, r := range s {
		runes = append(runes, string(r))
	}
	out = append(out, runes)
	rng := rand.New(rand.NewPCG(1, uint64(len(s))))
	for range 50 {
		var pieces []string
		rest := s
		for rest != "" {
			n := 1 + rng.IntN(8)
			for n < len(rest) && !utf8.RuneStart(rest[n]) {
				n++
			}
			n = min(n, len(rest))
			pieces = append(pieces, rest[:n])
			rest = rest[n:]
		}
		out = append(out, pieces)
	}
	return out
}

func TestGroupBGolden(t *testing.T) {
	for _, c := range groupBCases {
		t.Run(c.id(), func(t *testing.T) {
			dir := filepath.Join("testdata", c.family.Name)
			input, err := os.ReadFile(filepath.Join(dir, c.name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			// Files end with a newline that the output does not hold.
			out := strings.TrimSuffix(string(input), "\n")
			want := stream(t, c.family, c.config(), []string{out}, c.truncated)
			path := filepath.Join(dir, strings.TrimPrefix(c.id(), c.family.Name+"/")+".golden.json")
			if updating() {
				b, _ := json.MarshalIndent(want, "", "  ")
				if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var g golden
			if err := json.Unmarshal(b, &g); err != nil {
				t.Fatal(err)
			}
			for _, pieces := range splits(out) {
				got := stream(t, c.family, c.config(), pieces, c.truncated)
				if !sameGolden(got, g) {
					t.Fatalf("streamed as %q:\ngot  %+v\nwant %+v", pieces, got, g)
				}
			}
		})
	}
}

func sameGolden(a, b golden) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// TestGroupBMatch checks Lookup on real templates: each finds its family,
// and the other templates present find none of group B's.
func TestGroupBMatch(t *testing.T) {
	tests := []struct {
		file, arch, want string
	}{
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
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.arch, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "templates", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if f := Lookup(tt.arch, string(b)); f != nil {
				got = f.Name
			}
			if got != tt.want {
				t.Errorf("Lookup = %q, want %q", got, tt.want)
			}
		})
	}
	// No group B family takes a template that is not its own.
	mine := map[string]bool{}
	for _, tt := range tests {
		mine[tt.file] = true
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "templates", "*.jinja"))
	for _, path := range files {
		if mine[filepath.Base(path)] {
			continue
		}
		b, _ := os.ReadFile(path)
		for _, f := range []*Family{gptOSS, llama4, llama3, ministral, mistral, granite33, granite32, granite3, granite4, phi4Reasoning, phi4Mini, phi4} {
			if f.Match("", string(b)) {
				t.Errorf("%s takes %s", f.Name, filepath.Base(path))
			}
		}
	}
}

// TestGroupBGrammar checks each family's grammar: it is well formed, it
// admits the calls the family writes (as its golden outputs and its
// template write them), and it refuses other tools, other syntax and a
// second call where one is allowed.
func TestGroupBGrammar(t *testing.T) {
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
			src, err := tt.family.Tools.Grammar(goldenTools, tt.name, tt.single, testSchema)
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
				got := stream(t, tt.family, ParserConfig{Tools: goldenTools}, []string{s}, false)
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
		if _, err := f.Tools.Grammar(goldenTools, "nope", false, testSchema); err == nil {
			t.Errorf("%s: a grammar for a tool not offered", f.Name)
		}
	}
}

// TestGroupBThinkingVars checks the template variables each thinking
// family sets.
func TestGroupBThinkingVars(t *testing.T) {
	tests := []struct {
		family *Family
		on     bool
		effort Effort
		want   string
	}{
		{gptOSS, true, EffortHigh, `{"reasoning_effort":"high"}`},
		{gptOSS, true, EffortDefault, `{}`},
		{gptOSS, false, EffortHigh, `{"reasoning_effort":"low"}`},
		{granite33, true, EffortDefault, `{"thinking":true}`},
		{granite33, false, EffortDefault, `{"thinking":false}`},
		{granite32, true, EffortLow, `{"thinking":true}`},
		{ministral, true, EffortDefault, `{}`},
		{phi4Reasoning, true, EffortDefault, `{}`},
	}
	for _, tt := range tests {
		b, _ := json.Marshal(tt.family.Thinking.Vars(tt.on, tt.effort))
		if string(b) != tt.want {
			t.Errorf("%s.Vars(%v, %q) = %s, want %s", tt.family.Name, tt.on, tt.effort, b, tt.want)
		}
	}
	for _, f := range []*Family{llama3, llama4, mistral, granite3, granite4, phi4Mini, phi4} {
		if f.Thinking != nil {
			t.Errorf("%s thinks", f.Name)
		}
	}
}

func TestPrefixRules(t *testing.T) {
	got := prefixRules("root ::= \"a-b\" x-y [a-z]{1,2} # note root\nx-y ::= \"root\" | [^\\]root]", "p-", "call")
	want := "call ::= \"a-b\" p-x-y [a-z]{1,2} # note root\np-x-y ::= \"root\" | [^\\]root]"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestGroupBClose checks that a family's Close text, written by the
// engine into a thinking section and pushed through the parser, ends the
// reasoning, and that what the model writes next is its answer or call.
func TestGroupBClose(t *testing.T) {
	tests := []struct {
		family *Family
		after  string
		want   golden
	}{
		{gptOSS, "<|channel|>final<|message|>Hi", golden{Text: "Hi", Reasoning: "so far"}},
		{gptOSS, `<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{"timezone":"UTC"}`,
			golden{Reasoning: "so far", Calls: []Call{{Name: "get_time", Arguments: `{"timezone":"UTC"}`}}}},
		{ministral, `[TOOL_CALLS]get_time[ARGS]{"timezone":"UTC"}`,
			golden{Reasoning: "so far", Calls: []Call{{Name: "get_time", Arguments: `{"timezone":"UTC"}`}}}},
		{granite33, "Hi</response>", golden{Text: "Hi", Reasoning: "so far"}},
		{granite32, "\nHi", golden{Text: "Hi", Reasoning: "so far"}},
		{phi4Reasoning, "\n\nHi", golden{Text: "Hi", Reasoning: "so far"}},
	}
	for _, tt := range tests {
		t.Run(tt.family.Name, func(t *testing.T) {
			cfg := ParserConfig{Tools: goldenTools, Thinking: true}
			got := stream(t, tt.family, cfg, []string{"so far", tt.family.Thinking.Close, tt.after}, false)
			if !sameGolden(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
