package family

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// goldenCaseNamed returns the golden case of f named name, and its output.
func goldenCaseNamed(t *testing.T, f *Family, name string) (goldenCase, string) {
	t.Helper()
	for _, c := range goldenCases {
		if c.family == f && c.name == name {
			b, err := os.ReadFile(filepath.Join("testdata", f.Name, name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			return c, strings.TrimSuffix(string(b), "\n")
		}
	}
	t.Fatalf("no golden case %s/%s", f.Name, name)
	return goldenCase{}, ""
}

// TestThinkingVars checks the template variables each thinking family
// sets, and that the others do not think.
func TestThinkingVars(t *testing.T) {
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
		{gemma4, true, EffortHigh, `{"enable_thinking":true}`},
		{gemma4, false, EffortHigh, `{"enable_thinking":false}`},
		{nemotron, true, EffortHigh, `{"enable_thinking":true}`},
		{nemotron, false, EffortDefault, `{"enable_thinking":false}`},
		{lfm2Thinking, false, EffortDefault, `null`},
		{olmo3Think, false, EffortDefault, `null`},
	}
	for _, tt := range tests {
		b, _ := json.Marshal(tt.family.Thinking.Vars(tt.on, tt.effort))
		if string(b) != tt.want {
			t.Errorf("%s.Vars(%v, %q) = %s, want %s", tt.family.Name, tt.on, tt.effort, b, tt.want)
		}
	}
	for _, f := range []*Family{llama3, llama4, mistral, granite3, granite4, phi4Mini, phi4, gemma3, functionGemma, lfm2, olmo3, qwen3Coder, hermes} {
		if f.Thinking != nil {
			t.Errorf("%s thinks", f.Name)
		}
	}
}

// TestClose checks that a family's Close text, written by the
// engine into a thinking section and pushed through the parser, ends the
// reasoning, and that what the model writes next is its answer or call.
func TestClose(t *testing.T) {
	tests := []struct {
		family *Family
		after  string
		want   Output
	}{
		{gptOSS, "<|channel|>final<|message|>Hi", Output{Text: "Hi", Reasoning: "so far"}},
		{gptOSS, `<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{"timezone":"UTC"}`,
			Output{Reasoning: "so far", Calls: []Call{{Name: "get_time", Arguments: `{"timezone":"UTC"}`}}}},
		{ministral, `[TOOL_CALLS]get_time[ARGS]{"timezone":"UTC"}`,
			Output{Reasoning: "so far", Calls: []Call{{Name: "get_time", Arguments: `{"timezone":"UTC"}`}}}},
		{granite33, "Hi</response>", Output{Text: "Hi", Reasoning: "so far"}},
		{granite32, "\nHi", Output{Text: "Hi", Reasoning: "so far"}},
		{phi4Reasoning, "\n\nHi", Output{Text: "Hi", Reasoning: "so far"}},
		{gemma4, " Answer.", Output{Text: "Answer.", Reasoning: "so far"}},
		{nemotron, " Answer.", Output{Text: "Answer.", Reasoning: "so far"}},
		{olmo3Think, " Answer.", Output{Text: "Answer.", Reasoning: "so far"}},
		{lfm2Thinking, " Answer.", Output{Text: "Answer.", Reasoning: "so far"}},
		{qwen3, "Answer.", Output{Text: "Answer.", Reasoning: "so far"}},
		{qwen35, "Answer.", Output{Text: "Answer.", Reasoning: "so far"}},
		{deepSeekR1, "Answer.", Output{Text: "Answer.", Reasoning: "so far"}},
		{deepSeekV31, "Answer.", Output{Text: "Answer.", Reasoning: "so far"}},
		{glm45, "Answer.", Output{Text: "Answer.", Reasoning: "so far"}},
		{glm47, "Answer.", Output{Text: "Answer.", Reasoning: "so far"}},
	}
	for _, tt := range tests {
		t.Run(tt.family.Name+"/"+tt.after, func(t *testing.T) {
			cfg := ParserConfig{Tools: testTools, Thinking: true}
			got := stream(t, tt.family, cfg, []string{"so far", tt.family.Thinking.Close, tt.after}, false)
			if !sameOutput(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestGoldenSense checks what the golden files say where it matters,
// so that -update cannot bless a wrong split.
func TestGoldenSense(t *testing.T) {
	tests := []struct {
		family *Family
		name   string
		calls  []Call
		text   string
	}{
		{gemma4, "think-two-calls", []Call{
			{"get_weather", `{"location":"Paris","unit":"celsius"}`},
			{"get_weather", `{"days":3,"location":"London, UK"}`}}, ""},
		{gemma4, "text-then-call", []Call{{"search", `{"exact":false,"filters":{"lang":"fr","tags":["météo","a,b"]},"query":"naïve \"quotes\" {x:1}"}`}},
			"Let me look that up for you — un instant."},
		{gemma4, "malformed-call", nil, `Checking.<|tool_call>call:get_weather{location:Paris}<tool_call|> Done.`},
		{gemma4, "truncated-call", nil, "Checking."},
		{lfm2Thinking, "think-text-calls", []Call{
			{"get_weather", `{"location":"Paris, FR","unit":"celsius","days":2}`},
			{"search", `{"query":"it's \"raining\"","exact":true,"filters":{"lang":"en","tags":["a","b"]}}`}}, "Checking now…"},
		{nemotron, "think-call", []Call{{"get_weather", `{"location":"Paris","days":3}`}}, "Let me check."},
		{nemotron, "think-into-call", []Call{{"search", `{"query":"42","filters":{"lang":"en"}}`}}, ""},
	}
	for _, tt := range tests {
		c, out := goldenCaseNamed(t, tt.family, tt.name)
		got := stream(t, c.family, ParserConfig{Tools: c.tools, Thinking: c.thinking}, []string{out}, c.truncated)
		if !reflect.DeepEqual(got.Calls, tt.calls) || got.Text != tt.text {
			t.Errorf("%s/%s: got text %q calls %v, want %q %v", tt.family.Name, tt.name, got.Text, got.Calls, tt.text, tt.calls)
		}
	}
}

// brokenCase is an output whose call does not parse, so it stays text,
// and one cut by the token limit inside a call, so the call is dropped.
type brokenCase struct {
	malformed, wantText string
	cut, wantCutText    string
}

// testBroken checks that malformed calls become text and cut ones are
// dropped, however the output is split.
func testBroken(t *testing.T, f *Family, c brokenCase) {
	t.Helper()
	cfg := ParserConfig{Tools: []Tool{cityTool}}
	for _, pieces := range splits(c.malformed) {
		if got := stream(t, f, cfg, pieces, false); got.Text != c.wantText || len(got.Calls) != 0 || got.Reasoning != "" {
			t.Fatalf("malformed call split %q: %+v, want text %q", pieces, got, c.wantText)
		}
	}
	for _, pieces := range splits(c.cut) {
		if got := stream(t, f, cfg, pieces, true); got.Text != c.wantCutText || len(got.Calls) != 0 {
			t.Fatalf("cut call split %q: %+v, want text %q and no call", pieces, got, c.wantCutText)
		}
	}
	// The same output, not cut by the limit, shows the unfinished call.
	if got := stream(t, f, cfg, []string{c.cut}, false); !strings.Contains(got.Text, strings.TrimSpace(strings.TrimPrefix(c.cut, c.wantCutText))) {
		t.Fatalf("unfinished call not cut by the limit: %+v, want its text", got)
	}
}

// TestThinkingOpenClose: every family that thinks names the marker that
// opens its thinking, and what Open and Close enclose is reasoning.
func TestThinkingOpenClose(t *testing.T) {
	for _, f := range registry() {
		if f.Thinking == nil {
			continue
		}
		if f.Thinking.Open == "" || f.Thinking.Close == "" {
			t.Errorf("%s: Thinking.Open %q, Close %q", f.Name, f.Thinking.Open, f.Thinking.Close)
			continue
		}
		p := f.NewParser(ParserConfig{})
		out := p.Push(f.Thinking.Open + "pondering" + f.Thinking.Close)
		end := p.Flush(false)
		reasoning, text := out.Reasoning+end.Reasoning, out.Text+end.Text
		if !strings.Contains(reasoning, "pondering") || strings.Contains(text, "pondering") {
			t.Errorf("%s: Open+pondering+Close gives reasoning %q, text %q", f.Name, reasoning, text)
		}
	}
}

// The families that write a marker llama.cpp may not end generation at
// name it among their stops, as their templates write it; the others
// have none.
func TestStops(t *testing.T) {
	want := map[*Family][]string{
		gemma4:        {"<|tool_response>"},
		functionGemma: {"<start_function_response>"},
		glm45:         {"<|observation|>", "<|user|>"},
		glm47:         {"<|observation|>", "<|user|>"},
	}
	templates := map[*Family][]string{
		gemma4: {"gemma4-31b.jinja", "gemma4-e2b.jinja"},
		glm45:  {"glm-4.6.jinja"},
		glm47:  {"glm-4.7-flash.jinja"},
	}
	for _, f := range registry() {
		if !reflect.DeepEqual(f.Stops, want[f]) {
			t.Errorf("%s: stops %q, want %q", f.Name, f.Stops, want[f])
		}
		for _, name := range templates[f] {
			b, err := os.ReadFile(filepath.Join("testdata", "templates", name))
			if err != nil {
				t.Fatal(err)
			}
			for _, stop := range f.Stops {
				if !strings.Contains(string(b), stop) {
					t.Errorf("%s: %s does not write %q", f.Name, name, stop)
				}
			}
		}
	}
}

// Calling is the text held of the call the output is inside, its name
// first, on both kinds of parser (marked text, harmony's messages), and
// "" before the call opens and once it ends.
func TestCalling(t *testing.T) {
	tools := []Tool{{Name: "web_search", Parameters: []byte(`{"type":"object","properties":{"query":{"type":"string"}}}`)}}
	for _, c := range []struct {
		f                 *Family
		before, in, after string
	}{
		{qwen3, "Let me look.", "<tool_call>\n{\"name\": \"web_search\", \"arguments\": {\"query\": \"paris", "\"}}\n</tool_call>"},
		{gptOSS, "<|channel|>final<|message|>Let me look.<|end|><|start|>assistant", "<|channel|>commentary to=functions.web_search <|constrain|>json<|message|>{\"query\": \"paris", "\"}"}, // the stop <|call|> ends the output
	} {
		t.Run(c.f.Name, func(t *testing.T) {
			p := c.f.NewParser(ParserConfig{Tools: tools})
			p.Push(c.before)
			if held := p.Calling(); held != "" {
				t.Errorf("before the call: %q", held)
			}
			p.Push(c.in)
			first := p.Calling()
			p.Push(strings.Repeat("x", 100))
			held := p.Calling()
			if first == "" || len(held) != len(first)+100 || !strings.Contains(held, "web_search") || !strings.HasSuffix(held, "paris"+strings.Repeat("x", 100)) {
				t.Errorf("inside the call: %q, then %q after 100 more bytes", first, held)
			}
			out := p.Push(c.after)
			out.Calls = append(out.Calls, p.Flush(false).Calls...)
			if held := p.Calling(); held != "" || len(out.Calls) != 1 {
				t.Errorf("after the call: %q held, calls %+v", held, out.Calls)
			}
		})
	}
}
