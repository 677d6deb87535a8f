// Package mcpserve serves an inferkit API as an MCP server, for agents:
// its models' generation and System One decisions become MCP tools over
// streamable HTTP.
//
// The server is a thin client of the API it wraps: every tool call is a
// request to the API's own routes (POST /v1/chat/completions, POST
// /v1/systemone, GET /v1/models), in process, under the caller's key
// (the MCP request's Authorization or x-api-key header), so that the
// API's authentication, rate limits, spend, metrics and traces apply to
// it as to any request, through the one path a request takes. An answer
// the API refuses is a tool error with the API's message.
package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/inferkit/inferkit/httpapi/inprocess"
)

// Config configures the MCP server. API is required.
type Config struct {
	// API serves the Inference API, such as an *httpapi.Handler: the
	// tools call its routes under /v1. Required.
	API http.Handler
	// Logger receives the server's errors. Nil means slog.Default().
	Logger *slog.Logger
}

// The tools of the server.
const (
	ToolChat   = "chat"
	ToolDecide = "decide"
	ToolModels = "list_models"
)

// maxBody bounds an MCP request's body and an API answer that a tool
// reads.
const maxBody = 8 << 20

// New returns the MCP endpoint: an http.Handler that serves streamable
// HTTP, statelessly (no session outlives its request), to mount where
// agents reach it, such as /mcp. A request without an API key is
// refused with 401. The handler is safe for concurrent use; it holds
// nothing to close.
func New(cfg Config) (http.Handler, error) {
	if cfg.API == nil {
		return nil, errors.New("mcpserve: Config.API is nil")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &server{api: cfg.API}
	srv := mcp.NewServer(&mcp.Implementation{Name: "inferkit", Version: "1"}, &mcp.ServerOptions{Logger: log})
	srv.AddTool(&mcp.Tool{Name: ToolChat, Description: "Generate a chat completion with one of the server's models. Returns the model's answer.",
		InputSchema: json.RawMessage(chatSchema)}, s.chat)
	srv.AddTool(&mcp.Tool{Name: ToolDecide, Description: "Answer decision questions (yes/no, choice, score) about a state with a System One decision model. Returns each question's answer with its calibrated probabilities.",
		InputSchema: json.RawMessage(decideSchema)}, s.decide)
	srv.AddTool(&mcp.Tool{Name: ToolModels, Description: "List the server's models.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}, s.models)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: log})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" && r.Header.Get("X-Api-Key") == "" {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, `{"error":{"message":"an API key is required (Authorization: Bearer KEY)","type":"authentication_error"}}`, http.StatusUnauthorized)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h.ServeHTTP(w, r)
	}), nil
}

// The tools' input schemas.
const (
	chatSchema = `{"type":"object","properties":{
"model":{"type":"string","description":"The model's id, as list_models gives it"},
"messages":{"type":"array","minItems":1,"items":{"type":"object","properties":{"role":{"type":"string","enum":["system","user","assistant"]},"content":{"type":"string"}},"required":["role","content"]}},
"max_tokens":{"type":"integer","minimum":1,"maximum":8192,"description":"The most tokens to generate; default 512"},
"temperature":{"type":"number","minimum":0,"maximum":2}},
"required":["model","messages"]}`
	decideSchema = `{"type":"object","properties":{
"model":{"type":"string","description":"A decision model's id"},
"state":{"type":"string","description":"The text the questions are about"},
"questions":{"type":"object","description":"The questions by name, each as the System One API takes it, such as {\"type\":\"noul\"} or {\"type\":\"choice\",\"criteria\":{\"a\":\"\",\"b\":\"\"}}"}},
"required":["model","state","questions"]}`
)

// server runs the tools against api.
type server struct{ api http.Handler }

// chat calls POST /v1/chat/completions and answers the first choice's
// text.
func (s *server) chat(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Model       string           `json:"model"`
		Messages    []map[string]any `json:"messages"`
		MaxTokens   *int             `json:"max_tokens"`
		Temperature *float64         `json:"temperature"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return toolError("the arguments are not the chat tool's: %v", err), nil
	}
	body := map[string]any{"model": in.Model, "messages": in.Messages}
	if in.MaxTokens != nil {
		body["max_tokens"] = *in.MaxTokens
	}
	if in.Temperature != nil {
		body["temperature"] = *in.Temperature
	}
	out, res := s.call(ctx, req, http.MethodPost, "/v1/chat/completions", body)
	if res != nil {
		return res, nil
	}
	var completion struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(out, &completion); err != nil || len(completion.Choices) == 0 {
		return toolError("the API's answer has no choice"), nil
	}
	c := completion.Choices[0]
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: c.Message.Content}},
		StructuredContent: map[string]any{"text": c.Message.Content, "finish_reason": c.FinishReason, "usage": completion.Usage}}, nil
}

// decide calls POST /v1/systemone and answers its JSON.
func (s *server) decide(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Model     string          `json:"model"`
		State     string          `json:"state"`
		Questions json.RawMessage `json:"questions"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return toolError("the arguments are not the decide tool's: %v", err), nil
	}
	out, res := s.call(ctx, req, http.MethodPost, "/v1/systemone", map[string]any{"model": in.Model, "state": in.State, "questions": in.Questions})
	if res != nil {
		return res, nil
	}
	return jsonResult(out), nil
}

// models calls GET /v1/models and answers its JSON.
func (s *server) models(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	out, res := s.call(ctx, req, http.MethodGet, "/v1/models", nil)
	if res != nil {
		return res, nil
	}
	return jsonResult(out), nil
}

// call sends one request to the API under the MCP request's key, and
// returns the answer's body, or the tool error that says why it failed.
func (s *server) call(ctx context.Context, req *mcp.CallToolRequest, method, path string, body any) ([]byte, *mcp.CallToolResult) {
	// A server's request always has a body: http.NoBody for none.
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, toolError("encoding the request: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	r, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		return nil, toolError("%v", err)
	}
	if req.Extra != nil {
		for _, h := range []string{"Authorization", "X-Api-Key", "Traceparent", "Tracestate", "User-Agent"} {
			if v := req.Extra.Header.Get(h); v != "" {
				r.Header.Set(h, v)
			}
		}
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	w, err := inprocess.Do(s.api, r, maxBody)
	if err != nil {
		return nil, toolError("%v", err)
	}
	if w.Status != http.StatusOK {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		msg := string(w.Body)
		if json.Unmarshal(w.Body, &e) == nil && e.Error.Message != "" {
			msg = e.Error.Message
		}
		if len(msg) > 2000 {
			msg = msg[:2000]
		}
		return nil, toolError("the API answered %d: %s", w.Status, msg)
	}
	return w.Body, nil
}

// toolError is a tool's failed result, with its reason.
func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// jsonResult is an API answer as a tool's result: its JSON as text and
// as structured content.
func jsonResult(b []byte) *mcp.CallToolResult {
	var v any
	json.Unmarshal(b, &v)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: v}
}
