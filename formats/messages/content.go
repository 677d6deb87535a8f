package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/search"
)

// InputMessage is one message of a messages request.
type InputMessage struct {
	// Role is user or assistant.
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Content is a message's content: blocks, or a string when Blocks
// is nil.
type Content struct {
	Text   string
	Blocks []Block

	set bool
	err error
}

// MarshalJSON writes the blocks, or the text as a string.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Blocks != nil {
		return formats.Marshal(c.Blocks)
	}
	return formats.Marshal(c.Text)
}

// UnmarshalJSON accepts a string, an array of blocks or null. Of the
// blocks' own content, only a tool_result's (and an mcp_tool_result's)
// is read, and the blocks in it
// have none: see decode.
func (c *Content) UnmarshalJSON(data []byte) error {
	return c.decode(data, true)
}

// wireBlock is a block as a content array holds it, its content
// kept raw: Content.decode reads it only where it means something.
// Citations are not read: a text block given back means its text.
type wireBlock struct {
	plainBlock
	Content   json.RawMessage `json:"content"`
	Citations json.RawMessage `json:"citations"`
}

// plainBlock is Block's fields without its methods.
type plainBlock Block

// decode reads content; with toolResults, a tool_result's (and an
// mcp_tool_result's) block content too, itself without toolResults, and a web_search_tool_result's results.
// The content of other blocks, and of the blocks in a tool result, is left
// out: the canonical request reads neither, and reading content inside
// content level after level would take time quadratic in the nesting
// (json.Unmarshal checks its whole input at every level), minutes for a
// hostile body of tool results thousands deep.
func (c *Content) decode(data []byte, toolResults bool) error {
	*c = Content{}
	var blocks []wireBlock
	if err := wire.DecodeTextOrList(data, "string or array of content blocks", &c.Text, &blocks, &c.set, &c.err); err != nil {
		return err
	}
	if blocks == nil {
		return nil
	}
	c.Blocks = make([]Block, len(blocks))
	for i, w := range blocks {
		c.Blocks[i] = Block(w.plainBlock)
		if raw := bytes.TrimSpace(w.Content); toolResults && (w.Type == "tool_result" || w.Type == "mcp_tool_result") && len(raw) > 0 && string(raw) != "null" {
			c.Blocks[i].Content = new(Content)
			if err := c.Blocks[i].Content.decode(raw, false); err != nil {
				return err
			}
		}
		if raw := bytes.TrimSpace(w.Content); toolResults && w.Type == "web_search_tool_result" && len(raw) > 0 && string(raw) != "null" {
			c.Blocks[i].WebSearch = new(WebSearchContent)
			c.Blocks[i].WebSearch.decode(raw)
		}
	}
	return nil
}

// Block is one content block: text (Text, Citations), thinking
// (Thinking, Signature, ThinkingLatencyMS), image (Source), tool_use (ID,
// Name, Input), tool_result (ToolUseID, Content, IsError), or a web
// search: server_tool_use (ID, Name web_search, Input {query}) and
// web_search_tool_result (ToolUseID, WebSearch).
type Block struct {
	Type string `json:"type"`
	Text string `json:"text,omitzero"`
	// Citations are the web search results that a text block's text
	// comes from.
	Citations []Citation `json:"citations,omitzero"`

	Thinking  string `json:"thinking,omitzero"`
	Signature string `json:"signature,omitzero"`
	// ThinkingLatencyMS is how long the model thought, in milliseconds.
	ThinkingLatencyMS *int64 `json:"thinking_latency_ms,omitzero"`

	Source *ImageSource `json:"source,omitzero"`

	ID    string          `json:"id,omitzero"`
	Name  string          `json:"name,omitzero"`
	Input json.RawMessage `json:"input,omitzero"`

	ToolUseID string `json:"tool_use_id,omitzero"`
	// ServerName is the MCP server of an mcp_tool_use block.
	ServerName string   `json:"server_name,omitzero"`
	Content    *Content `json:"content,omitzero"`
	IsError    bool     `json:"is_error,omitzero"`
	// WebSearch is the content of a web_search_tool_result, written as
	// its "content".
	WebSearch *WebSearchContent `json:"-"`
	// CacheControl marks the end of a prefix the client asks to be
	// cached: see CacheControl.
	CacheControl *CacheControl `json:"cache_control,omitzero"`
}

// Citation is a citation of a web search result
// (web_search_result_location): its URL and title, an opaque reference
// to it, and the start of its text, up to 150 characters.
type Citation struct {
	Type           string `json:"type"`
	URL            string `json:"url"`
	Title          string `json:"title"`
	EncryptedIndex string `json:"encrypted_index"`
	CitedText      string `json:"cited_text"`
}

// WebSearchContent is the content of a web_search_tool_result:
// the results, or, when ErrorCode is set, the error object
// {type: web_search_tool_result_error, error_code}.
type WebSearchContent struct {
	Results   []WebSearchResult
	ErrorCode string

	err error // what decode found wrong, reported with its path by canonical
}

// WebSearchResult is one result of a web search
// (web_search_result). EncryptedContent carries what the model read of
// it, so that the result means the same when a client gives it back (see
// seal); PageAge is the date the page was published, or null.
type WebSearchResult struct {
	Type             string  `json:"type"`
	URL              string  `json:"url"`
	Title            string  `json:"title"`
	EncryptedContent string  `json:"encrypted_content"`
	PageAge          *string `json:"page_age"`
}

// MarshalJSON writes the results (an array), or the error object.
func (c WebSearchContent) MarshalJSON() ([]byte, error) {
	if c.ErrorCode != "" {
		return formats.Marshal(struct {
			Type      string `json:"type"`
			ErrorCode string `json:"error_code"`
		}{"web_search_tool_result_error", c.ErrorCode})
	}
	if c.Results == nil {
		return []byte("[]"), nil
	}
	return formats.Marshal(c.Results)
}

// decode reads the results or the error object, keeping what is wrong
// with them in err.
func (c *WebSearchContent) decode(data []byte) {
	switch kind := formats.JSONKind(data); kind {
	case "array":
		c.err = formats.Decode(data, &c.Results)
	case "object":
		var e struct {
			Type      string `json:"type"`
			ErrorCode string `json:"error_code"`
		}
		if c.err = formats.Decode(data, &e); c.err != nil {
			return
		}
		switch {
		case e.Type != "web_search_tool_result_error":
			c.err = &formats.RequestError{Param: "type", Message: fmt.Sprintf("type must be web_search_tool_result_error, got %q", e.Type)}
		case e.ErrorCode == "":
			c.err = formats.Missing("error_code")
		}
		c.ErrorCode = e.ErrorCode
	default:
		c.err = formats.TypeError("", kind, "array of web_search_result or web_search_tool_result_error")
	}
}

// toolText returns the tool message of a search given back (at path)
// with its query: the results that the encrypted_content of each carries,
// numbered from first, as the model read them; or its failure. n is the
// number of results.
func (c *WebSearchContent) toolText(path, query string, first int) (text string, n int, err error) {
	switch {
	case c == nil:
		return "", 0, formats.Missing(path)
	case c.err != nil:
		return "", 0, wire.Prefixed(path, c.err)
	case c.ErrorCode != "":
		return inference.SearchCall{Status: inference.SearchFailed, Error: c.ErrorCode}.Text(0), 0, nil
	}
	results := make([]search.Result, len(c.Results))
	for k, r := range c.Results {
		var sr sealedResult
		if err := unseal(r.EncryptedContent, &sr); err != nil {
			p := fmt.Sprintf("%s[%d].encrypted_content", path, k)
			return "", 0, formats.Invalid(p, "%s is not the encrypted_content of a result from this server: %v", p, err)
		}
		results[k] = search.Result(sr)
	}
	call := inference.SearchCall{Query: query, Status: inference.SearchCompleted, Results: results, First: first}
	return call.Text(maxSearchChars), len(results), nil
}

// maxSearchChars bounds the text of a result given back, as
// inference.SearchOptions.ContentChars bounds it.
const maxSearchChars = 10000

// MarshalJSON writes the fields of the block's type, empty strings
// included where the type has them (a text block always has "text").
func (b Block) MarshalJSON() ([]byte, error) {
	switch b.Type {
	case "text":
		return formats.Marshal(struct {
			Type      string     `json:"type"`
			Text      string     `json:"text"`
			Citations []Citation `json:"citations,omitzero"`
		}{b.Type, b.Text, b.Citations})
	case "thinking":
		return formats.Marshal(struct {
			Type              string `json:"type"`
			Thinking          string `json:"thinking"`
			Signature         string `json:"signature"`
			ThinkingLatencyMS *int64 `json:"thinking_latency_ms,omitzero"`
		}{b.Type, b.Thinking, b.Signature, b.ThinkingLatencyMS})
	case "tool_use", "server_tool_use":
		input := b.Input
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		return formats.Marshal(struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}{b.Type, b.ID, b.Name, input})
	case "mcp_tool_use":
		input := b.Input
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		return formats.Marshal(struct {
			Type       string          `json:"type"`
			ID         string          `json:"id"`
			Name       string          `json:"name"`
			ServerName string          `json:"server_name"`
			Input      json.RawMessage `json:"input"`
		}{b.Type, b.ID, b.Name, b.ServerName, input})
	case "mcp_tool_result":
		return formats.Marshal(struct {
			Type      string   `json:"type"`
			ToolUseID string   `json:"tool_use_id"`
			IsError   bool     `json:"is_error"`
			Content   *Content `json:"content"`
		}{b.Type, b.ToolUseID, b.IsError, b.Content})
	case "web_search_tool_result":
		return formats.Marshal(struct {
			Type      string            `json:"type"`
			ToolUseID string            `json:"tool_use_id"`
			Content   *WebSearchContent `json:"content"`
		}{b.Type, b.ToolUseID, b.WebSearch})
	}
	type plain Block
	return formats.Marshal(plain(b))
}

// ImageSource is the source of an image block: type base64 with
// media_type and data (type url is refused: images are not fetched).
type ImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitzero"`
	Data      string `json:"data,omitzero"`
	URL       string `json:"url,omitzero"`
}

// canonical checks one message and converts it: tool_result blocks become
// tool messages before the rest of the user's content. An assistant's
// web search, a server_tool_use block and its web_search_tool_result,
// becomes what the engine gave the model: a call of the search tool that
// ends an assistant message, and a tool message with the results as the
// model read them; the assistant's content after it is a message of its
// own.
func (m InputMessage) canonical(path string) ([]inference.Message, error) {
	var msg inference.Message
	switch m.Role {
	case "user":
		msg.Role = inference.RoleUser
	case "assistant":
		msg.Role = inference.RoleAssistant
	case "":
		return nil, formats.Missing(path + ".role")
	default:
		return nil, formats.Invalid(path+".role", "%s.role must be user or assistant, got %q", path, m.Role)
	}
	if m.Content.err != nil {
		return nil, wire.Prefixed(path+".content", m.Content.err)
	}
	if !m.Content.set {
		return nil, formats.Missing(path + ".content")
	}
	if m.Content.Blocks == nil {
		msg.Content = []inference.Part{{Text: m.Content.Text}}
		return []inference.Message{msg}, nil
	}
	var out []inference.Message
	// The thinking of all blocks, built up in one buffer: += would copy
	// the text so far at every block, quadratic time for many blocks.
	var reasoning strings.Builder
	// The queries of the searches, by server_tool_use id, and the number
	// of the next search result: the model numbers the results of a
	// response from 1.
	queries := map[string]string{}
	first := 1
	for j, b := range m.Content.Blocks {
		bp := fmt.Sprintf("%s.content[%d]", path, j)
		switch b.Type {
		case "text":
			msg.Content = append(msg.Content, inference.Part{Text: b.Text})
		case "image":
			part, err := b.image(bp)
			if err != nil {
				return nil, err
			}
			msg.Content = append(msg.Content, part)
		case "thinking", "redacted_thinking":
			if msg.Role != inference.RoleAssistant {
				return nil, formats.Invalid(bp+".type", "%s: only assistant messages carry thinking", bp)
			}
			reasoning.WriteString(b.Thinking)
		case "tool_use":
			if msg.Role != inference.RoleAssistant {
				return nil, formats.Invalid(bp+".type", "%s: only assistant messages carry tool_use", bp)
			}
			if err := wire.CheckToolName(bp+".name", b.Name); err != nil {
				return nil, err
			}
			if b.ID == "" {
				return nil, formats.Missing(bp + ".id")
			}
			if s := bytes.TrimSpace(b.Input); len(s) > 0 && s[0] != '{' && string(s) != "null" {
				return nil, formats.Invalid(bp+".input", "%s.input must be an object", bp)
			}
			msg.ToolCalls = append(msg.ToolCalls, inference.ToolCall{ID: b.ID, Name: b.Name, Arguments: toolArguments(b.Input)})
		case "server_tool_use":
			if msg.Role != inference.RoleAssistant {
				return nil, formats.Invalid(bp+".type", "%s: only assistant messages carry server_tool_use", bp)
			}
			if b.Name != inference.SearchToolName {
				return nil, formats.Invalid(bp+".name", "%s.name must be %q, the one server tool, got %q", bp, inference.SearchToolName, b.Name)
			}
			if b.ID == "" {
				return nil, formats.Missing(bp + ".id")
			}
			query, ok := wire.SearchQuery(b.Input)
			if !ok {
				return nil, formats.Invalid(bp+".input", "%s.input must be an object with a query", bp)
			}
			queries[b.ID] = query
			msg.ToolCalls = append(msg.ToolCalls, inference.ToolCall{ID: b.ID, Name: inference.SearchToolName, Arguments: toolArguments(b.Input)})
		case "web_search_tool_result":
			if msg.Role != inference.RoleAssistant {
				return nil, formats.Invalid(bp+".type", "%s: only assistant messages carry web_search_tool_result", bp)
			}
			if b.ToolUseID == "" {
				return nil, formats.Missing(bp + ".tool_use_id")
			}
			query, ok := queries[b.ToolUseID]
			if !ok {
				return nil, formats.Invalid(bp+".tool_use_id", "%s.tool_use_id %q names no server_tool_use block before it", bp, b.ToolUseID)
			}
			text, n, err := b.WebSearch.toolText(bp+".content", query, first)
			if err != nil {
				return nil, err
			}
			first += n
			msg.Reasoning = reasoning.String()
			reasoning.Reset()
			if len(msg.Content) > 0 || len(msg.ToolCalls) > 0 || msg.Reasoning != "" {
				out = append(out, msg)
			}
			out = append(out, inference.Message{Role: inference.RoleTool, ToolCallID: b.ToolUseID, Name: inference.SearchToolName,
				Content: []inference.Part{{Text: text}}})
			msg = inference.Message{Role: msg.Role}
		case "mcp_tool_use":
			// A call of an MCP tool of an earlier answer: the call, and
			// the mcp_tool_result block after it, its result.
			if msg.Role != inference.RoleAssistant {
				return nil, formats.Invalid(bp+".type", "%s: only assistant messages carry mcp_tool_use", bp)
			}
			if b.ID == "" {
				return nil, formats.Missing(bp + ".id")
			}
			if b.Name == "" {
				return nil, formats.Missing(bp + ".name")
			}
			if s := bytes.TrimSpace(b.Input); len(s) > 0 && s[0] != '{' && string(s) != "null" {
				return nil, formats.Invalid(bp+".input", "%s.input must be an object", bp)
			}
			msg.ToolCalls = append(msg.ToolCalls, inference.ToolCall{ID: b.ID, Name: b.Name, Arguments: toolArguments(b.Input)})
		case "mcp_tool_result":
			if msg.Role != inference.RoleAssistant {
				return nil, formats.Invalid(bp+".type", "%s: only assistant messages carry mcp_tool_result", bp)
			}
			i := slices.IndexFunc(msg.ToolCalls, func(c inference.ToolCall) bool { return c.ID == b.ToolUseID })
			if b.ToolUseID == "" || i < 0 {
				return nil, formats.Invalid(bp+".tool_use_id", "%s.tool_use_id %q names no mcp_tool_use block before it", bp, b.ToolUseID)
			}
			res, err := b.toolResult(bp)
			if err != nil {
				return nil, err
			}
			var text strings.Builder
			for _, p := range res.Content {
				text.WriteString(p.Text)
			}
			c := inference.MCPCall{Status: inference.MCPCompleted, Output: text.String()}
			if b.IsError {
				c.Status = inference.MCPFailed
			}
			msg.Reasoning = reasoning.String()
			reasoning.Reset()
			out = append(out, msg, inference.Message{Role: inference.RoleTool, ToolCallID: b.ToolUseID, Name: msg.ToolCalls[i].Name,
				Content: []inference.Part{{Text: c.Text()}}})
			msg = inference.Message{Role: msg.Role}
		case "tool_result":
			if msg.Role != inference.RoleUser {
				return nil, formats.Invalid(bp+".type", "%s: only user messages carry tool_result", bp)
			}
			if b.ToolUseID == "" {
				return nil, formats.Missing(bp + ".tool_use_id")
			}
			res, err := b.toolResult(bp)
			if err != nil {
				return nil, err
			}
			out = append(out, res)
		case "":
			return nil, formats.Missing(bp + ".type")
		default:
			return nil, formats.Invalid(bp+".type", "%s.type must be text, image, thinking, tool_use, tool_result, server_tool_use, web_search_tool_result, mcp_tool_use or mcp_tool_result, got %q", bp, b.Type)
		}
	}
	msg.Reasoning = reasoning.String()
	if len(msg.Content) > 0 || len(msg.ToolCalls) > 0 || msg.Reasoning != "" || len(out) == 0 {
		out = append(out, msg)
	}
	return out, nil
}

// image returns the part of an image block at path bp: its bytes, or the
// URL it names, which the server fetches.
func (b Block) image(bp string) (inference.Part, error) {
	if b.Source == nil {
		return inference.Part{}, formats.Missing(bp + ".source")
	}
	switch b.Source.Type {
	case "base64":
		img, err := wire.DecodeBase64(bp+".source.data", b.Source.Data)
		return inference.Part{Image: img}, err
	case "url":
		return wire.RemoteImage(bp+".source.url", b.Source.URL)
	}
	return inference.Part{}, formats.Invalid(bp+".source.type", "%s.source.type must be base64 or url, got %q", bp, b.Source.Type)
}

// toolResult returns the tool message of a tool_result block at path bp,
// whose content is a string or text blocks.
func (b Block) toolResult(bp string) (inference.Message, error) {
	res := inference.Message{Role: inference.RoleTool, ToolCallID: b.ToolUseID}
	if b.Content == nil {
		return res, nil
	}
	if b.Content.err != nil {
		return res, wire.Prefixed(bp+".content", b.Content.err)
	}
	if b.Content.Blocks == nil {
		res.Content = []inference.Part{{Text: b.Content.Text}}
	}
	for k, c := range b.Content.Blocks {
		if c.Type != "text" {
			cp := fmt.Sprintf("%s.content[%d].type", bp, k)
			return res, formats.Invalid(cp, "%s: tool_result content must be text blocks", cp)
		}
		res.Content = append(res.Content, inference.Part{Text: c.Text})
	}
	return res, nil
}

// isToolResults reports whether blocks are all tool_result blocks.
func isToolResults(blocks []Block) bool {
	return len(blocks) > 0 && !slices.ContainsFunc(blocks, func(b Block) bool { return b.Type != "tool_result" })
}

// newInputMessage converts a user or assistant message.
func newInputMessage(m inference.Message) InputMessage {
	out := InputMessage{Role: string(m.Role), Content: Content{Blocks: []Block{}, set: true}}
	if m.Reasoning != "" {
		out.Content.Blocks = append(out.Content.Blocks, Block{Type: "thinking", Thinking: m.Reasoning, Signature: signature(m.Reasoning)})
	}
	for _, p := range m.Content {
		switch {
		case p.Image != nil:
			out.Content.Blocks = append(out.Content.Blocks, Block{Type: "image", Source: &ImageSource{
				Type: "base64", MediaType: wire.MediaType(p.Image), Data: wire.Base64Std(p.Image)}})
		case p.URL != "":
			out.Content.Blocks = append(out.Content.Blocks, Block{Type: "image", Source: &ImageSource{Type: "url", URL: p.URL}})
		default:
			out.Content.Blocks = append(out.Content.Blocks, Block{Type: "text", Text: p.Text})
		}
	}
	for _, c := range m.ToolCalls {
		out.Content.Blocks = append(out.Content.Blocks, toolUseBlock(c))
	}
	return out
}
