package messages

import (
	"testing"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
)

// TestThinkingBudget checks Anthropic's rule, a budget_tokens at or above
// max_tokens refused with a 400 naming it, a budget given kept whole (not
// cut to three quarters of max_tokens), and the default budget, 8192,
// fitted under max_tokens.
func TestThinkingBudget(t *testing.T) {
	for _, c := range []struct {
		body string
		want int // the engine's ThinkingBudget; -1: refused
	}{
		{`"thinking":{"type":"enabled","budget_tokens":8192}`, -1}, // the default max_tokens, 512
		{`"max_tokens":512,"thinking":{"type":"enabled","budget_tokens":512}`, -1},
		{`"max_tokens":512,"thinking":{"type":"enabled","budget_tokens":500}`, 500},
		{`"max_tokens":512,"thinking":{"type":"enabled","budget_tokens":100}`, 100},
		{`"max_tokens":512`, 384},
		{``, 384},
		{`"max_tokens":20000`, 8192},
		{`"max_tokens":20000,"thinking":{"type":"adaptive"}`, 8192},
		{`"max_tokens":2,"thinking":{"type":"enabled"}`, 1},
	} {
		body := `{"model":"m","messages":[{"role":"user","content":"hi"}]`
		if c.body != "" {
			body += "," + c.body
		}
		req, err := Parse([]byte(body + "}"))
		if c.want < 0 {
			if e := formats.ErrorOf(err); err == nil || e.Status != 400 || e.Param != "thinking.budget_tokens" {
				t.Errorf("%s: %v, want a 400 naming thinking.budget_tokens", c.body, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		if got := req.Inference().ThinkingBudget; got != c.want {
			t.Errorf("%s: budget %d, want %d", c.body, got, c.want)
		}
		// Written back, the request parses to the same budget.
		b, err := formats.Marshal(NewRequest(req))
		if err != nil {
			t.Fatal(err)
		}
		if back := formatstest.Parse(t, Parse, string(b)); back.Inference().ThinkingBudget != c.want {
			t.Errorf("%s: %s reads back with budget %d", c.body, b, back.Inference().ThinkingBudget)
		}
	}
}

// TestSamplingFields checks that the sampling parameters that /v1/models
// lists beyond Anthropic's own reach the engine's request, are written
// back, and are refused out of range with a 400 naming them.
func TestSamplingFields(t *testing.T) {
	req := formatstest.Parse(t, Parse, `{"model":"m","messages":[{"role":"user","content":"hi"}],
		"seed":7,"frequency_penalty":0.5,"presence_penalty":-0.5,"repetition_penalty":1.3}`)
	ir := req.Inference()
	if ir.Seed == nil || *ir.Seed != 7 || ir.FrequencyPenalty != 0.5 || ir.PresencePenalty != -0.5 || ir.RepetitionPenalty != 1.3 {
		t.Errorf("engine request %+v", ir)
	}
	b, _ := formats.Marshal(NewRequest(req))
	back := formatstest.Parse(t, Parse, string(b)).Inference()
	if back.Seed == nil || *back.Seed != 7 || back.FrequencyPenalty != 0.5 || back.PresencePenalty != -0.5 || back.RepetitionPenalty != 1.3 {
		t.Errorf("%s reads back as %+v", b, back)
	}
	for field, bad := range map[string]string{"seed": `"x"`, "frequency_penalty": "3", "presence_penalty": "-3", "repetition_penalty": "2.5"} {
		_, err := Parse([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"` + field + `":` + bad + `}`))
		if e := formats.ErrorOf(err); err == nil || e.Status != 400 || e.Param != field {
			t.Errorf("%s %s: %v, want a 400 naming it", field, bad, err)
		}
	}
}

// A request with the MCP connector's mcp_servers is refused with a 400
// naming it: this style does not run MCP tools yet, and a field that
// would be dropped is refused, not ignored.
func TestMCPServersRefused(t *testing.T) {
	_, err := Parse([]byte(`{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}],"mcp_servers":[{"type":"url","url":"https://mcp.example/sse","name":"x"}]}`))
	if e := formats.ErrorOf(err); err == nil || e.Status != 400 || e.Param != "mcp_servers" {
		t.Errorf("mcp_servers: %v, want a 400 naming it", err)
	}
	if _, err := Parse([]byte(`{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}],"mcp_servers":null}`)); err != nil {
		t.Errorf("mcp_servers null: %v", err)
	}
}
