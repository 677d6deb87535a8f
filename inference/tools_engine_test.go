//go:build cgo

package inference_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

var testTools = []inference.Tool{
	{Name: "get_weather", Description: "Current weather in a city.", Parameters: []byte(`{
		"type": "object",
		"properties": {"city": {"type": "string", "maxLength": 10}, "unit": {"enum": ["c", "f"]}},
		"required": ["city"], "additionalProperties": false}`)},
	{Name: "get_time", Description: "The time in a zone.", Parameters: []byte(`{
		"type": "object",
		"properties": {"zone": {"type": "string", "maxLength": 8}},
		"required": ["zone"], "additionalProperties": false}`)},
}

// A required or named tool call comes back as calls of offered tools whose
// arguments validate against the tool's schema, whatever the weights.
func TestToolChoiceForcesValidCalls(t *testing.T) {
	e := tinyThinker(t)
	schemas := map[string]*jsonschema.Schema{}
	for _, tool := range testTools {
		schemas[tool.Name] = compileSchema(t, string(tool.Parameters))
	}
	one := 1.0
	for _, choice := range []inference.ToolChoice{{Mode: inference.ToolRequired}, {Mode: inference.ToolFunction, Name: "get_time"}} {
		for seed := range int64(10) {
			req := inference.Request{
				Model: "tiny", Messages: []inference.Message{inference.Text(inference.RoleUser, "What time is it in Oslo?")},
				Tools: testTools, ToolChoice: choice, MaxTokens: 600, Temperature: &one, Seed: &seed, ThinkingBudget: 4,
			}
			var streamed []inference.ToolCall
			var res inference.Result
			for ev, err := range e.Stream(context.Background(), req) {
				if err != nil {
					t.Fatal(err)
				}
				streamed = append(streamed, ev.ToolCalls...)
				if ev.Final != nil {
					res = *ev.Final
				}
			}
			if res.FinishReason != inference.FinishToolCalls || len(res.ToolCalls) == 0 || len(streamed) != len(res.ToolCalls) {
				t.Fatalf("%v seed %d: finish %q, %d calls (%d streamed), text %q", choice, seed, res.FinishReason, len(res.ToolCalls), len(streamed), res.Text)
			}
			for _, c := range res.ToolCalls {
				schema := schemas[c.Name]
				if schema == nil || choice.Mode == inference.ToolFunction && c.Name != choice.Name {
					t.Fatalf("%v seed %d: call of %q", choice, seed, c.Name)
				}
				args, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(c.Arguments)))
				if err != nil {
					t.Fatalf("seed %d: arguments %q: %v", seed, c.Arguments, err)
				}
				if err := schema.Validate(args); err != nil {
					t.Fatalf("seed %d: arguments %s: %v", seed, c.Arguments, err)
				}
				if c.ID == "" {
					t.Errorf("seed %d: call without an id", seed)
				}
			}
		}
	}
}

func TestToolChoiceNoneHidesTools(t *testing.T) {
	// No template in the file: the engine's ChatML, which renders tools.
	tok := inferencetest.ByteLevel()
	tok.ChatTemplate = ""
	e := newEngine(t, inference.Config{Models: []catalog.Model{{ID: "tiny", Path: inferencetest.Model(t, inferencetest.Options{Tokenizer: tok})}}})
	req := inference.Request{Model: "tiny", Messages: []inference.Message{inference.Text(inference.RoleUser, "Hi")}, Tools: testTools}
	with, err := e.CountTokens(req)
	if err != nil {
		t.Fatal(err)
	}
	req.ToolChoice = inference.ToolChoice{Mode: inference.ToolNone}
	without, err := e.CountTokens(req)
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := e.CountTokens(inference.Request{Model: "tiny", Messages: req.Messages}); without != plain || with <= plain {
		t.Errorf("prompt tokens: %d with tools, %d with none, %d without tools", with, without, plain)
	}
}

func TestToolChoiceErrors(t *testing.T) {
	e := tinyThinker(t)
	msgs := []inference.Message{inference.Text(inference.RoleUser, "Hi")}
	for name, req := range map[string]inference.Request{
		"required without tools": {Model: "tiny", Messages: msgs, ToolChoice: inference.ToolChoice{Mode: inference.ToolRequired}},
		"unknown function":       {Model: "tiny", Messages: msgs, Tools: testTools, ToolChoice: inference.ToolChoice{Mode: inference.ToolFunction, Name: "nope"}},
		"unknown mode":           {Model: "tiny", Messages: msgs, Tools: testTools, ToolChoice: inference.ToolChoice{Mode: "sometimes"}},
		// Each tool's grammar is within bounds, all of them together
		// are not: the whole is refused before it reaches C.
		"tools past the grammar's bounds together": {Model: "tiny", Messages: msgs, Tools: manyWideTools(24), ToolChoice: inference.ToolChoice{Mode: inference.ToolRequired}},
	} {
		if _, err := e.Generate(context.Background(), req); !errors.Is(err, inference.ErrInvalidRequest) {
			t.Errorf("%s: %v, want ErrInvalidRequest", name, err)
		}
	}
}

// manyWideTools returns n tools of 600 required properties each with long
// names: each one's schema and grammar within bounds.
func manyWideTools(n int) []inference.Tool {
	tools := make([]inference.Tool, n)
	for i := range tools {
		var b bytes.Buffer
		b.WriteString(`{"type":"object","additionalProperties":false,"properties":{`)
		var req bytes.Buffer
		for p := range 600 {
			if p > 0 {
				b.WriteByte(',')
				req.WriteByte(',')
			}
			fmt.Fprintf(&b, `"property_with_a_rather_long_name_%04d":{"type":"integer"}`, p)
			fmt.Fprintf(&req, `"property_with_a_rather_long_name_%04d"`, p)
		}
		fmt.Fprintf(&b, `},"required":[%s]}`, req.String())
		tools[i] = inference.Tool{Name: fmt.Sprintf("tool_%d", i), Parameters: b.Bytes()}
	}
	return tools
}

// With Single, a required call is exactly one call, and the turn ends.
func TestToolChoiceSingle(t *testing.T) {
	e := tinyThinker(t)
	one := 1.0
	for seed := range int64(8) {
		res, err := e.Generate(context.Background(), inference.Request{
			Model: "tiny", Messages: []inference.Message{inference.Text(inference.RoleUser, "Weather?")},
			Tools: testTools, ToolChoice: inference.ToolChoice{Mode: inference.ToolRequired, Single: true},
			MaxTokens: 400, Temperature: &one, Seed: &seed, ThinkingBudget: 4,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.ToolCalls) != 1 || res.FinishReason != inference.FinishToolCalls {
			t.Fatalf("seed %d: %d calls, finish %q, text %q", seed, len(res.ToolCalls), res.FinishReason, res.Text)
		}
	}
}
