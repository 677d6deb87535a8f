//go:build cgo

package inference_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

const personSchema = `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 12},
    "age": {"type": "integer", "minimum": 0, "maximum": 150},
    "role": {"enum": ["admin", "user", "guest"]},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 6}, "maxItems": 3}
  },
  "required": ["name", "age", "role"],
  "additionalProperties": false
}`

func compileSchema(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tinyThinker is a byte-level Qwen3 with random weights whose vocabulary
// has <think> and </think> as tokens of their own, and whose template
// (inferencetest.Qwen3Template) the engine recognises as of the qwen3 family: it thinks
// and calls tools.
func tinyThinker(t *testing.T) *inference.Engine {
	path := inferencetest.Model(t, inferencetest.Options{Arch: "qwen3", ChatTemplate: inferencetest.Qwen3Template})
	// Its template lists the tools: 2048 tokens hold them and an answer.
	return newEngine(t, inference.Config{Models: []catalog.Model{{ID: "tiny", Path: path}}, Parallel: 4, ContextTokens: 2048})
}

func TestTinyThinkerIsQwen3(t *testing.T) {
	if !strings.Contains(inferencetest.Qwen3Template, "enable_thinking") {
		t.Fatal("the generation prompt was not found in inferencetest.ChatML")
	}
	if got := tinyThinker(t).Models()[0].Family; got != "qwen3" {
		t.Fatalf("family %q, want qwen3", got)
	}
}

// With random weights the model writes noise; the grammar still makes
// every answer valid JSON of the schema, and it applies after thinking.
func TestFormatSchemaAlwaysValid(t *testing.T) {
	e := tinyThinker(t)
	schema := compileSchema(t, personSchema)
	one := 1.0
	for seed := range int64(12) {
		req := inference.Request{
			Model: "tiny", Messages: []inference.Message{inference.Text(inference.RoleUser, "Describe a person.")},
			MaxTokens: 600, Temperature: &one, TopK: ptr(0), TopP: ptr(1.0), MinP: ptr(0.0), Seed: &seed,
			Format: &inference.Format{Schema: []byte(personSchema)}, ThinkingBudget: 8,
		}
		var streamed strings.Builder
		var res inference.Result
		for ev, err := range e.Stream(context.Background(), req) {
			if err != nil {
				t.Fatal(err)
			}
			streamed.WriteString(ev.Text)
			if ev.Final != nil {
				res = *ev.Final
			}
		}
		if res.FinishReason != inference.FinishStop {
			t.Fatalf("seed %d: finish %q after %d tokens: the grammar should end the answer", seed, res.FinishReason, res.Usage.CompletionTokens)
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(res.Text)))
		if err != nil {
			t.Fatalf("seed %d: answer %q is not JSON: %v", seed, res.Text, err)
		}
		if err := schema.Validate(v); err != nil {
			t.Fatalf("seed %d: answer %s does not validate: %v", seed, res.Text, err)
		}
		if streamed.String() != res.Text {
			t.Fatalf("seed %d: streamed %q, final %q", seed, streamed.String(), res.Text)
		}
		if res.Timings.Thinking <= 0 || res.Timings.Thinking > res.Timings.Decode {
			t.Errorf("seed %d: thinking took %v of %v", seed, res.Timings.Thinking, res.Timings.Decode)
		}
		// qwen3's close text starts with "\n</think>": two tokens.
		if res.Usage.ReasoningTokens == 0 || res.Usage.ReasoningTokens > 8+2 {
			t.Errorf("seed %d: %d reasoning tokens, want 1..10 (budget 8, a newline and the closing marker)", seed, res.Usage.ReasoningTokens)
		}
	}
}

func TestFormatJSONObject(t *testing.T) {
	e := tinyThinker(t)
	one := 1.0
	for seed := range int64(6) {
		res, err := e.Generate(context.Background(), inference.Request{
			Model: "tiny", Prompt: "JSON:", MaxTokens: 800, Temperature: &one, Seed: &seed,
			Format: &inference.Format{JSON: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.FinishReason != inference.FinishStop {
			continue // a random object may outgrow the limit; what was written is still checked below
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(res.Text), &obj); err != nil {
			t.Fatalf("seed %d: %q is not a JSON object: %v", seed, res.Text, err)
		}
	}
}

func TestFormatErrors(t *testing.T) {
	e := tinyThinker(t)
	for name, f := range map[string]*inference.Format{
		"schema not JSON":  {Schema: []byte(`{"type":`)},
		"grammar unparsed": {Grammar: `root ::= "a" (`},
	} {
		_, err := e.Generate(context.Background(), inference.Request{Model: "tiny", Prompt: "x", MaxTokens: 4, Format: f})
		if !errors.Is(err, inference.ErrInvalidRequest) {
			t.Errorf("%s: %v, want ErrInvalidRequest", name, err)
		}
	}
}

// A thinking section opened by the prompt is reasoning; the budget closes
// it, and the model answers.
func TestThinkingBudget(t *testing.T) {
	e := tinyThinker(t)
	one := 1.0
	seed := int64(3)
	res, err := e.Generate(context.Background(), inference.Request{
		Model: "tiny", Prompt: "<|im_start|>assistant\n<think>\n", MaxTokens: 60, IgnoreEOS: true,
		Temperature: &one, Seed: &seed, ThinkingBudget: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	// qwen3's close text is "\n</think>\n\n": a newline and the marker
	// end the section, and the rest is white space before the answer.
	if res.Usage.ReasoningTokens != 12 {
		t.Errorf("%d reasoning tokens, want the budget of 10, a newline and the closing marker", res.Usage.ReasoningTokens)
	}
	if res.Text == "" || strings.Contains(res.Text, "</think>") || strings.Contains(res.Reasoning, "</think>") {
		t.Errorf("reasoning %q, text %q", res.Reasoning, res.Text)
	}
}

// A budget the caller gave is kept whole below the output limit, and one
// that leaves the answer no room is refused by name (Anthropic's rule).
func TestThinkingBudgetKeptOrRefused(t *testing.T) {
	e := tinyThinker(t)
	one := 1.0
	seed := int64(3)
	req := inference.Request{
		Model: "tiny", Prompt: "<|im_start|>assistant\n<think>\n", MaxTokens: 60, IgnoreEOS: true,
		Temperature: &one, Seed: &seed, ThinkingBudget: 50,
	}
	res, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.ReasoningTokens != 52 {
		t.Errorf("%d reasoning tokens, want the whole budget of 50, a newline and the closing marker", res.Usage.ReasoningTokens)
	}
	req.ThinkingBudget = 60
	var fe *inference.FieldError
	if _, err := e.Generate(context.Background(), req); !errors.As(err, &fe) || fe.Path.String() != "ThinkingBudget" {
		t.Errorf("a budget of the whole output limit: %v, want a FieldError naming ThinkingBudget", err)
	}
}

// Closing a thinking section adds tokens the model did not sample: they
// never take the output past MaxTokens.
func TestThinkingCloseWithinMaxTokens(t *testing.T) {
	e := tinyThinker(t)
	one := 1.0
	for maxTokens := 2; maxTokens <= 12; maxTokens++ {
		for seed := range int64(3) {
			res, err := e.Generate(context.Background(), inference.Request{
				Model: "tiny", Prompt: "<|im_start|>assistant\n<think>\n", MaxTokens: maxTokens,
				Temperature: &one, Seed: &seed, ThinkingBudget: 1, Format: &inference.Format{JSON: true},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Usage.CompletionTokens > maxTokens {
				t.Fatalf("MaxTokens %d, seed %d: %d completion tokens", maxTokens, seed, res.Usage.CompletionTokens)
			}
		}
	}
}
