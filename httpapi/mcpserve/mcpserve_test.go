package mcpserve_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/inferkit/inferkit/httpapi/mcpserve"
)

// fakeAPI answers chat completions with the key it was called under,
// refuses other keys with a 401 in the API's shape, and keeps the
// requests' bodies.
type fakeAPI struct{ bodies []string }

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.bodies = append(f.bodies, r.Method+" "+r.URL.Path+" "+string(b))
	if r.Header.Get("Authorization") != "Bearer sk-good" {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"invalid API key","type":"authentication_error"}}`))
		return
	}
	switch r.URL.Path {
	case "/v1/chat/completions":
		w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"hello from the model"},"finish_reason":"stop"}],"usage":{"total_tokens":3}}`))
	case "/v1/models":
		w.Write([]byte(`{"object":"list","data":[{"id":"m"}]}`))
	default:
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"detail":[{"msg":"no such model"}]}`))
	}
}

// session connects an MCP client to the server with the given key.
func session(t *testing.T, url, key string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	hc := &http.Client{Transport: keyTransport{key}}
	s, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// The tools call the API's routes under the MCP request's key: chat
// answers the model's text, a refused key or request is a tool error
// with the API's message, and an MCP request without a key is a 401.
func TestTools(t *testing.T) {
	api := &fakeAPI{}
	h, err := mcpserve.New(mcpserve.Config{API: api})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := context.Background()

	s := session(t, srv.URL, "sk-good")
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "chat,decide,list_models" && len(names) != 3 {
		t.Errorf("tools %v", names)
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: mcpserve.ToolChat, Arguments: map[string]any{
		"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hi"}}, "max_tokens": 8}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Content[0].(*mcp.TextContent).Text != "hello from the model" {
		t.Errorf("chat: %+v", res)
	}
	var sent map[string]any
	json.Unmarshal([]byte(strings.SplitN(api.bodies[len(api.bodies)-1], " ", 3)[2]), &sent)
	if sent["model"] != "m" || sent["max_tokens"] != 8.0 {
		t.Errorf("the API got %v", api.bodies)
	}
	res, err = s.CallTool(ctx, &mcp.CallToolParams{Name: mcpserve.ToolDecide, Arguments: map[string]any{"model": "x", "state": "s", "questions": map[string]any{}}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "no such model") {
		t.Errorf("decide refused: %+v %v", res, err)
	}

	bad := session(t, srv.URL, "sk-bad")
	res, err = bad.CallTool(ctx, &mcp.CallToolParams{Name: mcpserve.ToolModels, Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "401: invalid API key") {
		t.Errorf("a bad key: %+v %v", res, err)
	}

	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no key: %d", resp.StatusCode)
	}
}
