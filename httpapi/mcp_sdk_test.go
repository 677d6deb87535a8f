//go:build cgo

package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/mcptest"
	"github.com/inferkit/inferkit/policy"
)

// mcpServer serves the tiny model with srv's URL allowed as an MCP
// server.
func mcpServer(t *testing.T, allow string) string {
	t.Helper()
	m, _ := policy.Model(policy.Core25Mini)
	m.Path = tinyModel(t)
	models := []catalog.Model{m}
	return serveEngine(t, inference.Config{Models: models, ContextTokens: 4096},
		httpapi.Config{Models: models, MCPAllow: []string{allow}}, "")
}

// mcpRequest asks, through the responses style, for a forced call of
// the echo tool of the server at url.
func mcpResponsesRequest(url, approval string) responses.ResponseNewParams {
	tool := responses.ToolMcpParam{ServerLabel: "test", ServerURL: openai.String(url), Headers: map[string]string{"X-Secret": "secret-value"},
		AllowedTools:    responses.ToolMcpAllowedToolsUnionParam{OfMcpAllowedTools: []string{mcptest.Echo}},
		RequireApproval: responses.ToolMcpRequireApprovalUnionParam{OfMcpToolApprovalSetting: openai.String(approval)}}
	return responses.ResponseNewParams{
		Model: policy.Core25Mini, MaxOutputTokens: openai.Int(200), Temperature: openai.Float(0), MaxToolCalls: openai.Int(1),
		Reasoning:  shared.ReasoningParam{Effort: shared.ReasoningEffortNone},
		Input:      responses.ResponseNewParamsInputUnion{OfString: openai.String("Echo hello.")},
		Tools:      []responses.ToolUnionParam{{OfMcp: &tool}},
		ToolChoice: responses.ResponseNewParamsToolChoiceUnion{OfMcpTool: &responses.ToolChoiceMcpParam{ServerLabel: "test", Name: openai.String(mcptest.Echo)}},
	}
}

// Through the official OpenAI SDK, a response calls a tool of an MCP
// server: its output holds the mcp_list_tools item with the allowed
// tool only, then the mcp_call with the tool's answer; streamed, the
// same items arrive with their events; with approval required, the
// response ends with an mcp_approval_request that an
// mcp_approval_response in the next request (previous_response_id)
// answers, which runs the call. A server the operator did not allow is
// refused with a 400 naming it.
func TestSDKResponsesMCP(t *testing.T) {
	srv := mcptest.Serve(t, mcptest.Options{})
	url := mcpServer(t, strings.TrimSuffix(srv.URL, "/mcp"))
	client := openaiSDK(url, key)
	ctx := context.Background()

	resp, err := client.Responses.New(ctx, mcpResponsesRequest(srv.URL, "never"))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, it := range resp.Output {
		types = append(types, it.Type)
	}
	if len(resp.Output) < 2 || types[0] != "mcp_list_tools" || types[1] != "mcp_call" {
		t.Fatalf("output %v", types)
	}
	if len(resp.Tools) != 1 || resp.Tools[0].Type != "mcp" || resp.Tools[0].ServerLabel != "test" || strings.Contains(resp.RawJSON(), "secret-value") {
		t.Errorf("tools echoed %+v: want the mcp tool, without headers", resp.Tools)
	}
	list := resp.Output[0].AsMcpListTools()
	if list.ServerLabel != "test" || len(list.Tools) != 1 || list.Tools[0].Name != mcptest.Echo {
		t.Errorf("listing %+v: want the allowed echo tool alone", list)
	}
	call := resp.Output[1].AsMcpCall()
	if call.ServerLabel != "test" || call.Name != mcptest.Echo || call.Output == "" || !strings.Contains(call.Arguments, call.Output) || call.Status != "completed" {
		t.Errorf("call %+v", call)
	}

	stream := client.Responses.NewStreaming(ctx, mcpResponsesRequest(srv.URL, "never"))
	seen := map[string]bool{}
	for stream.Next() {
		seen[stream.Current().Type] = true
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"response.mcp_list_tools.in_progress", "response.mcp_list_tools.completed", "response.mcp_call_arguments.delta",
		"response.mcp_call_arguments.done", "response.mcp_call.in_progress", "response.mcp_call.completed"} {
		if !seen[typ] {
			t.Errorf("the stream has no %s", typ)
		}
	}
	if !seen["response.completed"] && !seen["response.incomplete"] {
		t.Error("the stream did not end")
	}

	calls := len(srv.Calls())
	resp, err = client.Responses.New(ctx, mcpResponsesRequest(srv.URL, "always"))
	if err != nil {
		t.Fatal(err)
	}
	last := resp.Output[len(resp.Output)-1]
	if last.Type != "mcp_approval_request" || len(srv.Calls()) != calls {
		t.Fatalf("output ends with %s; the server ran %d calls, want none more", last.Type, len(srv.Calls())-calls)
	}
	req := responses.ResponseNewParams{Model: policy.Core25Mini, MaxOutputTokens: openai.Int(16), Temperature: openai.Float(0),
		Reasoning:          shared.ReasoningParam{Effort: shared.ReasoningEffortNone},
		PreviousResponseID: openai.String(resp.ID), Tools: mcpResponsesRequest(srv.URL, "always").Tools,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{{OfMcpApprovalResponse: &responses.ResponseInputItemMcpApprovalResponseParam{
			ApprovalRequestID: last.ID, Approve: true}}}}}
	resp, err = client.Responses.New(ctx, req)
	if err != nil {
		var apiErr *openai.Error
		errors.As(err, &apiErr)
		t.Fatalf("%v %s", err, apiErr.RawJSON())
	}
	if len(srv.Calls()) != calls+1 {
		t.Errorf("approved: the server ran %d calls, want 1", len(srv.Calls())-calls)
	}
	var approved bool
	for _, it := range resp.Output {
		if it.Type == "mcp_call" && it.ID == last.ID && it.AsMcpCall().Status == "completed" {
			approved = true
		}
	}
	if !approved {
		t.Errorf("the approved call is not in the output: %s", resp.RawJSON())
	}

	// A server the operator did not allow.
	_, err = client.Responses.New(ctx, mcpResponsesRequest("http://127.0.0.1:1/elsewhere", "never"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Message, "not among the servers this server allows") {
		t.Errorf("a server not allowed: %v", err)
	}
}

// The official OpenAI SDK calls a tool of the official MCP reference
// server (@modelcontextprotocol/server-everything, started on loopback)
// through inferkit.
func TestSDKResponsesMCPEverything(t *testing.T) {
	everything := mcptest.Everything(t)
	url := mcpServer(t, everything)
	tool := responses.ToolMcpParam{ServerLabel: "everything", ServerURL: openai.String(everything),
		AllowedTools:    responses.ToolMcpAllowedToolsUnionParam{OfMcpAllowedTools: []string{"echo", "get-annotated-message"}},
		RequireApproval: responses.ToolMcpRequireApprovalUnionParam{OfMcpToolApprovalSetting: openai.String("never")}}
	client := openaiSDK(url, key)
	// The random tiny model writes a couple of hundred tokens of the
	// grammar's optional whitespace before the call ends.
	resp, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Model: policy.Core25Mini, MaxOutputTokens: openai.Int(800), Temperature: openai.Float(0), MaxToolCalls: openai.Int(1),
		Reasoning:  shared.ReasoningParam{Effort: shared.ReasoningEffortNone},
		Input:      responses.ResponseNewParamsInputUnion{OfString: openai.String("Show me an annotated message.")},
		Tools:      []responses.ToolUnionParam{{OfMcp: &tool}},
		ToolChoice: responses.ResponseNewParamsToolChoiceUnion{OfMcpTool: &responses.ToolChoiceMcpParam{ServerLabel: "everything", Name: openai.String("get-annotated-message")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Output) < 2 || resp.Output[0].Type != "mcp_list_tools" || resp.Output[1].Type != "mcp_call" {
		t.Fatalf("output %s", resp.RawJSON())
	}
	if list := resp.Output[0].AsMcpListTools(); len(list.Tools) != 2 {
		t.Errorf("listing %+v: want the two allowed tools", list.Tools)
	}
	call := resp.Output[1].AsMcpCall()
	if call.Name != "get-annotated-message" || call.Status != "completed" || call.Output == "" {
		t.Errorf("call %+v", call)
	}
}

// Through the official Anthropic SDK's MCP connector (beta
// mcp-client-2025-04-04), a message calls a tool of an MCP server: the
// answer holds its mcp_tool_use and mcp_tool_result blocks, blocking
// and streamed, on our test server and on the official reference
// server. A server the operator did not allow is refused with a 400.
func TestSDKMessagesMCP(t *testing.T) {
	srv := mcptest.Serve(t, mcptest.Options{})
	everything := mcptest.Everything(t)
	m, _ := policy.Model(policy.Core25Mini)
	m.Path = tinyModel(t)
	models := []catalog.Model{m}
	url := serveEngine(t, inference.Config{Models: models, ContextTokens: 4096},
		httpapi.Config{Models: models, MCPAllow: []string{srv.URL, everything}}, "")
	client := anthropicSDK(url, key)
	ctx := context.Background()
	params := func(server, serverURL, tool string) anthropic.BetaMessageNewParams {
		return anthropic.BetaMessageNewParams{
			Model: policy.Core25Mini, MaxTokens: 800, Temperature: anthropic.Float(0),
			Betas:    []anthropic.AnthropicBeta{anthropic.AnthropicBetaMCPClient2025_04_04},
			Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Please use the tool."))},
			MCPServers: []anthropic.BetaRequestMCPServerURLDefinitionParam{{Name: server, URL: serverURL,
				AuthorizationToken: anthropic.String("mcp-token"),
				ToolConfiguration:  anthropic.BetaRequestMCPServerToolConfigurationParam{AllowedTools: []string{tool}}}},
			ToolChoice: anthropic.BetaToolChoiceUnionParam{OfTool: &anthropic.BetaToolChoiceToolParam{Name: tool}},
		}
	}
	for _, tc := range []struct{ server, url, tool string }{{"test", srv.URL, mcptest.Echo}, {"everything", everything, "get-annotated-message"}} {
		t.Run(tc.server, func(t *testing.T) {
			msg, err := client.Beta.Messages.New(ctx, params(tc.server, tc.url, tc.tool))
			if err != nil {
				t.Fatal(err)
			}
			var use anthropic.BetaMCPToolUseBlock
			var result anthropic.BetaMCPToolResultBlock
			for _, b := range msg.Content {
				switch b.Type {
				case "mcp_tool_use":
					use = b.AsMCPToolUse()
				case "mcp_tool_result":
					result = b.AsMCPToolResult()
				}
			}
			if use.ID == "" || use.Name != tc.tool || use.ServerName != tc.server || result.ToolUseID != use.ID || result.IsError {
				t.Fatalf("blocks %s", msg.RawJSON())
			}
			if len(result.Content.OfBetaMCPToolResultBlockContent) == 0 || result.Content.OfBetaMCPToolResultBlockContent[0].Text == "" {
				t.Errorf("result %s", result.RawJSON())
			}

			stream := client.Beta.Messages.NewStreaming(ctx, params(tc.server, tc.url, tc.tool))
			var acc anthropic.BetaMessage
			for stream.Next() {
				if err := acc.Accumulate(stream.Current()); err != nil {
					t.Fatal(err)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, b := range acc.Content {
				types = append(types, b.Type)
			}
			if !slices.Contains(types, "mcp_tool_use") || !slices.Contains(types, "mcp_tool_result") {
				t.Errorf("streamed blocks %v", types)
			}
		})
	}
	if h := srv.Headers(); len(h) == 0 || h[0].Get("Authorization") != "Bearer mcp-token" {
		t.Errorf("the authorization token did not reach the server")
	}

	_, err := client.Beta.Messages.New(ctx, params("elsewhere", "http://127.0.0.1:1/mcp", "echo"))
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Error(), "not among the servers this server allows") {
		t.Errorf("a server not allowed: %v", err)
	}
}
