package responses

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/inference"
)

// MCPTool is what a tool of type mcp carries: a remote MCP server
// (server_label, server_url, headers, or authorization as a bearer
// token), the tools of it the model may call (allowed_tools: an array of
// names, or {tool_names}), and which calls wait for approval
// (require_approval: always, the default, never, or {always: {tool_names},
// never: {tool_names}}).
type MCPTool struct {
	ServerLabel     string            `json:"server_label,omitzero"`
	ServerURL       string            `json:"server_url,omitzero"`
	Headers         map[string]string `json:"headers,omitzero"`
	Authorization   string            `json:"authorization,omitzero"`
	AllowedTools    json.RawMessage   `json:"allowed_tools,omitzero"`
	RequireApproval json.RawMessage   `json:"require_approval,omitzero"`
	// ConnectorID and ServerDescription are refused: inferkit reaches
	// servers by URL, and shows the model each tool's own description.
	ConnectorID       string `json:"connector_id,omitzero"`
	ServerDescription string `json:"server_description,omitzero"`
}

// toolNames is the {tool_names} of allowed_tools and require_approval.
type toolNames struct {
	ToolNames []string `json:"tool_names"`
	ReadOnly  *bool    `json:"read_only,omitzero"`
}

// mcpServer converts the mcp tool at path p.
func (t Tool) mcpServer(p string) (inference.MCPServer, error) {
	m := t.MCPTool
	switch {
	case m.ServerLabel == "":
		return inference.MCPServer{}, formats.Missing(p + ".server_label")
	case m.ConnectorID != "":
		return inference.MCPServer{}, formats.Invalid(p+".connector_id", "%s.connector_id: connectors are not supported; give the server's server_url", p)
	case m.ServerURL == "":
		return inference.MCPServer{}, formats.Missing(p + ".server_url")
	case m.ServerDescription != "":
		return inference.MCPServer{}, formats.Invalid(p+".server_description", "%s.server_description is not supported: the model reads each tool's own description", p)
	}
	s := inference.MCPServer{Label: m.ServerLabel, URL: m.ServerURL, Headers: m.Headers, Approval: inference.MCPApprovalRule{Default: true}}
	if m.Authorization != "" {
		if _, ok := m.Headers["Authorization"]; ok {
			return s, formats.Invalid(p+".authorization", "%s: give authorization or an Authorization header, not both", p)
		}
		s.Headers = map[string]string{"Authorization": "Bearer " + m.Authorization}
		for k, v := range m.Headers {
			s.Headers[k] = v
		}
	}
	if raw := bytes.TrimSpace(m.AllowedTools); len(raw) > 0 && string(raw) != "null" {
		var names []string
		if err := json.Unmarshal(raw, &names); err != nil {
			var obj toolNames
			if err := json.Unmarshal(raw, &obj); err != nil || obj.ToolNames == nil {
				return s, formats.Invalid(p+".allowed_tools", "%s.allowed_tools must be an array of tool names or {\"tool_names\": [...]}", p)
			}
			if obj.ReadOnly != nil && *obj.ReadOnly {
				return s, formats.Invalid(p+".allowed_tools.read_only", "%s.allowed_tools.read_only is not supported: name the tools", p)
			}
			names = obj.ToolNames
		}
		s.AllowedTools = append([]string{}, names...)
	}
	if raw := bytes.TrimSpace(m.RequireApproval); len(raw) > 0 && string(raw) != "null" {
		var mode string
		if err := json.Unmarshal(raw, &mode); err == nil {
			switch mode {
			case "always":
			case "never":
				s.Approval.Default = false
			default:
				return s, formats.Invalid(p+".require_approval", "%s.require_approval must be always, never or {always, never}, got %q", p, mode)
			}
		} else {
			var rule struct {
				Always *toolNames `json:"always"`
				Never  *toolNames `json:"never"`
			}
			if err := json.Unmarshal(raw, &rule); err != nil {
				return s, formats.Invalid(p+".require_approval", "%s.require_approval must be always, never or {always, never}", p)
			}
			if rule.Always != nil {
				s.Approval.Always = rule.Always.ToolNames
			}
			if rule.Never != nil {
				s.Approval.Never = rule.Never.ToolNames
			}
		}
	}
	return s, nil
}

// MCPListedTool is one tool of an mcp_list_tools item.
type MCPListedTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitzero"`
	InputSchema json.RawMessage `json:"input_schema"`
	Annotations json.RawMessage `json:"annotations"`
}

// mcpListItem is the mcp_list_tools item of a listing.
func mcpListItem(l inference.MCPToolList) Item {
	it := Item{ID: l.ID, Type: "mcp_list_tools", ServerLabel: l.Server, Tools: []MCPListedTool{}}
	for _, t := range l.Tools {
		it.Tools = append(it.Tools, MCPListedTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Annotations: t.Annotations})
	}
	if l.Status == inference.MCPFailed || l.Error != "" {
		it.Error = ptr(l.Error)
	}
	return it
}

// mcpCallItem is the item of a call: mcp_approval_request for one that
// waits, else mcp_call, in progress until done.
func mcpCallItem(c inference.MCPCall, done bool) Item {
	if c.Status == inference.MCPAwaitingApproval {
		return Item{ID: c.ID, Type: "mcp_approval_request", ServerLabel: c.Server, Name: c.Name, Arguments: c.Arguments}
	}
	it := Item{ID: c.ID, Type: "mcp_call", Status: "in_progress", ServerLabel: c.Server, Name: c.Name, Arguments: c.Arguments}
	if !done {
		return it
	}
	switch c.Status {
	case inference.MCPCompleted:
		it.Status, it.Output = "completed", ptr(c.Output)
	case inference.MCPFailed:
		it.Status, it.Error = "failed", ptr(c.Error)
		if c.Output != "" {
			it.Output = ptr(c.Output)
		}
	case inference.MCPDeclined:
		it.Status, it.Error = "failed", ptr("the user declined this call")
		if c.Error != "" {
			*it.Error += ": " + c.Error
		}
	default: // the stream ended while it ran
		it.Status = "incomplete"
	}
	return it
}

// mcpMessages converts the MCP items of input: an mcp_call given back is
// a call and its result; an mcp_approval_request, a call that waits; an
// mcp_approval_response, an approval (approvals); an mcp_list_tools
// given back says nothing the next listing does not.
func (it InputItem) mcpMessages(p string, out []inference.Message, assistant func() *inference.Message, approvals *[]inference.MCPApproval) ([]inference.Message, error) {
	switch it.Type {
	case "mcp_call", "mcp_approval_request":
		if it.ID == "" {
			return nil, formats.Missing(p + ".id")
		}
		if it.Name == "" {
			return nil, formats.Missing(p + ".name")
		}
		a := assistant()
		a.ToolCalls = append(a.ToolCalls, inference.ToolCall{ID: it.ID, Name: it.Name, Arguments: it.Arguments})
		if it.Type == "mcp_approval_request" {
			return out, nil
		}
		c := inference.MCPCall{Status: inference.MCPCompleted, Output: it.Output.Text}
		if it.Error != nil && *it.Error != "" {
			c.Status, c.Error = inference.MCPFailed, *it.Error
		}
		return append(out, inference.Message{Role: inference.RoleTool, ToolCallID: it.ID, Name: it.Name,
			Content: []inference.Part{{Text: c.Text()}}}), nil
	case "mcp_approval_response":
		if it.ApprovalRequestID == "" {
			return nil, formats.Missing(p + ".approval_request_id")
		}
		if it.Approve == nil {
			return nil, formats.Missing(p + ".approve")
		}
		*approvals = append(*approvals, inference.MCPApproval{CallID: it.ApprovalRequestID, Approve: *it.Approve, Reason: it.Reason})
		return out, nil
	}
	return out, nil // mcp_list_tools
}

// isMCPItem reports whether an input item's type is one of MCP's.
func isMCPItem(typ string) bool {
	return slices.Contains([]string{"mcp_call", "mcp_approval_request", "mcp_approval_response", "mcp_list_tools"}, typ)
}

// mcpEvent writes the events of an MCP listing or call: a listing when
// it ends (output_item.added, response.mcp_list_tools.in_progress,
// .completed or .failed, output_item.done); a call as it starts
// (output_item.added, response.mcp_call_arguments.delta and .done,
// response.mcp_call.in_progress) and ends (response.mcp_call.completed
// or .failed, output_item.done); a call that waits for approval, its
// mcp_approval_request item (added and done).
func (s *Stream) mcpEvent(ev inference.Event) error {
	if l := ev.MCPList; l != nil {
		if l.Status == inference.MCPInProgress {
			return nil // announced with its end
		}
		if err := s.closeItem("completed"); err != nil {
			return err
		}
		it := mcpListItem(*l)
		end := "response.mcp_list_tools.completed"
		if l.Status == inference.MCPFailed {
			end = "response.mcp_list_tools.failed"
		}
		return s.emitItem(it, "response.mcp_list_tools.in_progress", end)
	}
	c := ev.MCPCall
	if c == nil {
		return nil
	}
	if c.Status == inference.MCPAwaitingApproval {
		if err := s.closeItem("completed"); err != nil {
			return err
		}
		return s.emitItem(mcpCallItem(*c, true))
	}
	if c.Status != inference.MCPInProgress && s.open == "mcp_call" && s.id == c.ID {
		s.mcp = *c
		return s.closeItem("completed")
	}
	if err := s.closeItem("completed"); err != nil {
		return err
	}
	s.open, s.id, s.mcp, s.searched = "mcp_call", c.ID, *c, true
	added := mcpCallItem(*c, false)
	if err := s.emit(Event{Type: "response.output_item.added", OutputIndex: ptr(s.index), Item: &added}); err != nil {
		return err
	}
	args := c.Arguments
	for _, e := range []Event{
		{Type: "response.mcp_call_arguments.delta", ItemID: c.ID, OutputIndex: ptr(s.index), Delta: &args},
		{Type: "response.mcp_call_arguments.done", ItemID: c.ID, OutputIndex: ptr(s.index), Arguments: &args},
		{Type: "response.mcp_call.in_progress", ItemID: c.ID, OutputIndex: ptr(s.index)},
	} {
		if err := s.emit(e); err != nil {
			return err
		}
	}
	if c.Status != inference.MCPInProgress { // an end without a start: declined
		return s.closeItem("completed")
	}
	return nil
}

// emitItem writes a whole item at once: output_item.added, the events
// of types between, each naming it, and output_item.done.
func (s *Stream) emitItem(it Item, between ...string) error {
	if err := s.emit(Event{Type: "response.output_item.added", OutputIndex: ptr(s.index), Item: &it}); err != nil {
		return err
	}
	for _, typ := range between {
		if err := s.emit(Event{Type: typ, ItemID: it.ID, OutputIndex: ptr(s.index)}); err != nil {
			return err
		}
	}
	if err := s.emit(Event{Type: "response.output_item.done", OutputIndex: ptr(s.index), Item: &it}); err != nil {
		return err
	}
	s.items = append(s.items, it)
	s.index++
	return nil
}

// mcpCallEnd is the event that ends an mcp_call item.
func mcpCallEnd(c inference.MCPCall) string {
	if c.Status == inference.MCPCompleted {
		return "response.mcp_call.completed"
	}
	return "response.mcp_call.failed"
}

// mcpToolEcho is the mcp tool of a server as a response echoes it:
// its label, URL, allowed tools and approval rule, never its headers or
// authorization, which may hold secrets.
func mcpToolEcho(s inference.MCPServer) Tool {
	t := Tool{Type: "mcp", MCPTool: MCPTool{ServerLabel: s.Label, ServerURL: s.URL}}
	if s.AllowedTools != nil {
		t.AllowedTools, _ = json.Marshal(s.AllowedTools)
	}
	switch a := s.Approval; {
	case len(a.Always) == 0 && len(a.Never) == 0 && a.Default:
		t.RequireApproval = json.RawMessage(`"always"`)
	case len(a.Always) == 0 && len(a.Never) == 0:
		t.RequireApproval = json.RawMessage(`"never"`)
	default:
		t.RequireApproval, _ = json.Marshal(map[string]toolNames{"always": {ToolNames: a.Always}, "never": {ToolNames: a.Never}})
	}
	return t
}
