package family

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// The -update flag rewrites golden files. Another file of the package may
// define it first; then this one reads that one's.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// weatherTools are the tools of group C's tests.
var weatherTools = []Tool{
	{Name: "get_weather", Description: "The weather of a place.", Parameters: json.RawMessage(`{"type":"object","properties":{
		"location":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer"}},
		"required":["location"]}`)},
	{Name: "search", Parameters: json.RawMessage(`{"type":"object","properties":{
		"query":{"type":"string"},"filters":{"type":"object","properties":{"lang":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}}},
		"exact":{"type":"boolean"}},"required":["query"]}`)},
}

// parserCase is one output of a family and how it ends.
type parserCase struct {
	name      string
	family    *Family
	cfg       ParserConfig
	output    string
	truncated bool
}

var parserCases = []parserCase{
	{name: "think-two-calls", family: gemma4, cfg: ParserConfig{Tools: weatherTools},
		output: "<|channel>thought\nThe user wants Paris and London; I’ll call get_weather twice.\n<channel|>" +
			`<|tool_call>call:get_weather{location:<|"|>Paris<|"|>,unit:<|"|>celsius<|"|>}<tool_call|>` +
			`<|tool_call>call:get_weather{days:3,location:<|"|>London, UK<|"|>}<tool_call|>`},
	{name: "text-then-call", family: gemma4, cfg: ParserConfig{Tools: weatherTools},
		output: "Let me look that up for you — un instant.\n" +
			`<|tool_call>call:search{exact:false,filters:{lang:<|"|>fr<|"|>,tags:[<|"|>météo<|"|>,<|"|>a,b<|"|>]},query:<|"|>naïve "quotes" {x:1}<|"|>}<tool_call|>`},
	{name: "answer", family: gemma4, cfg: ParserConfig{Tools: weatherTools},
		output: "<|channel>thought\nSimple greeting.<channel|>\n\nBonjour ! Il fait 21 °C à Paris ☀️. Use <|tool for… nothing."},
	{name: "thinking-opened", family: gemma4, cfg: ParserConfig{Thinking: true},
		output: "2 + 2 is basic arithmetic.\n<channel|>2 + 2 = 4."},
	{name: "malformed-call", family: gemma4, cfg: ParserConfig{Tools: weatherTools},
		output: `Checking.<|tool_call>call:get_weather{location:Paris}<tool_call|> Done.`},
	{name: "truncated-call", family: gemma4, cfg: ParserConfig{Tools: weatherTools}, truncated: true,
		output: `Checking.<|tool_call>call:get_weather{location:<|"|>Par`},
	{name: "unclosed-call", family: gemma4, cfg: ParserConfig{Tools: weatherTools},
		output: `Checking.<|tool_call>call:get_weather{location:<|"|>Paris<|"|>}`},

	{name: "call", family: functionGemma, cfg: ParserConfig{Tools: weatherTools},
		output: "<start_function_call>call:get_weather{location:<escape>Zürich<escape>,unit:<escape>celsius<escape>}<end_function_call>"},
	{name: "text", family: functionGemma, cfg: ParserConfig{Tools: weatherTools},
		output: "I can only call the functions I was given; ask me about the weather ☁️."},
	{name: "malformed-call", family: functionGemma, cfg: ParserConfig{Tools: weatherTools},
		output: "<start_function_call>get_weather(Zürich)<end_function_call>"},
	{name: "truncated-call", family: functionGemma, cfg: ParserConfig{Tools: weatherTools}, truncated: true,
		output: "Sure. <start_function_call>call:get_weather{location:<escape>Zü"},

	{name: "think-text-calls", family: lfm2Thinking, cfg: ParserConfig{Tools: weatherTools},
		output: "<think>Two lookups: weather, then a search.</think>\nChecking now… " +
			`<|tool_call_start|>[get_weather(location='Paris, FR', unit="celsius", days=2), search(query='it\'s "raining"', exact=True, filters={"lang": "en", "tags": ['a', 'b']})]<|tool_call_end|>`},
	{name: "answer", family: lfm2, cfg: ParserConfig{Tools: weatherTools},
		output: "The weather in Paris is 21 °C, température idéale."},
	{name: "malformed-call", family: lfm2, cfg: ParserConfig{Tools: weatherTools},
		output: "<|tool_call_start|>[get_weather(location=Paris)]<|tool_call_end|>"},
	{name: "truncated-call", family: lfm2, cfg: ParserConfig{Tools: weatherTools}, truncated: true,
		output: "<|tool_call_start|>[get_weather(location='Par"},

	{name: "calls", family: olmo3, cfg: ParserConfig{Tools: weatherTools},
		output: "I'll check both cities.<function_calls>get_weather(location=\"San Francisco\")\n" +
			`get_weather(days=2, location="New York", unit="fahrenheit")</function_calls>`},
	{name: "malformed-call", family: olmo3, cfg: ParserConfig{Tools: weatherTools},
		output: "<function_calls>get_weather(location=)</function_calls>"},
	{name: "truncated-call", family: olmo3, cfg: ParserConfig{Tools: weatherTools}, truncated: true,
		output: "<function_calls>get_weather(location=\"San"},
	{name: "think", family: olmo3Think, cfg: ParserConfig{Thinking: true},
		output: "Okay, the user asks for 2+2. That's 4.\n</think>\n\nThe answer is **4**."},
	{name: "think-truncated", family: olmo3Think, cfg: ParserConfig{Thinking: true}, truncated: true,
		output: "Okay, let me think about this at length… first,"},

	{name: "think-call", family: nemotron, cfg: ParserConfig{Tools: weatherTools, Thinking: true},
		output: "The user wants the forecast for Paris, 3 days.\n</think>\nLet me check.\n<tool_call>\n<function=get_weather>\n" +
			"<parameter=location>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n"},
	{name: "think-into-call", family: nemotron, cfg: ParserConfig{Tools: weatherTools, Thinking: true},
		output: "I should search.\n<tool_call>\n<function=search>\n<parameter=query>\n42\n</parameter>\n" +
			"<parameter=filters>\n{\"lang\": \"en\"}\n</parameter>\n</function>\n</tool_call>"},
	{name: "no-think", family: nemotron, cfg: ParserConfig{Tools: weatherTools},
		output: "Paris: 21 °C and sunny ☀️."},
	{name: "malformed-call", family: nemotron, cfg: ParserConfig{Tools: weatherTools},
		output: "<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</function>\n</tool_call>"},
	{name: "truncated-call", family: nemotron, cfg: ParserConfig{Tools: weatherTools}, truncated: true,
		output: "Sure.\n<tool_call>\n<function=get_weather>\n<parameter=location>\nPar"},

	{name: "text", family: gemma3, output: "Hello! <start_of_image> is just text here. Ça va ? 👋"},
}

// run streams pieces through a new parser and returns all it released.
func run(c parserCase, pieces []string) Output {
	p := c.family.NewParser(c.cfg)
	var all Output
	add := func(o Output) {
		all.Text += o.Text
		all.Reasoning += o.Reasoning
		all.Calls = append(all.Calls, o.Calls...)
	}
	for _, s := range pieces {
		add(p.Push(s))
	}
	add(p.Flush(c.truncated))
	return all
}

// TestGroupCParsers streams each output whole, split in two at every
// byte position that keeps UTF-8 whole, and one rune at a time, and
// checks that each gives the golden Output.
func TestGroupCParsers(t *testing.T) {
	for _, c := range parserCases {
		t.Run(c.family.Name+"/"+c.name, func(t *testing.T) {
			got := run(c, []string{c.output})
			path := filepath.Join("testdata", c.family.Name, c.name+".json")
			if updating() {
				b, _ := json.MarshalIndent(map[string]any{"output": c.output, "truncated": c.truncated, "want": got}, "", "  ")
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			var golden struct {
				Output string
				Want   Output
			}
			if err := json.Unmarshal(b, &golden); err != nil {
				t.Fatal(err)
			}
			if golden.Output != c.output {
				t.Fatalf("golden file is of another output; run with -update")
			}
			check := func(how string, got Output) {
				t.Helper()
				if !sameOutput(got, golden.Want) {
					t.Fatalf("%s:\n got %+v\nwant %+v", how, got, golden.Want)
				}
			}
			check("whole", got)
			for i := 1; i < len(c.output); i++ {
				if utf8.RuneStart(c.output[i]) {
					check("split at "+strings.TrimSpace(c.output[:i]), run(c, []string{c.output[:i], c.output[i:]}))
				}
			}
			var runes []string
			for _, r := range c.output {
				runes = append(runes, string(r))
			}
			check("rune by rune", run(c, runes))
		})
	}
}

func caseNamed(f *Family, name string) parserCase {
	for _, c := range parserCases {
		if c.family == f && c.name == name {
			return c
		}
	}
	panic("no case " + name)
}

func sameOutput(a, b Output) bool {
	if len(a.Calls) == 0 && len(b.Calls) == 0 {
		a.Calls, b.Calls = nil, nil
	}
	return reflect.DeepEqual(a, b)
}

// TestGroupCGoldenSense checks what the golden files say where it matters,
// so that -update cannot bless a wrong split.
func TestGroupCGoldenSense(t *testing.T) {
	tests := []struct {
		c     parserCase
		calls []Call
		text  string
	}{
		{caseNamed(gemma4, "think-two-calls"), []Call{
			{"get_weather", `{"location":"Paris","unit":"celsius"}`},
			{"get_weather", `{"days":3,"location":"London, UK"}`}}, ""},
		{caseNamed(gemma4, "text-then-call"), []Call{{"search", `{"exact":false,"filters":{"lang":"fr","tags":["météo","a,b"]},"query":"naïve \"quotes\" {x:1}"}`}},
			"Let me look that up for you — un instant."},
		{caseNamed(gemma4, "malformed-call"), nil, `Checking.<|tool_call>call:get_weather{location:Paris}<tool_call|> Done.`},
		{caseNamed(gemma4, "truncated-call"), nil, "Checking."},
		{caseNamed(lfm2Thinking, "think-text-calls"), []Call{
			{"get_weather", `{"location":"Paris, FR","unit":"celsius","days":2}`},
			{"search", `{"query":"it's \"raining\"","exact":true,"filters":{"lang":"en","tags":["a","b"]}}`}}, "Checking now…"},
		{caseNamed(nemotron, "think-call"), []Call{{"get_weather", `{"location":"Paris","days":3}`}}, "Let me check."},
		{caseNamed(nemotron, "think-into-call"), []Call{{"search", `{"query":"42","filters":{"lang":"en"}}`}}, ""},
	}
	for _, tt := range tests {
		got := run(tt.c, []string{tt.c.output})
		if !reflect.DeepEqual(got.Calls, tt.calls) || got.Text != tt.text {
			t.Errorf("%s/%s: got text %q calls %v, want %q %v", tt.c.family.Name, tt.c.name, got.Text, got.Calls, tt.text, tt.calls)
		}
	}
}

// TestGroupCThinking checks that each thinking family switches thinking
// as its template reads it and that the parser starts inside thinking
// only when the prompt opened it.
func TestGroupCThinking(t *testing.T) {
	for _, f := range []*Family{gemma4, nemotron} {
		for _, on := range []bool{true, false} {
			if got := f.Thinking.Vars(on, EffortHigh); !reflect.DeepEqual(got, map[string]any{"enable_thinking": on}) {
				t.Errorf("%s: Vars(%v) = %v", f.Name, on, got)
			}
		}
	}
	for _, f := range []*Family{lfm2Thinking, olmo3Think} {
		if got := f.Thinking.Vars(false, EffortDefault); len(got) != 0 {
			t.Errorf("%s cannot switch thinking, yet Vars = %v", f.Name, got)
		}
	}
	for _, f := range []*Family{gemma3, functionGemma, lfm2, olmo3} {
		if f.Thinking != nil {
			t.Errorf("%s does not think", f.Name)
		}
	}
	for _, f := range []*Family{gemma4, nemotron, olmo3Think, lfm2Thinking} {
		on := run(parserCase{family: f, cfg: ParserConfig{Thinking: true}}, []string{"Pondering. ", f.Thinking.Close, " Answer."})
		if on.Reasoning != "Pondering." || on.Text != "Answer." {
			t.Errorf("%s thinking on: %+v", f.Name, on)
		}
		off := run(parserCase{family: f}, []string{"Answer."})
		if off.Reasoning != "" || off.Text != "Answer." {
			t.Errorf("%s thinking off: %+v", f.Name, off)
		}
	}
}
