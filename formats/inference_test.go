package formats_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/chat"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/formats/messages"
	"github.com/inferkit/inferkit/formats/responses"
	"github.com/inferkit/inferkit/inference"
)

// Inference passes the format and the reasoning on as the engine's
// Format, NoThinking, ThinkingBudget and Effort: the client's effort, not
// a style's default.
func TestInferenceMapping(t *testing.T) {
	tests := []struct {
		name       string
		parse      func([]byte) (formats.Request, error)
		body       string
		format     *inference.Format
		noThinking bool
		budget     int
		effort     string
	}{
		{"chat defaults: high effort, 3/4 of 2048", chat.Parse,
			`{"model":"m","messages":[{"role":"user","content":"x"}]}`, nil, false, 1536, ""},
		{"chat json, no reasoning", chat.Parse,
			`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json"},"reasoning":{"effort":"none"}}`,
			&inference.Format{JSON: true}, true, 0, ""},
		{"chat low effort, large limit", chat.Parse,
			`{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":100000,"reasoning":{"effort":"low"}}`, nil, false, 1024, "low"},
		{"chat reasoning_effort minimal", chat.Parse,
			`{"model":"m","messages":[{"role":"user","content":"x"}],"reasoning_effort":"minimal"}`, nil, false, 1024, "low"},
		{"chat reasoning_effort none", chat.Parse,
			`{"model":"m","messages":[{"role":"user","content":"x"}],"reasoning_effort":"none"}`, nil, true, 0, ""},
		{"messages output_config effort", messages.Parse,
			`{"model":"m","max_tokens":4000,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"output_config":{"effort":"medium"}}`,
			nil, false, 3000, "medium"},
		{"messages output_config effort max", messages.Parse,
			`{"model":"m","max_tokens":4000,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"output_config":{"effort":"max"}}`,
			nil, false, 3000, "high"},
		{"responses reasoning effort", responses.Parse,
			`{"model":"m","input":"x","max_output_tokens":100000,"reasoning":{"effort":"high"}}`, nil, false, 16384, "high"},
		{"messages thinking budget within the limit", messages.Parse,
			`{"model":"m","max_tokens":4000,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"thinking":{"type":"enabled","budget_tokens":2000}}`,
			nil, false, 2000, ""},
		{"messages default budget capped by the limit", messages.Parse,
			`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`, nil, false, 384, ""},
		{"messages thinking disabled", messages.Parse,
			`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"thinking":{"type":"disabled"}}`, nil, true, 0, ""},
		{"responses schema, medium effort", responses.Parse,
			`{"model":"m","input":"x","max_output_tokens":10000,"text":{"format":{"type":"json_schema","name":"p","schema":{"type":"object"}}}}`,
			&inference.Format{Schema: json.RawMessage(`{"type":"object"}`)}, false, 4096, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := tt.parse([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			got := req.Inference()
			if (got.Format == nil) != (tt.format == nil) ||
				got.Format != nil && (got.Format.JSON != tt.format.JSON || string(got.Format.Schema) != string(tt.format.Schema)) {
				t.Errorf("Format %+v, want %+v", got.Format, tt.format)
			}
			if got.NoThinking != tt.noThinking || got.ThinkingBudget != tt.budget {
				t.Errorf("NoThinking %v budget %d, want %v %d", got.NoThinking, got.ThinkingBudget, tt.noThinking, tt.budget)
			}
			if got.Effort != tt.effort {
				t.Errorf("Effort %q, want %q", got.Effort, tt.effort)
			}
		})
	}
}

// parallel_tool_calls false and disable_parallel_tool_use become the
// engine's single-call rule, and converters keep it.
func TestOneToolCall(t *testing.T) {
	const tools = `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`
	tests := []struct {
		name  string
		parse func([]byte) (formats.Request, error)
		body  string
		want  bool
	}{
		{"chat default", chat.Parse, `{"model":"m","messages":[{"role":"user","content":"x"}],` + tools + `}`, false},
		{"chat off", chat.Parse, `{"model":"m","messages":[{"role":"user","content":"x"}],"parallel_tool_calls":false,` + tools + `}`, true},
		{"responses off", responses.Parse, `{"model":"m","input":"x","parallel_tool_calls":false,"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}]}`, true},
		{"messages off", messages.Parse, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"any","disable_parallel_tool_use":true}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := tt.parse([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := req.Inference().ToolChoice.Single; got != tt.want {
				t.Errorf("Single = %v, want %v", got, tt.want)
			}
			for style, round := range map[string]func(formats.Request) (formats.Request, error){
				"chat": func(r formats.Request) (formats.Request, error) {
					return chat.Parse(formatstest.JSON(t, chat.NewRequest(r)))
				},
				"responses": func(r formats.Request) (formats.Request, error) {
					return responses.Parse(formatstest.JSON(t, responses.NewRequest(r)))
				},
				"messages": func(r formats.Request) (formats.Request, error) {
					return messages.Parse(formatstest.JSON(t, messages.NewRequest(r)))
				},
			} {
				back, err := round(req)
				if err != nil {
					t.Fatalf("%s: %v", style, err)
				}
				if back.OneToolCall != tt.want {
					t.Errorf("%s round trip: OneToolCall = %v", style, back.OneToolCall)
				}
			}
		})
	}
}

// The engine's refusal of an effort (a value it does not know, a model
// that does not think) names each style's effort parameter, as a 400.
func TestEffortFieldError(t *testing.T) {
	err := &inference.FieldError{Path: inference.Field("Effort"), Reason: "model \"m\" has no thinking"}
	for f, want := range map[formats.Style]string{formats.StyleChat: "reasoning_effort", formats.StyleMessages: "output_config.effort", formats.StyleResponses: "reasoning.effort"} {
		e := named(f, err)
		if e.Status != http.StatusBadRequest || e.Param != want {
			t.Errorf("style %d: %d %q, want 400 %q", f, e.Status, e.Param, want)
		}
	}
}
