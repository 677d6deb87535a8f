package inference

import (
	"cmp"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"time"
)

// MCPOptions lets the model call the tools of MCP servers while it
// answers: the engine connects to each server when the request runs,
// lists its tools into the model's prompt beside the request's own, runs
// each call the model makes and gives the model its result, and the
// model goes on over the cached conversation, as with Search. The zero
// value of every field but Servers is useful.
//
// A turn that calls the request's own tools ends the request with those
// calls, as without MCP. A call that needs approval (MCPServer.Approval)
// ends the request with it (an MCPCall of status MCPAwaitingApproval);
// the caller answers it in the next request's Approvals, with the
// conversation that ends with the call.
type MCPOptions struct {
	// Servers are the servers, 1 to MaxMCPServers, each of a distinct
	// Label.
	Servers []MCPServer
	// MaxCalls bounds the tool calls the engine runs for the request, 1
	// to MaxMCPCallsPerRequest; 0 means 8. In the turn that reaches it,
	// calls past it are answered with a note that the limit is reached;
	// the turn after it that calls again ends the request, with
	// FinishLength.
	MaxCalls int
	// Timeout bounds connecting to a server and listing its tools, and
	// each call, 1 s to 5 minutes; 0 means 30 s. A call that runs past
	// it fails, and the model reads why.
	Timeout time.Duration
	// ResultChars bounds the characters of a call's result that the
	// model reads (and MCPCall.Output), 100 to 100,000; 0 means 16,000.
	// A longer result is cut, and the model told so.
	ResultChars int
	// Approvals answer the calls that waited for approval: each names
	// the MCPCall.ID of a call of the conversation's last assistant
	// message that has no tool message yet. An approved call runs
	// before the first turn; a refused one is answered, to the model,
	// with its refusal.
	Approvals []MCPApproval
}

// MCPServer is one MCP server: reached over streamable HTTP at URL, or
// started as a process that speaks MCP on its standard input and
// output (Command, for library callers; an HTTP API never gives one).
type MCPServer struct {
	// Label names the server in calls and events: 1 to 64 letters,
	// digits, '_' or '-'.
	Label string
	// URL is the server's streamable HTTP endpoint (http or https).
	URL string
	// Command is the program and arguments of a server on standard
	// input and output. One of URL and Command is required.
	Command []string
	// Headers go with every HTTP request to URL, such as an
	// Authorization header.
	Headers map[string]string
	// AllowedTools, when not nil, are the only tools of the server the
	// model sees; the others are left out of the list.
	AllowedTools []string
	// Approval says which calls wait for the caller's approval. The
	// zero value runs every call without asking.
	Approval MCPApprovalRule
}

// MCPApprovalRule says which calls of a server's tools wait for the
// caller's approval: those of the tools in Always, and, with Default,
// those of every tool not in Never.
type MCPApprovalRule struct {
	Default       bool
	Always, Never []string
}

// requires reports whether a call of the tool named name waits for
// approval.
func (r MCPApprovalRule) requires(name string) bool {
	return slices.Contains(r.Always, name) || r.Default && !slices.Contains(r.Never, name)
}

// MCPApproval answers a call that waited for approval.
type MCPApproval struct {
	// CallID is the MCPCall.ID of the call.
	CallID string
	// Approve runs the call; false refuses it.
	Approve bool
	// Reason, if any, says why, to the model.
	Reason string
}

// Bounds of MCPOptions.
const (
	MaxMCPServers         = 8
	MaxMCPCallsPerRequest = 32
	// MaxMCPTools bounds the tools a server lists into the prompt,
	// after AllowedTools; a server that lists more fails the listing.
	MaxMCPTools = 128
)

// MCPStatus is where an MCP listing or call stands.
type MCPStatus string

// The statuses of MCP listings and calls.
const (
	MCPInProgress MCPStatus = "in_progress"
	MCPCompleted  MCPStatus = "completed"
	MCPFailed     MCPStatus = "failed"
	// MCPAwaitingApproval: the call waits for the caller's approval
	// (MCPOptions.Approvals); it has not run.
	MCPAwaitingApproval MCPStatus = "awaiting_approval"
	// MCPDeclined: the caller refused the call; it did not run.
	MCPDeclined MCPStatus = "declined"
)

// MCPToolList is the tools a server listed for a request.
type MCPToolList struct {
	// ID names the listing, unique in the engine's process ("mcpl_…").
	ID string
	// Server is the server's Label.
	Server string
	// Status: MCPInProgress in the event that announces it, then
	// MCPCompleted or MCPFailed, with Error.
	Status MCPStatus
	Error  string
	Tools  []MCPTool
}

// MCPTool is one tool a server lists.
type MCPTool struct {
	// Name is the tool's name on its server. ModelName is the name the
	// model calls it by: Name, or, where another server or the request
	// has a tool of that name, "Label__Name".
	Name, ModelName string
	Description     string
	// InputSchema is the JSON Schema of its arguments, as JSON.
	InputSchema json.RawMessage
	// Annotations are the server's hints about the tool, as JSON, or
	// nil.
	Annotations json.RawMessage
}

// MCPCall is one call of an MCP tool that the model made.
type MCPCall struct {
	// ID names the call: the id of the model's tool call.
	ID string
	// Server is the server's Label, Name the tool's name on it.
	Server, Name string
	// Arguments are the model's, a JSON object.
	Arguments string
	// Status: MCPInProgress in the event that announces the call, then
	// MCPCompleted or MCPFailed; MCPAwaitingApproval for a call that
	// waits, MCPDeclined for one the caller refused.
	Status MCPStatus
	// Output is the result's text (cut to MCPOptions.ResultChars);
	// Error says why a call failed (the server's error result among
	// them, whose text is Output too).
	Output, Error string
	// At and ReasoningAt are the lengths of Result.Text and
	// Result.Reasoning when the model made the call.
	At, ReasoningAt int
}

// mcpLabel is what a server's Label may be.
var mcpLabel = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// check validates the options and fills their defaults.
func (o *MCPOptions) check() error {
	switch {
	case len(o.Servers) == 0 || len(o.Servers) > MaxMCPServers:
		return fieldError(Field("MCP", "Servers"), "%d servers, want 1 to %d", len(o.Servers), MaxMCPServers)
	case o.MaxCalls < 0 || o.MaxCalls > MaxMCPCallsPerRequest:
		return fieldError(Field("MCP", "MaxCalls"), "%d, want 1 to %d", o.MaxCalls, MaxMCPCallsPerRequest)
	case o.Timeout != 0 && (o.Timeout < time.Second || o.Timeout > 5*time.Minute):
		return fieldError(Field("MCP", "Timeout"), "%v, want 1s to 5m", o.Timeout)
	case o.ResultChars != 0 && (o.ResultChars < 100 || o.ResultChars > 100000):
		return fieldError(Field("MCP", "ResultChars"), "%d, want 100 to 100,000", o.ResultChars)
	}
	o.MaxCalls = cmp.Or(o.MaxCalls, 8)
	o.Timeout = cmp.Or(o.Timeout, 30*time.Second)
	o.ResultChars = cmp.Or(o.ResultChars, 16000)
	labels := map[string]bool{}
	for i, s := range o.Servers {
		f := Field("MCP", "Servers").At(i)
		switch {
		case !mcpLabel.MatchString(s.Label):
			return fieldError(f.Dot("Label"), "%q: want 1 to 64 letters, digits, '_' or '-'", s.Label)
		case labels[s.Label]:
			return fieldError(f.Dot("Label"), "%q names another server too", s.Label)
		case (s.URL == "") == (len(s.Command) == 0):
			return fieldError(f, "give one of URL and Command")
		case len(s.Command) > 0 && len(s.Headers) > 0:
			return fieldError(f.Dot("Headers"), "headers go with a URL, not a Command")
		}
		labels[s.Label] = true
		if s.URL != "" {
			u, err := url.Parse(s.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fieldError(f.Dot("URL"), "%q is not an http or https URL", s.URL)
			}
		}
		for k, v := range s.Headers {
			if !validHeader(k, v) {
				return fieldError(f.Dot("Headers"), "%q is not a valid header", k)
			}
		}
	}
	for i, a := range o.Approvals {
		if a.CallID == "" {
			return fieldError(Field("MCP", "Approvals").At(i).Dot("CallID"), "is empty")
		}
	}
	return nil
}

// validHeader reports whether k: v is a header a request may carry: a
// token for its name, and a value of visible characters, spaces and
// tabs.
func validHeader(k, v string) bool {
	if k == "" || len(k) > 256 || len(v) > 8192 {
		return false
	}
	for _, c := range []byte(k) {
		if c <= ' ' || c >= 0x7f || c == ':' || c == '(' || c == ')' || c == '"' || c == ',' || c == ';' || c == '\\' || c == '/' || c == '[' || c == ']' || c == '?' || c == '=' || c == '{' || c == '}' || c == '<' || c == '>' || c == '@' {
			return false
		}
	}
	for _, c := range []byte(v) {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// Text is what the model reads of a call, in the tool message that
// answers it. A server that takes a call back from a client's history
// gives the model the same text.
func (c MCPCall) Text() string {
	switch c.Status {
	case MCPDeclined:
		if c.Error != "" {
			return "The user declined this call: " + c.Error
		}
		return "The user declined this call."
	case MCPFailed:
		if c.Output != "" {
			return "The tool failed: " + c.Output
		}
		return "The tool call failed: " + c.Error
	}
	if c.Output == "" {
		return "The tool returned nothing."
	}
	return c.Output
}

// mcpLimitText answers, to the model, a call past MCPOptions.MaxCalls.
const mcpLimitText = "The tool call limit of this request is reached: answer with what you have."

// tool is a tool's entry for the model: its model name, its
// description and its schema.
func (t MCPTool) tool() Tool {
	return Tool{Name: t.ModelName, Description: t.Description, Parameters: t.InputSchema}
}
