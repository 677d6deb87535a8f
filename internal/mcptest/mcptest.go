// Package mcptest serves MCP servers for tests, in process over
// streamable HTTP (the official Go SDK's server), with tools that
// behave well and tools that do not: slow, huge, erroring, and a
// server that drops its connections; and it starts the official
// reference server, @modelcontextprotocol/server-everything from npm,
// over streamable HTTP or on standard input and output.
package mcptest

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/inferkit/inferkit/internal/testmodels"
)

// The tools of Server.
const (
	// Echo answers its argument text as it is.
	Echo = "echo"
	// Slow waits for its call's context to end (or 10 minutes).
	Slow = "slow"
	// Huge answers 4 MiB of text.
	Huge = "huge"
	// Fail answers an error result, whose text is FailText.
	Fail = "fail"
	// FailText is the text of Fail's result.
	FailText = "the fail tool always fails"
	// HugeBytes is the length of Huge's answer.
	HugeBytes = 4 << 20
)

// EchoSchema is the input schema of Echo: an object with a text of at
// most 20 characters.
const EchoSchema = `{"type":"object","properties":{"text":{"type":"string","minLength":1,"maxLength":20}},"required":["text"]}`

// Server is a running in-process MCP server.
type Server struct {
	// URL is its streamable HTTP endpoint.
	URL string

	mu      sync.Mutex
	calls   []string // the tools called, in order
	headers []http.Header
}

// Calls returns the names of the tools called so far, in order.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// Headers returns the headers of every HTTP request the server got.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

// Options shape a Server.
type Options struct {
	// Extra tools, beside Echo, Slow, Huge and Fail, each of the empty
	// object schema, answering their name.
	Extra []string
	// Drop makes every HTTP request fail: the server closes the
	// connection without answering.
	Drop bool
}

// Serve starts a Server that closes when the test ends.
func Serve(t testing.TB, o Options) *Server {
	t.Helper()
	s := &Server{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "1"}, nil)
	add := func(name, schema string, h func(ctx context.Context, args map[string]any) *mcp.CallToolResult) {
		srv.AddTool(&mcp.Tool{Name: name, Description: "The " + name + " tool.", InputSchema: json.RawMessage(schema)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				s.mu.Lock()
				s.calls = append(s.calls, name)
				s.mu.Unlock()
				var args map[string]any
				json.Unmarshal(req.Params.Arguments, &args)
				return h(ctx, args), nil
			})
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	add(Echo, EchoSchema, func(_ context.Context, args map[string]any) *mcp.CallToolResult {
		v, _ := args["text"].(string)
		return text(v)
	})
	add(Slow, `{"type":"object"}`, func(ctx context.Context, _ map[string]any) *mcp.CallToolResult {
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Minute):
		}
		return text("late")
	})
	add(Huge, `{"type":"object"}`, func(context.Context, map[string]any) *mcp.CallToolResult {
		return text(strings.Repeat("0123456789abcdef", HugeBytes/16))
	})
	add(Fail, `{"type":"object"}`, func(context.Context, map[string]any) *mcp.CallToolResult {
		r := text(FailText)
		r.IsError = true
		return r
	})
	for _, name := range o.Extra {
		add(name, `{"type":"object"}`, func(context.Context, map[string]any) *mcp.CallToolResult { return text(name) })
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		if o.Drop {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	s.URL = hs.URL + "/mcp"
	return s
}

// everythingScript is where scripts/fetch-testdata.sh installs the
// official MCP reference server, under the repository's root.
const everythingScript = ".build/testdata/npm-install/@modelcontextprotocol/server-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

// EverythingCommand returns the command line that runs the official MCP
// reference server, @modelcontextprotocol/server-everything, on its
// standard input and output. It skips the test where node or the
// package is missing.
func EverythingCommand(t testing.TB) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the MCP reference server's tests need Node.js 20 or newer")
	}
	script := filepath.Join(testmodels.Root(t), everythingScript)
	if _, err := os.Stat(script); err != nil {
		t.Skip("@modelcontextprotocol/server-everything is not installed: run scripts/fetch-testdata.sh (make test does)")
	}
	return []string{node, script, "stdio"}
}

// Everything starts the official MCP reference server over streamable
// HTTP on a free loopback port and returns its endpoint; it stops when
// the test ends. It skips the test as EverythingCommand does.
func Everything(t testing.TB) string {
	t.Helper()
	argv := EverythingCommand(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(argv[0], argv[1], "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	logs := &syncWriter{w: &strings.Builder{}}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not listen on %s within 30 s: %s", addr, logs.String())
		}
	}
}

// syncWriter is a writer that a process's output and a test share.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}
