package responses

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
)

// Input is the input: a string when Items is nil, else items.
type Input struct {
	Text  string
	Items []InputItem

	set bool
}

// IsZero reports whether the input is absent.
func (in Input) IsZero() bool { return !in.set && in.Text == "" && in.Items == nil }

// MarshalJSON writes the items, or the string.
func (in Input) MarshalJSON() ([]byte, error) {
	if in.Items != nil {
		return formats.Marshal(in.Items)
	}
	return formats.Marshal(in.Text)
}

// UnmarshalJSON accepts a string or an array of items.
func (in *Input) UnmarshalJSON(data []byte) error {
	*in = Input{}
	switch formats.JSONKind(data) {
	case "null":
		return nil
	case "string":
		in.set = true
		return json.Unmarshal(data, &in.Text)
	case "array":
		in.set = true
		in.Items = []InputItem{}
		if err := formats.Decode(data, &in.Items); err != nil {
			return wire.Prefixed("input", err)
		}
		for i, it := range in.Items {
			if it.Content.err != nil {
				return wire.Prefixed(fmt.Sprintf("input[%d].content", i), it.Content.err)
			}
			if it.Output.err != nil {
				return wire.Prefixed(fmt.Sprintf("input[%d].output", i), it.Output.err)
			}
		}
		return nil
	}
	return &json.UnmarshalTypeError{Value: formats.JSONKind(data), Type: reflect.TypeFor[string]()}
}

// InputItem is an input item: a message (type "message" or absent,
// with role and content), a function_call (call_id, name, arguments), a
// function_call_output (call_id, output), a reasoning item given back
// (its reasoning_text content joins the next assistant message), or a
// web_search_call given back (id, status, action), which becomes a call
// of the search tool whose results are not kept.
type InputItem struct {
	Type    string       `json:"type,omitzero"`
	ID      string       `json:"id,omitzero"`
	Role    string       `json:"role,omitzero"`
	Content InputContent `json:"content,omitzero"`
	Status  string       `json:"status,omitzero"`

	CallID    string `json:"call_id,omitzero"`
	Name      string `json:"name,omitzero"`
	Arguments string `json:"arguments,omitzero"`
	// Output is a function_call_output's result: a string, or parts
	// (input_text, input_image).
	Output InputContent `json:"output,omitzero"`
	// Summary is a reasoning item's summary (summary_text parts).
	Summary []Part `json:"summary,omitzero"`
	// Action is what a web_search_call did.
	Action *SearchAction `json:"action,omitzero"`

	// ServerLabel and Error are an mcp_call's given back (Output its
	// result); ApprovalRequestID, Approve and Reason an
	// mcp_approval_response's.
	ServerLabel       string          `json:"server_label,omitzero"`
	Error             *string         `json:"error,omitzero"`
	Tools             json.RawMessage `json:"tools,omitzero"`
	ApprovalRequestID string          `json:"approval_request_id,omitzero"`
	Approve           *bool           `json:"approve,omitzero"`
	Reason            string          `json:"reason,omitzero"`
}

// InputContent is an item's content: a string when Parts is nil, else
// parts.
type InputContent struct {
	Text  string
	Parts []InputPart

	set bool
	err error
}

// IsZero reports whether the content is absent.
func (c InputContent) IsZero() bool { return !c.set && c.Text == "" && c.Parts == nil }

// MarshalJSON writes the parts, or the string.
func (c InputContent) MarshalJSON() ([]byte, error) {
	if c.Parts != nil {
		return formats.Marshal(c.Parts)
	}
	return formats.Marshal(c.Text)
}

// UnmarshalJSON accepts a string, an array of parts or null.
func (c *InputContent) UnmarshalJSON(data []byte) error {
	*c = InputContent{}
	return wire.DecodeTextOrList(data, "string or array of content parts", &c.Text, &c.Parts, &c.set, &c.err)
}

// InputPart is a content part of an input item: input_text (text),
// input_image (image_url, a data: URL), or output_text and reasoning_text
// of earlier output given back.
type InputPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitzero"`
	ImageURL string `json:"image_url,omitzero"`
	Detail   string `json:"detail,omitzero"`
}

// inputMessages converts the input into messages.
func inputMessages(in Input, continues bool) ([]inference.Message, []inference.MCPApproval, error) {
	if in.Items == nil {
		return []inference.Message{inference.Text(inference.RoleUser, in.Text)}, nil, nil
	}
	if len(in.Items) == 0 {
		return nil, nil, formats.Invalid("input", "input must hold at least one item")
	}
	var approvals []inference.MCPApproval
	var out []inference.Message
	// reasoning is the text of the reasoning items since the last
	// assistant message, built up in one buffer: += would copy the text so
	// far at every part, quadratic time for many parts.
	var reasoning strings.Builder
	// assistant returns the last message if it is an assistant's, to which
	// function calls attach.
	lastAssistant := func() *inference.Message {
		if n := len(out); n > 0 && out[n-1].Role == inference.RoleAssistant {
			return &out[n-1]
		}
		out = append(out, inference.Message{Role: inference.RoleAssistant, Reasoning: reasoning.String()})
		reasoning.Reset()
		return &out[len(out)-1]
	}
	for i, it := range in.Items {
		p := fmt.Sprintf("input[%d]", i)
		switch it.Type {
		case "", "message":
			m, err := it.message(p)
			if err != nil {
				return nil, nil, err
			}
			if m.Role == inference.RoleAssistant {
				m.Reasoning = reasoning.String()
				reasoning.Reset()
			}
			out = append(out, m)
		case "function_call":
			if it.CallID == "" {
				return nil, nil, formats.Missing(p + ".call_id")
			}
			if err := wire.CheckToolName(p+".name", it.Name); err != nil {
				return nil, nil, err
			}
			a := lastAssistant()
			a.ToolCalls = append(a.ToolCalls, inference.ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		case "function_call_output":
			if it.CallID == "" {
				return nil, nil, formats.Missing(p + ".call_id")
			}
			parts, err := it.Output.parts(p + ".output")
			if err != nil {
				return nil, nil, err
			}
			out = append(out, inference.Message{Role: inference.RoleTool, ToolCallID: it.CallID, Name: it.Name, Content: parts})
		case "reasoning":
			// The thinking, or, when a client sends back the item as it
			// got it, its summary.
			for _, part := range it.Content.Parts {
				reasoning.WriteString(part.Text)
			}
			if len(it.Content.Parts) == 0 {
				for _, part := range it.Summary {
					reasoning.WriteString(part.Text)
				}
			}
		case "web_search_call":
			// A search of an earlier response: a call of the search tool
			// and its result, whose text is not kept.
			call := it.searchCall(i)
			a := lastAssistant()
			a.ToolCalls = append(a.ToolCalls, call)
			out = append(out, inference.Message{Role: inference.RoleTool, ToolCallID: call.ID, Name: call.Name,
				Content: []inference.Part{{Text: it.searchResult()}}})
		default:
			if isMCPItem(it.Type) {
				var err error
				if out, err = it.mcpMessages(p, out, lastAssistant, &approvals); err != nil {
					return nil, nil, err
				}
				continue
			}
			return nil, nil, formats.Invalid(p+".type", "%s.type must be message, function_call, function_call_output, reasoning, web_search_call or one of the mcp items, got %q", p, it.Type)
		}
	}
	if len(out) == 0 && !(continues && len(approvals) > 0) {
		// Only reasoning items: nothing for the model to answer, and the
		// engine needs a message.
		return nil, nil, formats.Invalid("input", "input must hold a message, function_call or function_call_output item, not only reasoning")
	}
	formats.NameToolResults(out)
	return out, approvals, nil
}

// searchCall returns the call of the search tool that web_search_call
// item i made: its id (or one of its index), and its query, or what an
// open_page or find_in_page action read.
func (it InputItem) searchCall(i int) inference.ToolCall {
	id := cmp.Or(it.ID, fmt.Sprintf("ws_input_%d", i))
	var query string
	if a := it.Action; a != nil {
		query = cmp.Or(a.Query, strings.Join(a.Queries, "; "), a.URL, a.Pattern)
	}
	args := formats.SearchArguments(query)
	return inference.ToolCall{ID: id, Name: inference.SearchToolName, Arguments: string(args)}
}

// searchResult is what a web_search_call item given back tells the model
// of the search's results: that they are not kept, and which pages they
// were, when the item lists its sources.
func (it InputItem) searchResult() string {
	if it.Status == "failed" {
		return inference.SearchCall{Status: inference.SearchFailed}.Text(0)
	}
	text := "The results of this search are not kept."
	if a := it.Action; a != nil && len(a.Sources) > 0 {
		urls := make([]string, len(a.Sources))
		for i, s := range a.Sources {
			urls[i] = s.URL
		}
		text += " They came from: " + strings.Join(urls, ", ")
	}
	return text
}

// message converts a message item.
func (it InputItem) message(p string) (inference.Message, error) {
	var m inference.Message
	switch it.Role {
	case "user":
		m.Role = inference.RoleUser
	case "assistant":
		m.Role = inference.RoleAssistant
	case "system", "developer":
		m.Role = inference.RoleSystem
	case "":
		return m, formats.Missing(p + ".role")
	default:
		return m, formats.Invalid(p+".role", "%s.role must be user, assistant, system or developer, got %q", p, it.Role)
	}
	if !it.Content.set {
		return m, formats.Missing(p + ".content")
	}
	parts, err := it.Content.parts(p + ".content")
	m.Content = parts
	return m, err
}

// parts converts content at path p into the engine's parts.
func (c InputContent) parts(p string) ([]inference.Part, error) {
	if c.Parts == nil {
		return []inference.Part{{Text: c.Text}}, nil
	}
	var out []inference.Part
	for j, part := range c.Parts {
		pp := fmt.Sprintf("%s[%d]", p, j)
		switch part.Type {
		case "input_text", "output_text", "text":
			out = append(out, inference.Part{Text: part.Text})
		case "input_image":
			img, err := wire.ImagePart(pp+".image_url", part.ImageURL)
			if err != nil {
				return nil, err
			}
			out = append(out, img)
		case "refusal":
		case "":
			return nil, formats.Missing(pp + ".type")
		default:
			return nil, formats.Invalid(pp+".type", "%s.type must be input_text or input_image, got %q", pp, part.Type)
		}
	}
	return out, nil
}

// newInputItems converts one canonical message into items.
func newInputItems(m inference.Message) []InputItem {
	if m.Role == inference.RoleTool {
		out := InputItem{Type: "function_call_output", CallID: m.ToolCallID, Output: InputContent{Text: wire.JoinText(m.Content), set: true}}
		if wire.HasImage(m.Content) { // output as parts, so that the images stay
			out.Output = InputContent{Parts: inputParts(m.Content, "input_text"), set: true}
		}
		return []InputItem{out}
	}
	var out []InputItem
	if m.Reasoning != "" {
		out = append(out, InputItem{Type: "reasoning", Content: InputContent{Parts: []InputPart{{Type: "reasoning_text", Text: m.Reasoning}}, set: true}})
	}
	textType := "input_text"
	if m.Role == inference.RoleAssistant {
		textType = "output_text"
	}
	if len(m.Content) > 0 || len(m.ToolCalls) == 0 {
		out = append(out, InputItem{Type: "message", Role: string(m.Role), Content: InputContent{Parts: inputParts(m.Content, textType), set: true}})
	}
	for _, c := range m.ToolCalls {
		out = append(out, InputItem{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return out
}

// inputParts converts content into parts, its text as parts of
// textType.
func inputParts(content []inference.Part, textType string) []InputPart {
	parts := []InputPart{}
	for _, p := range content {
		if p.Image != nil || p.URL != "" {
			parts = append(parts, InputPart{Type: "input_image", ImageURL: wire.ImageURL(p)})
		} else {
			parts = append(parts, InputPart{Type: textType, Text: p.Text})
		}
	}
	return parts
}
