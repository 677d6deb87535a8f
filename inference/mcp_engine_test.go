//go:build cgo

package inference_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/mcptest"
)

func mcpEngine(t *testing.T) *inference.Engine {
	t.Helper()
	return newEngine(t, inference.Config{Models: []catalog.Model{{ID: "tiny", Path: inferencetest.Model(t, inferencetest.Options{ContextLength: 4096})}},
		ContextTokens: 4096})
}

// mcpRequest forces a call of the tool named tool of the servers.
func mcpRequest(tool string, opts *inference.MCPOptions) inference.Request {
	zero := 0.0
	return inference.Request{Model: "tiny", Messages: []inference.Message{inference.Text(inference.RoleUser, "Echo hello, please.")},
		MaxTokens: 300, Temperature: &zero, NoThinking: true, MCP: opts,
		ToolChoice: inference.ToolChoice{Mode: inference.ToolFunction, Name: tool}}
}

// A forced call of an MCP tool: the engine lists the server's tools
// (announcing the listing before and after), runs the model's call,
// announces it, and the model goes on over the result, reading its
// first turn from the cache. Headers go with every request to the
// server.
func TestMCPCall(t *testing.T) {
	srv := mcptest.Serve(t, mcptest.Options{})
	e := mcpEngine(t)
	req := mcpRequest(mcptest.Echo, &inference.MCPOptions{MaxCalls: 1,
		Servers: []inference.MCPServer{{Label: "test", URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer mcp-secret"}}}})
	evs, res := stream(t, e, req)

	var kinds []string
	for _, ev := range evs {
		switch {
		case ev.MCPList != nil:
			kinds = append(kinds, "list "+string(ev.MCPList.Status))
		case ev.MCPCall != nil:
			kinds = append(kinds, "call "+string(ev.MCPCall.Status))
		}
		for _, c := range ev.ToolCalls {
			t.Errorf("the MCP call came out as a tool call: %+v", c)
		}
	}
	if len(kinds) < 4 || strings.Join(kinds[:4], ", ") != "list in_progress, list completed, call in_progress, call completed" {
		t.Errorf("events %v", kinds)
	}
	if len(res.MCPLists) != 1 || res.MCPLists[0].Status != inference.MCPCompleted || len(res.MCPLists[0].Tools) != 4 || res.MCPLists[0].Server != "test" {
		t.Fatalf("listings %+v", res.MCPLists)
	}
	if len(res.MCPCalls) == 0 {
		t.Fatal("no call")
	}
	c := res.MCPCalls[0]
	if c.Status != inference.MCPCompleted || c.Server != "test" || c.Name != mcptest.Echo || c.Output == "" || !strings.Contains(c.Arguments, c.Output) {
		t.Errorf("call %+v: want the echo of its argument", c)
	}
	if calls := srv.Calls(); len(calls) == 0 || calls[0] != mcptest.Echo {
		t.Errorf("the server ran %v", calls)
	}
	if res.Usage.MCPCalls != len(srv.Calls()) || res.Usage.CachedTokens == 0 {
		t.Errorf("usage %+v: the calls counted, the second turn's prefix cached", res.Usage)
	}
	for _, h := range srv.Headers() {
		if h.Get("Authorization") != "Bearer mcp-secret" {
			t.Errorf("a request to the server without its header: %v", h)
		}
	}
}

// Calls that misbehave fail or are cut, and the model reads why; a
// server that cannot be reached fails its listing, and the request
// goes on without its tools.
func TestMCPFailures(t *testing.T) {
	srv := mcptest.Serve(t, mcptest.Options{})
	e := mcpEngine(t)
	for _, tc := range []struct {
		tool    string
		timeout time.Duration
		status  inference.MCPStatus
		want    string // in the call's Output or Error
	}{
		{mcptest.Slow, time.Second, inference.MCPFailed, "ran past 1s"},
		{mcptest.Fail, time.Second, inference.MCPFailed, mcptest.FailText},
		// Its 4 MiB take a while to encode and decode under -race.
		{mcptest.Huge, time.Minute, inference.MCPCompleted, "cut to its first 100 characters"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			start := time.Now()
			_, res := stream(t, e, mcpRequest(tc.tool, &inference.MCPOptions{MaxCalls: 1, Timeout: tc.timeout, ResultChars: 100,
				Servers: []inference.MCPServer{{Label: "test", URL: srv.URL}}}))
			if len(res.MCPCalls) == 0 {
				t.Fatal("no call")
			}
			c := res.MCPCalls[0]
			if c.Status != tc.status || !strings.Contains(c.Output+c.Error, tc.want) {
				t.Errorf("call %+v, want %s with %q", c, tc.status, tc.want)
			}
			if len([]rune(c.Output)) > 200 {
				t.Errorf("output of %d characters, want at most 100 and the note", len([]rune(c.Output)))
			}
			if d := time.Since(start); d > tc.timeout+30*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		drop := mcptest.Serve(t, mcptest.Options{Drop: true})
		zero := 0.0
		req := inference.Request{Model: "tiny", Messages: []inference.Message{inference.Text(inference.RoleUser, "Hi")}, MaxTokens: 8, Temperature: &zero,
			MCP: &inference.MCPOptions{Timeout: 2 * time.Second, Servers: []inference.MCPServer{{Label: "dropped", URL: drop.URL}, {Label: "closed", URL: "http://127.0.0.1:1/mcp"}, {Label: "ok", URL: srv.URL}}}}
		_, res := stream(t, e, req)
		if len(res.MCPLists) != 3 || res.MCPLists[0].Status != inference.MCPFailed || res.MCPLists[1].Status != inference.MCPFailed ||
			res.MCPLists[2].Status != inference.MCPCompleted || res.MCPLists[0].Error == "" {
			t.Errorf("listings %+v", res.MCPLists)
		}
		if res.FinishReason == "" {
			t.Error("no answer")
		}
	})
}

// A call that needs approval ends the request, unrun; the next request,
// with the conversation that ends with it and an approval, runs it
// before its first turn, and one that declines answers the model so.
func TestMCPApproval(t *testing.T) {
	srv := mcptest.Serve(t, mcptest.Options{})
	e := mcpEngine(t)
	servers := []inference.MCPServer{{Label: "test", URL: srv.URL, Approval: inference.MCPApprovalRule{Default: true}}}
	_, res := stream(t, e, mcpRequest(mcptest.Echo, &inference.MCPOptions{Servers: servers}))
	if len(res.MCPCalls) != 1 || res.MCPCalls[0].Status != inference.MCPAwaitingApproval || res.FinishReason != inference.FinishToolCalls {
		t.Fatalf("calls %+v, finish %s: want one waiting", res.MCPCalls, res.FinishReason)
	}
	if len(srv.Calls()) != 0 {
		t.Fatalf("the server ran %v before approval", srv.Calls())
	}
	waiting := res.MCPCalls[0]
	history := []inference.Message{inference.Text(inference.RoleUser, "Echo hello, please."),
		{Role: inference.RoleAssistant, ToolCalls: []inference.ToolCall{{ID: waiting.ID, Name: waiting.Name, Arguments: waiting.Arguments}}}}
	zero := 0.0
	next := func(approve bool) inference.Result {
		_, res := stream(t, e, inference.Request{Model: "tiny", Messages: history, MaxTokens: 16, Temperature: &zero, NoThinking: true,
			MCP: &inference.MCPOptions{Servers: servers, Approvals: []inference.MCPApproval{{CallID: waiting.ID, Approve: approve, Reason: "not now"}}}})
		return res
	}
	res = next(true)
	if len(res.MCPCalls) == 0 || res.MCPCalls[0].ID != waiting.ID || res.MCPCalls[0].Status != inference.MCPCompleted || !strings.Contains(waiting.Arguments, res.MCPCalls[0].Output) {
		t.Errorf("approved: calls %+v", res.MCPCalls)
	}
	if calls := srv.Calls(); len(calls) != 1 || calls[0] != mcptest.Echo {
		t.Errorf("approved: the server ran %v", calls)
	}
	res = next(false)
	if len(res.MCPCalls) == 0 || res.MCPCalls[0].Status != inference.MCPDeclined || res.MCPCalls[0].Error != "not now" {
		t.Errorf("declined: calls %+v", res.MCPCalls)
	}
	if len(srv.Calls()) != 1 {
		t.Errorf("declined: the server ran %v", srv.Calls())
	}
	// An approval of no waiting call is refused before any work.
	_, err := e.Generate(context.Background(), inference.Request{Model: "tiny", Messages: history[:1], MaxTokens: 4,
		MCP: &inference.MCPOptions{Servers: servers, Approvals: []inference.MCPApproval{{CallID: waiting.ID, Approve: true}}}})
	var fe *inference.FieldError
	if !errors.As(err, &fe) || fe.Path.String() != "MCP.Approvals[0].CallID" {
		t.Errorf("an approval of nothing: %v", err)
	}
}

// Requests with MCP servers that are not valid are refused by Prepare,
// naming the field, before any connection.
func TestMCPOptionsChecked(t *testing.T) {
	e := mcpEngine(t)
	ok := inference.MCPServer{Label: "a", URL: "http://127.0.0.1:1/mcp"}
	for _, tc := range []struct {
		opts  inference.MCPOptions
		field string
	}{
		{inference.MCPOptions{}, "MCP.Servers"},
		{inference.MCPOptions{Servers: []inference.MCPServer{{Label: "a b", URL: ok.URL}}}, "MCP.Servers[0].Label"},
		{inference.MCPOptions{Servers: []inference.MCPServer{ok, ok}}, "MCP.Servers[1].Label"},
		{inference.MCPOptions{Servers: []inference.MCPServer{{Label: "a"}}}, "MCP.Servers[0]"},
		{inference.MCPOptions{Servers: []inference.MCPServer{{Label: "a", URL: "file:///etc/passwd"}}}, "MCP.Servers[0].URL"},
		{inference.MCPOptions{Servers: []inference.MCPServer{{Label: "a", URL: ok.URL, Headers: map[string]string{"X-A": "b\r\nX-B: c"}}}}, "MCP.Servers[0].Headers"},
		{inference.MCPOptions{Servers: []inference.MCPServer{ok}, MaxCalls: 33}, "MCP.MaxCalls"},
		{inference.MCPOptions{Servers: []inference.MCPServer{ok}, Timeout: time.Hour}, "MCP.Timeout"},
		{inference.MCPOptions{Servers: []inference.MCPServer{ok}, ResultChars: 5}, "MCP.ResultChars"},
	} {
		_, err := e.Prepare(context.Background(), inference.Request{Model: "tiny", Messages: []inference.Message{inference.Text(inference.RoleUser, "Hi")}, MCP: &tc.opts})
		var fe *inference.FieldError
		if !errors.As(err, &fe) || fe.Path.String() != tc.field {
			t.Errorf("%+v: %v, want a FieldError on %s", tc.opts, err, tc.field)
		}
	}
}

// The official MCP reference server, started by the engine as a
// command that speaks MCP on its standard input and output (as a
// library caller would): its tools are listed (those allowed: all of
// them would not fit in the tiny model's context), and a call of one
// runs.
func TestMCPEverythingStdio(t *testing.T) {
	argv := mcptest.EverythingCommand(t)
	e := mcpEngine(t)
	_, res := stream(t, e, mcpRequest("get-annotated-message", &inference.MCPOptions{MaxCalls: 1,
		Servers: []inference.MCPServer{{Label: "everything", Command: argv, AllowedTools: []string{"echo", "get-annotated-message", "get-sum"}}}}))
	if len(res.MCPLists) != 1 || res.MCPLists[0].Status != inference.MCPCompleted {
		t.Fatalf("listings %+v", res.MCPLists)
	}
	var names []string
	for _, tool := range res.MCPLists[0].Tools {
		names = append(names, tool.Name)
	}
	if len(names) != 3 || !slices.Contains(names, "echo") || !slices.Contains(names, "get-annotated-message") {
		t.Errorf("tools %v", names)
	}
	if len(res.MCPCalls) == 0 || res.MCPCalls[0].Status != inference.MCPCompleted || res.MCPCalls[0].Output == "" {
		t.Fatalf("calls %+v", res.MCPCalls)
	}
}
