//go:build cgo

package inference_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// familyModels are tiny models of each model family that llama.cpp loads:
// the family's real chat template (internal/family/testdata/templates,
// whose README gives each one's source) in a GGUF of an architecture
// inferencetest writes, under which the registry recognises that family.
// Most families match by template alone, so a llama carries them; Qwen3
// and Gemma 3 keep to their architectures. The vocabulary is the default
// byte-level one, in which a family's markers are ordinary bytes: the
// tool grammar forces the family's exact syntax and its parser reads it
// back, which is what these tests check.
//
// Families left out, and why:
//   - nemotron: Match needs a nemotron_h architecture, which inferencetest
//     does not write (under llama its template is qwen3.5's kind).
//   - olmo3, olmo3-think: Match needs olmo2 or olmo3, which inferencetest
//     does not write; and only hand-written excerpts of their templates
//     are at hand.
//   - lfm2, lfm2-thinking, functiongemma: only hand-written excerpts of
//     their templates are at hand, not the real ones.
var familyModels = []struct {
	family, file, arch string
	// tools: the family calls tools; else a request with tools is refused.
	tools bool
	// thinks: the family thinks. onOnly and offOnly are text the rendered
	// prompt holds with thinking on, or off, and not the other way: the
	// family's Thinking.Vars at work ("" where its template has no
	// switch and the engine alone switches thinking off).
	thinks          bool
	onOnly, offOnly string
	// reasons: the engine can open a thinking section before a
	// constrained answer (the family's close marker is </x> or [/X]), or
	// the prompt opens one, so a random model reasons until its budget is
	// spent. Families whose section only the model opens (gpt-oss's
	// analysis channel, Gemma 4's thought channel, Granite's prose
	// markers) are checked through the prompt alone.
	reasons bool
}{
	{family: "qwen3", file: "qwen3.jinja", arch: "qwen3", tools: true, thinks: true, offOnly: "</think>", reasons: true},
	{family: "qwen3.5", file: "qwen3.5-4b.jinja", arch: "qwen3", tools: true, thinks: true, offOnly: "</think>", reasons: true},
	{family: "qwen3-coder", file: "qwen3-coder-30b.jinja", arch: "qwen3", tools: true},
	{family: "hermes", file: "qwen2.5.jinja", arch: "llama", tools: true},
	{family: "deepseek-v3", file: "deepseek-v3.jinja", arch: "llama", tools: true},
	{family: "deepseek-r1", file: "deepseek-r1.jinja", arch: "llama", tools: true, thinks: true, reasons: true},
	{family: "deepseek-v3.1", file: "deepseek-v3.1.jinja", arch: "llama", tools: true, thinks: true, onOnly: "<think>", offOnly: "</think>", reasons: true},
	{family: "glm-4.5", file: "glm-4.6.jinja", arch: "llama", tools: true, thinks: true, offOnly: "/nothink", reasons: true},
	{family: "glm-4.7", file: "glm-4.7-flash.jinja", arch: "llama", tools: true, thinks: true, onOnly: "<think>", offOnly: "</think>", reasons: true},
	{family: "gpt-oss", file: "gpt-oss-20b.jinja", arch: "llama", tools: true, thinks: true, onOnly: "Reasoning: medium", offOnly: "Reasoning: low"},
	{family: "llama3", file: "llama3.1-8b.jinja", arch: "llama", tools: true},
	{family: "llama4", file: "llama4.jinja", arch: "llama", tools: true},
	{family: "mistral", file: "mistral-7b-instruct-v0.3.jinja", arch: "llama", tools: true},
	{family: "ministral", file: "ministral-3-14b-instruct-2512.jinja", arch: "llama", tools: true, thinks: true, reasons: true},
	{family: "granite3", file: "granite3.1-moe-1b.jinja", arch: "llama", tools: true},
	{family: "granite3.2", file: "granite3.2-8b.jinja", arch: "llama", tools: true, thinks: true, onOnly: "thinking process"},
	{family: "granite3.3", file: "granite3.3-2b.jinja", arch: "llama", tools: true, thinks: true, onOnly: "thinking process"},
	{family: "granite4", file: "granite4.jinja", arch: "llama", tools: true},
	{family: "phi4", file: "phi4.jinja", arch: "llama"},
	{family: "phi4-mini", file: "phi4-mini.jinja", arch: "llama", tools: true},
	{family: "phi4-reasoning", file: "phi4-reasoning.jinja", arch: "llama", thinks: true, reasons: true},
	{family: "gemma3", file: "gemma3.jinja", arch: "gemma3"},
	// Gemma 4's template is its own family's under any architecture.
	{family: "gemma4", file: "gemma4-31b.jinja", arch: "gemma3", tools: true, thinks: true, onOnly: "<|think|>", offOnly: "<|channel>thought\n<channel|>"},
	// The architectures the pinned llama.cpp does not load, on Ollama's Go
	// engine: its grammar, sampler and tokenizer under the family's.
	{family: "qwen3.5", file: "qwen3.5-4b.jinja", arch: "qwen35", tools: true, thinks: true, offOnly: "</think>", reasons: true},
	{family: "gemma4", file: "gemma4-31b.jinja", arch: "gemma4", tools: true, thinks: true, onOnly: "<|think|>", offOnly: "<|channel>thought\n<channel|>"},
}

// familyTools are the tools offered to the family models, of the
// parameters real tools have: a string bounded by maxLength, an enum of
// strings, an integer of a range. Every family's grammar follows them,
// the tagged formats (Qwen3-Coder's and Qwen3.5's <parameter=...>, GLM's
// <arg_value>) and Gemma 4's call:NAME{...}, which write a string bare or
// between their own delimiters, as well as those that write JSON: so a
// model of random weights ends each value, and its calls validate.
var familyTools = []inference.Tool{
	{Name: "get_weather", Description: "Current weather in a city.", Parameters: []byte(`{
		"type": "object",
		"properties": {
			"city": {"type": "string", "maxLength": 12},
			"unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
			"days": {"type": "integer", "minimum": 1, "maximum": 14}},
		"required": ["city", "unit"], "additionalProperties": false}`)},
	{Name: "get_time", Description: "The time in a zone.", Parameters: []byte(`{
		"type": "object",
		"properties": {"zone": {"type": "string", "enum": ["UTC", "CET", "JST"]}},
		"required": ["zone"], "additionalProperties": false}`)},
}

// TestFamilyModels runs a tiny model of each family through the engine:
// the family is recognised; a required tool call and a named one come
// back parsed, as calls of offered tools whose arguments validate against
// their schemas; the prompt shows the tools; thinking switches on and off through the template, and a
// thinking budget splits the output into reasoning and the answer.
func TestFamilyModels(t *testing.T) {
	schemas := map[string]*jsonschema.Schema{}
	for _, tool := range familyTools {
		schemas[tool.Name] = compileSchema(t, string(tool.Parameters))
	}
	checkCalls := func(t *testing.T, res inference.Result, name string) {
		t.Helper()
		if len(res.ToolCalls) == 0 || name != "" && len(res.ToolCalls) != 1 {
			t.Fatalf("%d calls (finish %q), text %q, reasoning %q", len(res.ToolCalls), res.FinishReason, res.Text, res.Reasoning)
		}
		for _, c := range res.ToolCalls {
			schema := schemas[c.Name]
			if schema == nil || name != "" && c.Name != name {
				t.Fatalf("a call of %q", c.Name)
			}
			args, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(c.Arguments)))
			if err != nil {
				t.Fatalf("%s arguments %q: %v", c.Name, c.Arguments, err)
			}
			if err := schema.Validate(args); err != nil {
				t.Fatalf("%s arguments %s: %v", c.Name, c.Arguments, err)
			}
		}
	}
	msgs := []inference.Message{inference.Text(inference.RoleUser, "What time is it in Oslo?")}
	one := 1.0
	for _, tt := range familyModels {
		t.Run(tt.family+"/"+tt.arch, func(t *testing.T) {
			tmpl, err := os.ReadFile(filepath.Join("..", "internal", "family", "testdata", "templates", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			path := inferencetest.Model(t, inferencetest.Options{Arch: tt.arch, ChatTemplate: string(tmpl), ContextLength: 4096, Seed: 3})
			e := newEngine(t, inference.Config{Models: []catalog.Model{{ID: "m", Path: path}}, ContextTokens: 4096})
			if got := e.Models()[0].Family; got != tt.family {
				t.Fatalf("family %q, want %q", got, tt.family)
			}
			if got, goEngine := e.Models()[0].Backend, tt.arch == "qwen35" || tt.arch == "gemma4"; goEngine != (got == "ollama") {
				t.Errorf("backend %q", got)
			}
			seed := int64(1)
			req := func(r inference.Request) inference.Request {
				r.Model, r.Messages, r.Temperature, r.Seed = "m", msgs, &one, &seed
				if r.MaxTokens == 0 {
					r.MaxTokens = 600
				}
				return r
			}
			generate := func(t *testing.T, r inference.Request) inference.Result {
				t.Helper()
				res, err := e.Generate(context.Background(), req(r))
				if err != nil {
					t.Fatal(err)
				}
				return res
			}

			if !tt.tools {
				_, err := e.Prepare(context.Background(), req(inference.Request{Tools: familyTools, ToolChoice: inference.ToolChoice{Mode: inference.ToolRequired}}))
				var fe *inference.FieldError
				if !errors.As(err, &fe) || fe.Path.String() != "Tools" {
					t.Errorf("a required call: %v, want a FieldError on Tools", err)
				}
			} else {
				t.Run("required", func(t *testing.T) {
					checkCalls(t, generate(t, inference.Request{Tools: familyTools, ToolChoice: inference.ToolChoice{Mode: inference.ToolRequired}, NoThinking: true}), "")
				})
				t.Run("named", func(t *testing.T) {
					checkCalls(t, generate(t, inference.Request{Tools: familyTools, ToolChoice: inference.ToolChoice{Mode: inference.ToolFunction, Name: "get_time"}, NoThinking: true}), "get_time")
				})
			}

			if tt.tools {
				// The model is shown its tools: by its template, or by its
				// family's Tools.Present where the template lists none.
				prompt, err := e.RenderPrompt(req(inference.Request{Tools: familyTools}))
				if err != nil {
					t.Fatal(err)
				}
				for _, want := range []string{"get_weather", "city", "unit", "days", "get_time", "zone"} {
					if !strings.Contains(prompt, want) {
						t.Errorf("%q is not in the prompt with tools:\n%s", want, prompt)
					}
				}
			}

			on, err := e.RenderPrompt(req(inference.Request{}))
			if err != nil {
				t.Fatal(err)
			}
			off, err := e.RenderPrompt(req(inference.Request{NoThinking: true}))
			if err != nil {
				t.Fatal(err)
			}
			if !tt.thinks {
				if on != off {
					t.Errorf("NoThinking changed the prompt of a family that does not think:\n%q\n%q", on, off)
				}
				if _, err := e.Prepare(context.Background(), req(inference.Request{ThinkingBudget: 8})); err == nil {
					t.Error("a thinking budget was accepted")
				}
				return
			}
			t.Run("thinking", func(t *testing.T) {
				if tt.onOnly == "" && tt.offOnly == "" && on != off {
					t.Errorf("the family has no thinking switch, and NoThinking changed the prompt:\n%q\n%q", on, off)
				}
				for _, c := range []struct{ has, lacks, marker string }{{on, off, tt.onOnly}, {off, on, tt.offOnly}} {
					if c.marker != "" && (!strings.Contains(c.has, c.marker) || strings.Contains(c.lacks, c.marker)) {
						t.Errorf("%q is not in one prompt only:\non  %q\noff %q", c.marker, on, off)
					}
				}
				// Thinking off: the engine closes any section at once.
				r := inference.Request{Format: &inference.Format{JSON: true}, NoThinking: true}
				if tt.tools {
					r = inference.Request{Tools: familyTools, ToolChoice: inference.ToolChoice{Mode: inference.ToolFunction, Name: "get_weather"}, NoThinking: true}
				}
				res := generate(t, r)
				if res.Reasoning != "" || res.Usage.ReasoningTokens != 0 {
					t.Errorf("thinking off: reasoning %q (%d tokens)", res.Reasoning, res.Usage.ReasoningTokens)
				}
				if !tt.reasons {
					return
				}
				// Thinking on, with a budget: the section opens, the budget
				// closes it, and the constrained answer follows.
				r.NoThinking, r.ThinkingBudget, r.MaxTokens = false, 6, 300
				res = generate(t, r)
				if res.Reasoning == "" || res.Usage.ReasoningTokens == 0 {
					t.Fatalf("thinking on: no reasoning; text %q, %d calls", res.Text, len(res.ToolCalls))
				}
				if tt.tools {
					checkCalls(t, res, "get_weather")
				} else if res.Text == "" || res.Text[0] != '{' {
					t.Errorf("thinking on: answer %q after reasoning %q", res.Text, res.Reasoning)
				}
			})
		})
	}
}
