//go:build cgo

package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds an API key to every request.
type bearer string

func (k bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(k))
	return http.DefaultTransport.RoundTrip(r)
}

// With -mcp-serve, an agent's MCP client (the official Go SDK) reaches
// the server's models on /mcp under its API key: it lists the tools,
// generates with chat and answers a decision question with decide; the
// code-review API answers on the same server.
func TestServeMCP(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var stderr, logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o, err := parseFlags([]string{"-mcp-serve", "-threads", "1", "-parallel", "1", "-ctx", "2048"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serve(ctx, o, ln, &stderr, slog.New(slog.NewTextHandler(&logs, nil))) }()
	var key string
	for deadline := time.Now().Add(60 * time.Second); key == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no key printed; logs:\n%s", logs.String())
		}
		key = regexp.MustCompile(`sk-inferkit-\w+`).FindString(stderr.String())
	}
	endpoint := "http://" + ln.Addr().String() + "/mcp"
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	var s *mcp.ClientSession
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer(key)}, MaxRetries: -1}, nil)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	defer s.Close()
	tools, err := s.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 3 {
		t.Fatalf("tools %v %v", tools, err)
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{
		"model": "core-3-flash", "max_tokens": 8, "messages": []any{map[string]any{"role": "user", "content": "Hi"}}}})
	if err != nil || res.IsError {
		t.Fatalf("chat: %+v %v", res, err)
	}
	res, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "decide", Arguments: map[string]any{
		"model": "system-one-340m", "state": "A sunny day.", "questions": map[string]any{"q": map[string]any{"type": "choice", "criteria": map[string]any{"sun": "", "rain": ""}}}}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "sun") {
		t.Fatalf("decide: %+v %v", res, err)
	}
	res, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{"model": "nonesuch", "messages": []any{map[string]any{"role": "user", "content": "Hi"}}}})
	if err != nil || !res.IsError {
		t.Errorf("an unknown model: %+v %v", res, err)
	}

	// The code-review API is on the same server, under the same key,
	// reviewing with the first chat model (the Free plan brings none of
	// its own).
	review := `{"summary":false,"diff":"--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n package x\n-var a = 1\n+var a = 2\n"}`
	req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/v1/code-review/reviews", strings.NewReader(review))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !reviewed(resp.StatusCode, string(body)) {
		t.Errorf("review: %d %s", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// reviewed says whether a code review's answer is the review product's
// own: a review of the diff's one piece, or, since the demo's trained
// chat model knows no code, its 502 for an answer that never ended its
// JSON.
func reviewed(status int, body string) bool {
	return status == 200 && strings.Contains(body, `"object":"code_review"`) && strings.Contains(body, `"pieces":1`) ||
		status == 502 && strings.Contains(body, "codereview: the answer ran past")
}
