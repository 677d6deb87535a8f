package family

import (
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// testTools are the tools most tests offer and call.
var testTools = []Tool{
	{Name: "get_weather", Description: "The weather of a place.", Parameters: json.RawMessage(`{"type":"object","properties":{
		"location":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer"}},
		"required":["location"]}`)},
	{Name: "get_time", Description: "The time in a time zone.", Parameters: json.RawMessage(
		`{"type":"object","properties":{"timezone":{"type":"string"}},"required":["timezone"]}`)},
	{Name: "ping"},
	{Name: "search", Parameters: json.RawMessage(`{"type":"object","properties":{
		"query":{"type":"string"},"filters":{"type":"object","properties":{"lang":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}}},
		"exact":{"type":"boolean"}},"required":["query"]}`)},
}

// cityTool is a tool whose parameters are of three types, as the Qwen,
// GLM and DeepSeek cases call it.
var cityTool = Tool{
	Name:        "get_weather",
	Description: "Current weather in a city.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},"metric":{"type":"boolean"}},"required":["city"]}`),
}

// goldenCase is one realistic output of a family, in
// testdata/<family>/<name>.txt (less the file's last newline), and what
// its parser makes of it in testdata/<family>/<id>.golden.json.
type goldenCase struct {
	family    *Family
	name      string
	tools     []Tool
	thinking  bool // the prompt opened a thinking section
	truncated bool // the token limit cut the output
}

func (c goldenCase) id() string {
	id := c.name
	if c.thinking {
		id += ".thinking"
	}
	if c.truncated {
		id += ".truncated"
	}
	if len(c.tools) == 0 {
		id += ".notools"
	}
	return id
}

var (
	city    = []Tool{cityTool}
	cityNow = []Tool{cityTool, {Name: "now"}}
)

var goldenCases = []goldenCase{
	{family: qwen3, name: "think_text_calls", tools: city},
	{family: qwen3, name: "prompt_opened", thinking: true},
	{family: qwen3, name: "thinking_off", tools: city},
	{family: qwen35, name: "think_text_call", tools: city, thinking: true},
	{family: qwen35, name: "thinking_off", tools: city},
	{family: qwen35, name: "think_again", thinking: true},
	{family: qwen3Coder, name: "text_calls", tools: cityNow},
	{family: qwen3Coder, name: "no_thinking", tools: cityNow, thinking: true},
	{family: qwen3Coder, name: "cut-second-function", tools: cityNow, truncated: true},
	{family: hermes, name: "text_calls", tools: city},
	{family: hermes, name: "text_only"},
	{family: hermes, name: "think", tools: city},
	{family: hermes, name: "cut-in-close", tools: city, truncated: true},
	{family: deepSeekV3, name: "text_calls", tools: city},
	{family: deepSeekV3, name: "calls_unended", tools: city},
	{family: deepSeekV3, name: "text_only"},
	{family: deepSeekV3, name: "cut-second-call", tools: city, truncated: true},
	{family: deepSeekR1, name: "think_text_calls", tools: city},
	{family: deepSeekR1, name: "prompt_opened", thinking: true},
	{family: deepSeekV31, name: "think_text_call", tools: city, thinking: true},
	{family: deepSeekV31, name: "thinking_off", tools: city},
	{family: deepSeekV31, name: "cut-second-call", tools: city, truncated: true},
	{family: deepSeekV31, name: "cut-calls-end", tools: city, truncated: true},
	{family: glm45, name: "think_text_calls", tools: city},
	{family: glm45, name: "thinking_off", tools: city},
	{family: glm47, name: "think_text_call", tools: city, thinking: true},
	{family: glm47, name: "thinking_off", tools: city},

	{family: gptOSS, name: "think-answer", tools: testTools},
	{family: gptOSS, name: "think-call", tools: testTools},
	{family: gptOSS, name: "template-call", tools: testTools},
	{family: gptOSS, name: "preamble-call", tools: testTools},
	{family: gptOSS, name: "prompt-opened-thinking", tools: testTools, thinking: true},
	{family: gptOSS, name: "malformed-call", tools: testTools},
	{family: gptOSS, name: "cut-call", tools: testTools, truncated: true},
	{family: gptOSS, name: "cut-thinking", tools: testTools, truncated: true},

	{family: llama3, name: "bare-call", tools: testTools},
	{family: llama3, name: "python-tag-call", tools: testTools},
	{family: llama3, name: "two-calls", tools: testTools},
	{family: llama3, name: "answer", tools: testTools},
	{family: llama3, name: "json-answer", tools: testTools},
	{family: llama3, name: "bare-call"},
	{family: llama3, name: "malformed-call", tools: testTools},
	{family: llama3, name: "cut-call", tools: testTools, truncated: true},
	{family: llama3, name: "cut-bare-call", tools: testTools, truncated: true},
	{family: llama3, name: "cut-second-call", tools: testTools, truncated: true},

	{family: llama4, name: "bare-call", tools: testTools},
	{family: llama4, name: "python-start-call", tools: testTools},
	{family: llama4, name: "two-calls", tools: testTools},
	{family: llama4, name: "answer", tools: testTools},
	{family: llama4, name: "cut-call", tools: testTools, truncated: true},
	{family: llama4, name: "cut-second-call", tools: testTools, truncated: true},
	{family: llama4, name: "cut-python-end", tools: testTools, truncated: true},
	{family: llama4, name: "cut-json-answer", tools: testTools, truncated: true},

	{family: mistral, name: "calls", tools: testTools},
	{family: mistral, name: "text-call", tools: testTools},
	{family: mistral, name: "answer", tools: testTools},
	{family: mistral, name: "malformed-call", tools: testTools},
	{family: mistral, name: "cut-call", tools: testTools, truncated: true},
	{family: mistral, name: "cut-second-call", tools: testTools, truncated: true},
	{family: mistral, name: "cut-malformed-calls", tools: testTools, truncated: true},

	{family: ministral, name: "think-calls", tools: testTools},
	{family: ministral, name: "prompt-opened-thinking", tools: testTools, thinking: true},
	{family: ministral, name: "call-id", tools: testTools},
	{family: ministral, name: "answer", tools: testTools},
	{family: ministral, name: "malformed-call", tools: testTools},
	{family: ministral, name: "cut-call", tools: testTools, truncated: true},
	{family: ministral, name: "cut-second-call", tools: testTools, truncated: true},

	{family: granite33, name: "think-answer", tools: testTools},
	{family: granite33, name: "call", tools: testTools},
	{family: granite33, name: "cut-call", tools: testTools, truncated: true},
	{family: granite32, name: "think-answer", tools: testTools},
	{family: granite3, name: "calls", tools: testTools},
	{family: granite3, name: "malformed-call", tools: testTools},
	{family: granite3, name: "cut-third-call", tools: testTools, truncated: true},
	{family: granite4, name: "calls", tools: testTools},
	{family: granite4, name: "malformed-call", tools: testTools},
	{family: granite4, name: "cut-call", tools: testTools, truncated: true},

	{family: phi4Mini, name: "calls", tools: testTools},
	{family: phi4Mini, name: "list-call", tools: testTools},
	{family: phi4Mini, name: "answer", tools: testTools},
	{family: phi4Mini, name: "unclosed-call", tools: testTools},
	{family: phi4Mini, name: "malformed-call", tools: testTools},
	{family: phi4Mini, name: "cut-call", tools: testTools, truncated: true},
	{family: phi4Mini, name: "cut-list-call", tools: testTools, truncated: true},
	{family: phi4Reasoning, name: "think-answer", tools: testTools},
	{family: phi4Reasoning, name: "prompt-opened-thinking", tools: testTools, thinking: true},
	{family: phi4Reasoning, name: "thinking-off", tools: testTools},
	{family: phi4, name: "answer", tools: testTools},

	{family: gemma4, name: "think-two-calls", tools: testTools},
	{family: gemma4, name: "text-then-call", tools: testTools},
	{family: gemma4, name: "answer", tools: testTools},
	{family: gemma4, name: "thinking-opened", thinking: true},
	{family: gemma4, name: "malformed-call", tools: testTools},
	{family: gemma4, name: "truncated-call", tools: testTools, truncated: true},
	{family: gemma4, name: "unclosed-call", tools: testTools},
	{family: functionGemma, name: "call", tools: testTools},
	{family: functionGemma, name: "text", tools: testTools},
	{family: functionGemma, name: "malformed-call", tools: testTools},
	{family: functionGemma, name: "truncated-call", tools: testTools, truncated: true},
	{family: gemma3, name: "text"},
	{family: lfm2Thinking, name: "think-text-calls", tools: testTools},
	{family: lfm2, name: "answer", tools: testTools},
	{family: lfm2, name: "malformed-call", tools: testTools},
	{family: lfm2, name: "truncated-call", tools: testTools, truncated: true},
	{family: lfm2, name: "cut-second-call", tools: testTools, truncated: true},
	{family: olmo3, name: "calls", tools: testTools},
	{family: olmo3, name: "malformed-call", tools: testTools},
	{family: olmo3, name: "truncated-call", tools: testTools, truncated: true},
	{family: olmo3, name: "cut-second-call", tools: testTools, truncated: true},
	{family: olmo3Think, name: "think", thinking: true},
	{family: olmo3Think, name: "think-truncated", thinking: true, truncated: true},
	{family: nemotron, name: "think-call", tools: testTools, thinking: true},
	{family: nemotron, name: "think-into-call", tools: testTools, thinking: true},
	{family: nemotron, name: "no-think", tools: testTools},
	{family: nemotron, name: "malformed-call", tools: testTools},
	{family: nemotron, name: "truncated-call", tools: testTools, truncated: true},
}

// golden is a golden file: what the whole output yields.
type golden struct {
	Text      string `json:"text"`
	Reasoning string `json:"reasoning"`
	Calls     []Call `json:"calls"`
}

// stream pushes pieces through a new parser of f and gathers what it
// releases, checking that it releases whole UTF-8 characters.
func stream(t *testing.T, f *Family, cfg ParserConfig, pieces []string, truncated bool) Output {
	t.Helper()
	p := f.NewParser(cfg)
	var all Output
	add := func(o Output) {
		if !utf8.ValidString(o.Text) || !utf8.ValidString(o.Reasoning) {
			t.Fatalf("released a broken UTF-8 character: %+v", o)
		}
		all.Text += o.Text
		all.Reasoning += o.Reasoning
		all.Calls = append(all.Calls, o.Calls...)
	}
	for _, piece := range pieces {
		if !utf8.ValidString(piece) {
			t.Fatalf("piece %q cuts a character", piece)
		}
		add(p.Push(piece))
	}
	add(p.Flush(truncated))
	return all
}

// splits returns ways to stream s: whole, in two at every byte position
// that keeps UTF-8 whole, a character at a time, and in random pieces.
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
		for rest := s; rest != ""; {
			n := min(1+rng.IntN(8), len(rest))
			for n < len(rest) && !utf8.RuneStart(rest[n]) {
				n++
			}
			pieces = append(pieces, rest[:n])
			rest = rest[n:]
		}
		out = append(out, pieces)
	}
	return out
}

// sameOutput reports whether a and b release the same, no calls being
// the same however written.
func sameOutput(a, b Output) bool {
	if len(a.Calls) == 0 && len(b.Calls) == 0 {
		a.Calls, b.Calls = nil, nil
	}
	return reflect.DeepEqual(a, b)
}

// TestGolden streams each golden case through its family's parser,
// whole and split in every way splits gives, and checks each gives what
// its golden file holds.
func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.family.Name+"/"+c.id(), func(t *testing.T) {
			dir := filepath.Join("testdata", c.family.Name)
			in, err := os.ReadFile(filepath.Join(dir, c.name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			out := strings.TrimSuffix(string(in), "\n")
			cfg := ParserConfig{Tools: c.tools, Thinking: c.thinking}
			got := stream(t, c.family, cfg, []string{out}, c.truncated)
			path := filepath.Join(dir, c.id()+".golden.json")
			if *update {
				b, _ := json.MarshalIndent(golden(got), "", "  ")
				if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			var want golden
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			for _, pieces := range splits(out) {
				if got := stream(t, c.family, cfg, pieces, c.truncated); !sameOutput(got, Output(want)) {
					t.Fatalf("streamed as %q:\ngot  %+v\nwant %+v", pieces, got, want)
				}
			}
		})
	}
}

// TestNoToolsNoCalls: with no tools offered, every golden output that
// holds calls yields none, and its answer text keeps what it wrote as
// calls, in its text or, for a call written while thinking, its
// reasoning.
func TestNoToolsNoCalls(t *testing.T) {
	for _, c := range goldenCases {
		if len(c.tools) == 0 {
			continue
		}
		in, err := os.ReadFile(filepath.Join("testdata", c.family.Name, c.name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		out := strings.TrimSuffix(string(in), "\n")
		with := stream(t, c.family, ParserConfig{Tools: c.tools, Thinking: c.thinking}, []string{out}, c.truncated)
		if len(with.Calls) == 0 {
			continue
		}
		without := stream(t, c.family, ParserConfig{Thinking: c.thinking}, []string{out}, c.truncated)
		if len(without.Calls) != 0 || len(without.Text)+len(without.Reasoning) <= len(with.Text)+len(with.Reasoning) {
			t.Errorf("%s/%s without tools: %d calls and text %q (with tools: text %q)", c.family.Name, c.id(), len(without.Calls), without.Text, with.Text)
		}
	}
}
