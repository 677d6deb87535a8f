//go:build cgo

package inference_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// plainChatML is ChatML without tools or thinking: a template that no
// family recognises.
const plainChatML = `{%- for message in messages -%}
{{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}`

// familyEngine serves three tiny models: "plain", whose template no
// family recognises; "hermes", with inferencetest's ChatML (the engine's
// own); and "qwen3", a tiny Qwen3 (see tinyThinker).
func familyEngine(t *testing.T) *inference.Engine {
	return newEngine(t, inference.Config{Models: []catalog.Model{
		{ID: "plain", Path: inferencetest.Model(t, inferencetest.Options{ChatTemplate: plainChatML, Seed: 2})},
		{ID: "hermes", Path: inferencetest.Model(t, inferencetest.Options{Seed: 2})},
		{ID: "qwen3", Path: inferencetest.Model(t, inferencetest.Options{Arch: "qwen3", ChatTemplate: inferencetest.Qwen3Template, Seed: 2})},
	}, ContextTokens: 1024})
}

func TestModelInfoFamily(t *testing.T) {
	want := map[string]string{"plain": "", "hermes": "hermes", "qwen3": "qwen3"}
	for _, info := range familyEngine(t).Models() {
		if info.Family != want[info.ID] {
			t.Errorf("%s: family %q, want %q", info.ID, info.Family, want[info.ID])
		}
	}
}

// A request that needs what the model's family lacks fails before it
// runs, with a FieldError naming the field; thinking switched off, or a
// wire format's default budget, asks for nothing.
func TestFamilyRefusals(t *testing.T) {
	e := familyEngine(t)
	msgs := []inference.Message{inference.Text(inference.RoleUser, "Hi")}
	for _, tt := range []struct {
		name  string
		req   inference.Request
		field string // "" for a request that prepares
	}{
		{"unrecognised template with tools", inference.Request{Model: "plain", Messages: msgs, Tools: testTools}, "Tools"},
		{"unrecognised template with a required call", inference.Request{Model: "plain", Messages: msgs, Tools: testTools, ToolChoice: inference.ToolChoice{Mode: inference.ToolRequired}}, "Tools"},
		{"unrecognised template, tools hidden", inference.Request{Model: "plain", Messages: msgs, Tools: testTools, ToolChoice: inference.ToolChoice{Mode: inference.ToolNone}}, ""},
		{"unrecognised template with a thinking budget", inference.Request{Model: "plain", Messages: msgs, ThinkingBudget: 8}, "ThinkingBudget"},
		{"unrecognised template without thinking", inference.Request{Model: "plain", Messages: msgs, NoThinking: true}, ""},
		{"a family that does not think, with a budget", inference.Request{Model: "hermes", Messages: msgs, ThinkingBudget: 8}, "ThinkingBudget"},
		{"a family that does not think, a default budget", inference.Request{Model: "hermes", Messages: msgs, ThinkingBudget: 8, ThinkingDefaults: true}, ""},
		{"a family that does not think, with tools", inference.Request{Model: "hermes", Messages: msgs, Tools: testTools}, ""},
		{"a family that thinks, with a budget", inference.Request{Model: "qwen3", Messages: msgs, Tools: testTools, ThinkingBudget: 8}, ""},
		{"a family that does not think, with an effort", inference.Request{Model: "hermes", Messages: msgs, Effort: "high"}, "Effort"},
		{"unrecognised template with an effort", inference.Request{Model: "plain", Messages: msgs, Effort: "low"}, "Effort"},
		{"a family that does not think, a default effort", inference.Request{Model: "hermes", Messages: msgs, Effort: "high", ThinkingDefaults: true}, ""},
		{"a family that thinks, with an effort", inference.Request{Model: "qwen3", Messages: msgs, Effort: "low"}, ""},
		{"an effort of no level", inference.Request{Model: "qwen3", Messages: msgs, Effort: "max"}, "Effort"},
		{"an effort of no level, by default", inference.Request{Model: "hermes", Messages: msgs, Effort: "none", ThinkingDefaults: true}, "Effort"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := e.Prepare(context.Background(), tt.req)
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tt.req.ThinkingDefaults && (p.Request.ThinkingBudget != 0 || p.Request.Effort != "") {
					t.Errorf("the default budget %d or effort %q was kept", p.Request.ThinkingBudget, p.Request.Effort)
				}
				return
			}
			var fe *inference.FieldError
			if !errors.As(err, &fe) || fe.Path.String() != tt.field || !errors.Is(err, inference.ErrInvalidRequest) {
				t.Fatalf("%v, want a FieldError on %s", err, tt.field)
			}
		})
	}
}

// A model whose template no family recognises chats in plain text: what
// it writes is all answer, markers included, and it never thinks.
func TestUnrecognisedTemplateChats(t *testing.T) {
	e := familyEngine(t)
	one := 1.0
	for seed := range int64(4) {
		res, err := e.Generate(context.Background(), inference.Request{
			Model: "plain", Messages: []inference.Message{inference.Text(inference.RoleUser, "Hi")},
			MaxTokens: 40, IgnoreEOS: true, Temperature: &one, Seed: &seed,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Text == "" || res.Reasoning != "" || res.Usage.ReasoningTokens != 0 || len(res.ToolCalls) != 0 {
			t.Fatalf("seed %d: text %q, reasoning %q (%d tokens), %d calls", seed, res.Text, res.Reasoning, res.Usage.ReasoningTokens, len(res.ToolCalls))
		}
	}
	// A prompt that opens a thinking section opens none: the marker is text.
	res, err := e.Generate(context.Background(), inference.Request{Model: "plain", Prompt: "<|im_start|>assistant\n<think>\n", MaxTokens: 8, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reasoning != "" || res.Usage.ReasoningTokens != 0 {
		t.Errorf("reasoning %q (%d tokens)", res.Reasoning, res.Usage.ReasoningTokens)
	}
}

// The family's thinking switch reaches the template: NoThinking makes the
// qwen3 template close an empty section, and the model answers.
func TestFamilyThinkingSwitch(t *testing.T) {
	e := familyEngine(t)
	msgs := []inference.Message{inference.Text(inference.RoleUser, "Hi")}
	off, err := e.RenderPrompt(inference.Request{Model: "qwen3", Messages: msgs, NoThinking: true})
	if err != nil {
		t.Fatal(err)
	}
	on, err := e.RenderPrompt(inference.Request{Model: "qwen3", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(off, "<think>\n\n</think>\n\n") || strings.Contains(on, "<think>") {
		t.Errorf("thinking off renders %q, on %q", off, on)
	}
	// A family that does not think gets no switch.
	plain, err := e.RenderPrompt(inference.Request{Model: "plain", Messages: msgs, NoThinking: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain, "think") {
		t.Errorf("plain renders %q", plain)
	}
}

// The effort reaches the family's template: gpt-oss's reasoning_effort,
// medium by the template's default, low with thinking off.
func TestGptOSSEffort(t *testing.T) {
	tmpl, err := os.ReadFile(filepath.Join("..", "internal", "family", "testdata", "templates", "gpt-oss-20b.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, inference.Config{Models: []catalog.Model{
		{ID: "m", Path: inferencetest.Model(t, inferencetest.Options{ChatTemplate: string(tmpl), ContextLength: 1024, Seed: 2})},
	}, ContextTokens: 1024})
	if got := e.Models()[0].Family; got != "gpt-oss" {
		t.Fatalf("family %q", got)
	}
	msgs := []inference.Message{inference.Text(inference.RoleUser, "Hi")}
	for _, tt := range []struct {
		effort     string
		noThinking bool
		want       string
	}{
		{"", false, "Reasoning: medium"},
		{"low", false, "Reasoning: low"},
		{"medium", false, "Reasoning: medium"},
		{"high", false, "Reasoning: high"},
		{"high", true, "Reasoning: low"},
	} {
		req := inference.Request{Model: "m", Messages: msgs, Effort: tt.effort, NoThinking: tt.noThinking}
		if _, err := e.Prepare(context.Background(), req); err != nil {
			t.Fatalf("effort %q: %v", tt.effort, err)
		}
		prompt, err := e.RenderPrompt(req)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(prompt, tt.want) {
			t.Errorf("effort %q, no thinking %v: the prompt lacks %q:\n%s", tt.effort, tt.noThinking, tt.want, prompt)
		}
	}
}

// Search is a tool call in the family's format: a model without one
// cannot search.
func TestSearchNeedsFamilyTools(t *testing.T) {
	e := newEngine(t, inference.Config{Models: []catalog.Model{{ID: "plain", Path: inferencetest.Model(t, inferencetest.Options{ChatTemplate: plainChatML})}},
		ContextTokens: 1024, Search: &fakeSearch{results: paris}})
	if e.Models()[0].WebSearch {
		t.Error("WebSearch on a model without tools")
	}
	_, err := e.Prepare(context.Background(), inference.Request{Model: "plain", Messages: []inference.Message{inference.Text(inference.RoleUser, "Hi")}, Search: &inference.SearchOptions{}})
	var fe *inference.FieldError
	if !errors.As(err, &fe) || fe.Path.String() != "Search" {
		t.Fatalf("%v, want a FieldError on Search", err)
	}
}
