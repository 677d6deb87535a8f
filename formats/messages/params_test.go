package messages

import (
	"testing"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/inference"
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

// The MCP connector's mcp_servers become the engine's MCP servers: the
// name its label, the token a bearer Authorization header, the allowed
// tools; a disabled server is left out, and a tool_choice may name a
// tool of the servers, which are listed when the request runs. Servers
// that are not valid, or beside the web search tool, are a 400 naming
// the field.
func TestMCPServers(t *testing.T) {
	req := formatstest.Parse(t, Parse, `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"tool","name":"echo"},
		"mcp_servers":[{"type":"url","url":"https://mcp.example/mcp","name":"ex","authorization_token":"tok","tool_configuration":{"allowed_tools":["echo"]}},
		{"type":"url","url":"https://off.example/mcp","name":"off","tool_configuration":{"enabled":false}}]}`)
	ir := req.Inference()
	if ir.MCP == nil || len(ir.MCP.Servers) != 1 {
		t.Fatalf("MCP %+v", ir.MCP)
	}
	s := ir.MCP.Servers[0]
	if s.Label != "ex" || s.URL != "https://mcp.example/mcp" || s.Headers["Authorization"] != "Bearer tok" || len(s.AllowedTools) != 1 || s.Approval.Default {
		t.Errorf("server %+v", s)
	}
	if ir.ToolChoice.Mode != inference.ToolFunction || ir.ToolChoice.Name != "echo" {
		t.Errorf("tool choice %+v", ir.ToolChoice)
	}
	for param, body := range map[string]string{
		"mcp_servers[0].type": `[{"type":"sse","url":"https://a/mcp","name":"a"}]`,
		"mcp_servers[0].url":  `[{"type":"url","name":"a"}]`,
		"mcp_servers[0].name": `[{"type":"url","url":"https://a/mcp"}]`,
	} {
		_, err := Parse([]byte(`{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}],"mcp_servers":` + body + `}`))
		if e := formats.ErrorOf(err); err == nil || e.Status != 400 || e.Param != param {
			t.Errorf("%s: %v, want a 400 naming %s", body, err, param)
		}
	}
	_, err := Parse([]byte(`{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"web_search_20250305","name":"web_search"}],
		"mcp_servers":[{"type":"url","url":"https://a/mcp","name":"a"}]}`))
	if e := formats.ErrorOf(err); err == nil || e.Param != "mcp_servers" {
		t.Errorf("with web search: %v", err)
	}
	// An answer given back: its call and result become the call and the
	// tool message the model read, and the text after it a message of
	// its own.
	req = formatstest.Parse(t, Parse, `{"model":"m","max_tokens":8,"mcp_servers":[{"type":"url","url":"https://a/mcp","name":"a"}],"messages":[
		{"role":"user","content":"hi"},
		{"role":"assistant","content":[{"type":"text","text":"Let me see."},{"type":"mcp_tool_use","id":"mcptoolu_1","name":"echo","server_name":"a","input":{"text":"x"}},
			{"type":"mcp_tool_result","tool_use_id":"mcptoolu_1","is_error":false,"content":[{"type":"text","text":"x"}]},{"type":"text","text":"It says x."}]},
		{"role":"user","content":"thanks"}]}`)
	msgs := req.Inference().Messages
	if len(msgs) != 5 || len(msgs[1].ToolCalls) != 1 || msgs[1].ToolCalls[0].Name != "echo" || msgs[2].Role != inference.RoleTool ||
		msgs[2].ToolCallID != "mcptoolu_1" || msgs[2].Content[0].Text != "x" || msgs[3].Content[0].Text != "It says x." {
		t.Errorf("messages %+v", msgs)
	}
}
