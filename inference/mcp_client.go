package inference

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/inferkit/inferkit/internal/grammar"
)

// The bounds on what a server sends, whoever runs it: a response body
// of an HTTP server, a tool's description and schema (which go into the
// prompt), and a result's text before it is cut to ResultChars.
const (
	mcpBodyBytes        = 8 << 20
	mcpDescriptionChars = 2000
	mcpSchemaBytes      = 16 << 10
	mcpResultBytes      = 1 << 20
)

// mcpSession is a request's connection to one MCP server, and the tools
// it listed.
type mcpSession struct {
	server  MCPServer
	session *mcp.ClientSession
	list    MCPToolList
}

// mcpSessions are a request's connections, which close together.
type mcpSessions []*mcpSession

func (ss mcpSessions) close() {
	for _, s := range ss {
		if s.session != nil {
			s.session.Close()
		}
	}
}

// tool returns the session and tool that the model calls by name (its
// ModelName, or else, in a conversation a client rebuilt, its Name), or
// nil.
func (ss mcpSessions) tool(name string) (*mcpSession, *MCPTool) {
	for _, byModel := range []bool{true, false} {
		for _, s := range ss {
			for i, t := range s.list.Tools {
				if byModel && t.ModelName == name || !byModel && t.Name == name {
					return s, &s.list.Tools[i]
				}
			}
		}
	}
	return nil, nil
}

// tools are the tools the model sees, every server's.
func (ss mcpSessions) tools() []Tool {
	var out []Tool
	for _, s := range ss {
		for _, t := range s.list.Tools {
			out = append(out, t.tool())
		}
	}
	return out
}

// mcpConnect connects to every server of opts at once, each within
// opts.Timeout, and lists its tools, announcing each listing (yield) as
// it starts and ends. A server that cannot be reached or listed gives a
// failed listing and no tools; the request goes on with the others.
// Tool names the model would confuse (taken, names the request's tools
// or another server's use) are given the server's label. ok is false
// when yield wanted no more.
func (e *Engine) mcpConnect(ctx context.Context, opts *MCPOptions, taken []string, yield func(Event, error) bool) (ss mcpSessions, ok bool) {
	ss = make(mcpSessions, len(opts.Servers))
	for i, srv := range opts.Servers {
		ss[i] = &mcpSession{server: srv, list: MCPToolList{ID: "mcpl_" + rand.Text(), Server: srv.Label, Status: MCPInProgress}}
		if ann := ss[i].list; !yield(Event{MCPList: &ann}, nil) {
			return ss, false
		}
	}
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Go(func() {
			lctx, end := e.traceTool(ctx, "mcp_list_tools", s.list.ID)
			err := s.open(lctx, opts.Timeout)
			end(err)
			if err != nil {
				s.list.Status, s.list.Error = MCPFailed, err.Error()
				return
			}
			s.list.Status = MCPCompleted
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, name := range taken {
		seen[name] = true
	}
	for _, s := range ss {
		for i := range s.list.Tools {
			t := &s.list.Tools[i]
			t.ModelName = t.Name
			if seen[t.ModelName] {
				t.ModelName = s.server.Label + "__" + t.Name
			}
			seen[t.ModelName] = true
		}
		done := s.list
		if !yield(Event{MCPList: &done}, nil) {
			return ss, false
		}
	}
	return ss, true
}

// open connects to the server and lists its tools, within timeout.
func (s *mcpSession) open(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var transport mcp.Transport
	if s.server.URL != "" {
		transport = &mcp.StreamableClientTransport{Endpoint: s.server.URL, HTTPClient: mcpHTTPClient(s.server.Headers),
			MaxRetries: -1, DisableStandaloneSSE: true}
	} else {
		// The process lives as long as the session, not the listing's
		// context: Close ends it.
		cmd := exec.Command(s.server.Command[0], s.server.Command[1:]...)
		transport = &mcp.CommandTransport{Command: cmd}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "inferkit", Version: "1"}, nil)
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return fmt.Errorf("connecting to MCP server %q: %w", s.server.Label, err)
	}
	s.session = session
	var skipped []string
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing the tools of MCP server %q: %w", s.server.Label, err)
		}
		if s.server.AllowedTools != nil && !slices.Contains(s.server.AllowedTools, t.Name) {
			continue
		}
		tool, err := mcpTool(t)
		if err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		if len(s.list.Tools) == MaxMCPTools {
			return fmt.Errorf("MCP server %q lists more than %d tools: name the ones to use in AllowedTools", s.server.Label, MaxMCPTools)
		}
		s.list.Tools = append(s.list.Tools, tool)
	}
	if len(skipped) > 0 {
		// The listing completed; what was left out of it is said.
		s.list.Error = "left out: " + strings.Join(skipped, "; ")
	}
	return nil
}

// mcpTool is a listed tool as the model sees it, checked: a name a call
// can carry, a description within mcpDescriptionChars, and a schema
// within mcpSchemaBytes that converts to a grammar.
func mcpTool(t *mcp.Tool) (MCPTool, error) {
	if t.Name == "" || len(t.Name) > 128 || strings.ContainsFunc(t.Name, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		return MCPTool{}, fmt.Errorf("a tool named %q (want 1 to 128 letters, digits, '_', '-' or '.')", clip(t.Name, 64))
	}
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || len(schema) > mcpSchemaBytes {
		return MCPTool{}, fmt.Errorf("tool %q: its input schema is not JSON of at most %d bytes", t.Name, mcpSchemaBytes)
	}
	if string(schema) == "null" {
		schema = []byte(`{"type":"object"}`)
	}
	if err := grammar.CheckSchema(schema); err != nil {
		return MCPTool{}, fmt.Errorf("tool %q: %v", t.Name, err)
	}
	out := MCPTool{Name: t.Name, Description: clip(t.Description, mcpDescriptionChars), InputSchema: schema}
	if t.Annotations != nil {
		out.Annotations, _ = json.Marshal(t.Annotations)
	}
	return out, nil
}

// clip cuts s to at most n characters.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// call runs the tool t of the session with the model's arguments,
// within timeout, and returns the call with its result's text cut to
// chars characters.
func (s *mcpSession) call(ctx context.Context, c MCPCall, timeout time.Duration, chars int) MCPCall {
	var args map[string]any
	if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil || args == nil {
		c.Status, c.Error = MCPFailed, "the arguments are not a JSON object"
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: c.Name, Arguments: args})
	if err != nil {
		c.Status, c.Error = MCPFailed, err.Error()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			c.Error = fmt.Sprintf("the call ran past %v", timeout)
		}
		return c
	}
	c.Output = resultText(res, chars)
	c.Status = MCPCompleted
	if res.IsError {
		c.Status, c.Error = MCPFailed, "the tool reported an error"
	}
	return c
}

// resultText is a call's result as the model reads it: its text
// content, and a note for each item of another kind, cut to chars
// characters with a note that it was.
func resultText(res *mcp.CallToolResult, chars int) string {
	var b strings.Builder
	for _, c := range res.Content {
		if b.Len() > mcpResultBytes {
			break
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		switch c := c.(type) {
		case *mcp.TextContent:
			b.WriteString(c.Text)
		case *mcp.ImageContent:
			fmt.Fprintf(&b, "[an image, %s, %d bytes]", clip(c.MIMEType, 64), len(c.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(&b, "[audio, %s, %d bytes]", clip(c.MIMEType, 64), len(c.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(&b, "[a resource: %s %s]", clip(c.Name, 200), clip(c.URI, 500))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				b.WriteString(c.Resource.Text)
			} else if c.Resource != nil {
				fmt.Fprintf(&b, "[a resource: %s]", clip(c.Resource.URI, 500))
			}
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		if j, err := json.Marshal(res.StructuredContent); err == nil {
			b.Write(j[:min(len(j), mcpResultBytes)])
		}
	}
	text := strings.ToValidUTF8(b.String(), "\uFFFD")
	if utf8.RuneCountInString(text) > chars {
		text = clip(text, chars) + fmt.Sprintf("\n[The result was cut to its first %d characters.]", chars)
	}
	return text
}

// mcpHTTPClient is the HTTP client of a server at a URL: it sends
// headers with every request, follows no redirect (the operator allowed
// the URL, not where it might lead), and reads at most mcpBodyBytes of
// a response.
func mcpHTTPClient(headers map[string]string) *http.Client {
	return &http.Client{
		Transport:     &mcpTransport{headers: headers},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// mcpTransport is mcpHTTPClient's round tripper.
type mcpTransport struct{ headers map[string]string }

func (t *mcpTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	res, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	res.Body = &boundedBody{ReadCloser: res.Body, left: mcpBodyBytes}
	return res, nil
}

// boundedBody fails a read past its bound.
type boundedBody struct {
	io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("the MCP server sent more than %d bytes in one response", mcpBodyBytes)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
