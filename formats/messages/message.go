package messages

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/search"
)

// Message is the response of a messages request.
type Message struct {
	ID   string `json:"id"`
	Type string `json:"type"` // message
	Role string `json:"role"` // assistant
	// Content is a thinking block when the model thought, then the text
	// block (left out when the model only called tools), then a tool_use
	// block per tool call. The answer of a request that searches is
	// split instead, as its stream writes it (see Stream): its
	// text in blocks, with a server_tool_use and a web_search_tool_result
	// block where the model searched, and each span of text that cites
	// results a block of its own with its citations.
	Content []Block `json:"content"`
	Model   string  `json:"model"`
	// StopReason is end_turn, stop_sequence, max_tokens or tool_use; null
	// in message_start.
	StopReason *string `json:"stop_reason"`
	// StopSequence is the stop sequence that ended the output, or null.
	StopSequence *string `json:"stop_sequence"`
	Usage        Usage   `json:"usage"`
}

// Usage counts the tokens of a message. As in the Anthropic API, the
// whole prompt is input_tokens + cache_creation_input_tokens +
// cache_read_input_tokens, each prompt token counted once:
// cache_read_input_tokens are the tokens read from the prefix cache
// (inference.Usage.CachedTokens); cache_creation_input_tokens those of
// the rest that lie up to the client's last cache_control breakpoint
// (see CacheControl), 0 without one; and input_tokens all the others.
// The engine's cache keeps every prompt it decodes, so a request sent
// again reads its prefix from the cache whether or not it marked one;
// the breakpoint only says which decoded tokens the client asked to be
// written. message_start, sent before the prompt is decoded, cannot split
// the prompt yet: it counts the whole prompt as input_tokens, and
// message_delta's usage, the whole message's total that the SDKs'
// accumulators take in its place, gives the split.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	// ServerToolUse counts the searches of a request with the web search
	// tool; nil for other requests.
	ServerToolUse *ServerToolUse `json:"server_tool_use,omitzero"`
}

// ServerToolUse counts the requests of the server tools: the web
// searches (inference.Usage.WebSearches). Web fetches are always 0.
type ServerToolUse struct {
	WebSearchRequests int `json:"web_search_requests"`
	WebFetchRequests  int `json:"web_fetch_requests"`
}

// newUsage converts the engine's usage of a finished request.
func newUsage(req formats.Request, u inference.Usage) Usage {
	written := 0
	if req.Cache != nil {
		written = min(max(req.Cache.Tokens-u.CachedTokens, 0), u.PromptTokens-u.CachedTokens)
	}
	out := Usage{
		InputTokens:              u.PromptTokens - u.CachedTokens - written,
		OutputTokens:             u.CompletionTokens,
		CacheCreationInputTokens: written,
		CacheReadInputTokens:     u.CachedTokens,
	}
	if req.Search != nil {
		out.ServerToolUse = &ServerToolUse{WebSearchRequests: u.WebSearches}
	}
	return out
}

// stopReason returns the stop reason and stop sequence of a result.
func stopReason(res inference.Result) (*string, *string) {
	switch res.FinishReason {
	case inference.FinishLength:
		return ptr("max_tokens"), nil
	case inference.FinishStopSequence:
		return ptr("stop_sequence"), ptr(res.StopSequence)
	case inference.FinishToolCalls:
		return ptr("tool_use"), nil
	}
	return ptr("end_turn"), nil
}

// toolUseBlock returns the tool_use block of a call.
func toolUseBlock(c inference.ToolCall) Block {
	input := json.RawMessage(c.Arguments)
	if !json.Valid(input) {
		// The engine's calls hold JSON; a call given back with other
		// arguments keeps them as a string rather than break the body.
		input, _ = json.Marshal(c.Arguments)
	}
	return Block{Type: "tool_use", ID: c.ID, Name: c.Name, Input: input}
}

// srvToolID is the id of a search's server_tool_use block: srvtoolu_ and
// the search's id without its ws_.
func srvToolID(searchID string) string { return "srvtoolu_" + strings.TrimPrefix(searchID, "ws_") }

// serverToolUseBlock returns the server_tool_use block of a search.
func serverToolUseBlock(sc inference.SearchCall) Block {
	return Block{Type: "server_tool_use", ID: srvToolID(sc.ID), Name: inference.SearchToolName, Input: formats.SearchArguments(sc.Query)}
}

// webSearchResultBlock returns the web_search_tool_result block of a
// finished search: its results, or the error unavailable when it failed,
// query_too_long when the output limit cut its call short in the query
// (no search ran).
func webSearchResultBlock(sc inference.SearchCall) Block {
	content := &WebSearchContent{Results: []WebSearchResult{}}
	switch sc.Status {
	case inference.SearchFailed:
		content = &WebSearchContent{ErrorCode: "unavailable"}
	case inference.SearchIncomplete:
		content = &WebSearchContent{ErrorCode: "query_too_long"}
	}
	for _, r := range sc.Results {
		res := WebSearchResult{Type: "web_search_result", URL: r.URL, Title: r.Title,
			EncryptedContent: seal(sealedResult(r))}
		if !r.Published.IsZero() {
			res.PageAge = ptr(r.Published.Format("January 2, 2006"))
		}
		content.Results = append(content.Results, res)
	}
	return Block{Type: "web_search_tool_result", ToolUseID: srvToolID(sc.ID), WebSearch: content}
}

// citedChars bounds a citation's cited_text, in characters.
const citedChars = 150

// citation returns the citation of c, a result of searches.
func citation(c inference.Citation, searches []inference.SearchCall) Citation {
	out := Citation{Type: "web_search_result_location", URL: c.URL, Title: c.Title,
		EncryptedIndex: seal(sealedIndex{Source: c.Source})}
	for _, sc := range searches {
		if i := c.Source - sc.First; i >= 0 && i < len(sc.Results) {
			out.CitedText = search.Truncate(sc.Results[i].Content, citedChars)
		}
	}
	return out
}

// sealedResult is what a result's encrypted_content carries: the result,
// as the model read it; a search.Result with JSON names, converted both ways.
type sealedResult struct {
	URL       string    `json:"url"`
	Title     string    `json:"title"`
	Content   string    `json:"content"`
	Published time.Time `json:"page_age,omitzero"`
}

// sealedIndex is what a citation's encrypted_index carries: the number
// the model cited the result with.
type sealedIndex struct {
	Source int `json:"source"`
}

// sealVersion is the first byte that seal writes: the version of its
// layout.
const sealVersion = 1

// seal returns v as an encrypted_content or encrypted_index: base64 of a
// version byte and v's JSON, which unseal reads back when a client gives
// the block back. It is opaque, not encrypted: it carries only what the
// client was shown or could write in a tool result itself.
func seal(v any) string {
	b, err := formats.Marshal(v)
	if err != nil { // cannot happen: v is one of the sealed types
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(append([]byte{sealVersion}, b...))
}

// unseal reads what seal wrote into v.
func unseal(s string, v any) error {
	b, err := base64.StdEncoding.DecodeString(s)
	switch {
	case err != nil:
		return errors.New("it is not base64")
	case len(b) == 0 || b[0] != sealVersion:
		return errors.New("its version is unknown")
	}
	if err := json.Unmarshal(b[1:], v); err != nil {
		return fmt.Errorf("its JSON is not valid: %v", err)
	}
	return nil
}

// signature returns the signature of a thinking block: an opaque,
// deterministic digest of its text. The Anthropic SDKs require the field
// and send it back with the block; the server does not check it.
func signature(thinking string) string {
	sum := sha256.Sum256([]byte(thinking))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// thinkingLatency is the time the model spent thinking, in milliseconds.
func thinkingLatency(res inference.Result) int64 {
	return res.Timings.Thinking.Milliseconds()
}

// NewMessage returns the message of res answering req, with a fresh msg_
// id. A thinking block comes first when there is reasoning.
func NewMessage(req formats.Request, res inference.Result, o formats.Options) Message {
	stop, seq := stopReason(res)
	m := Message{
		ID: o.ID("msg_"), Type: "message", Role: "assistant", Model: req.Model,
		Content:    []Block{},
		StopReason: stop, StopSequence: seq,
		Usage: newUsage(req, res.Usage),
	}
	// With searches, the thinking of each turn comes after the search
	// before it (see Stream.rest): the first block holds the
	// first turn's.
	thought := res.Reasoning
	if req.Search != nil && len(res.Searches) > 0 {
		thought = res.Reasoning[:min(res.Searches[0].ReasoningAt, len(res.Reasoning))]
	}
	if thought != "" {
		m.Content = append(m.Content, Block{Type: "thinking", Thinking: thought,
			Signature: signature(thought), ThinkingLatencyMS: ptr(thinkingLatency(res))})
	}
	switch {
	case req.Search != nil:
		// The blocks that the stream of res writes.
		s := &Stream{req: req, index: len(m.Content), collect: m.add}
		s.sent.Reasoning.WriteString(thought)
		_ = s.rest(res) // collecting cannot fail
		if !s.textDone && len(res.ToolCalls) == 0 {
			m.Content = append(m.Content, Block{Type: "text"})
		}
	case req.MCP != nil:
		// The text before each call, the call's mcp_tool_use and
		// mcp_tool_result blocks, then the text after the last.
		at := 0
		for _, c := range res.MCPCalls {
			if end := min(max(c.At, at), len(res.Text)); end > at {
				m.Content = append(m.Content, Block{Type: "text", Text: res.Text[at:end]})
				at = end
			}
			m.Content = append(m.Content, mcpBlocks(c)...)
		}
		if at < len(res.Text) || len(res.MCPCalls) == 0 && len(res.ToolCalls) == 0 {
			m.Content = append(m.Content, Block{Type: "text", Text: res.Text[at:]})
		}
	case res.Text != "" || len(res.ToolCalls) == 0:
		m.Content = append(m.Content, Block{Type: "text", Text: res.Text})
	}
	for _, c := range res.ToolCalls {
		m.Content = append(m.Content, toolUseBlock(c))
	}
	return m
}

// add folds an event of a messages stream into m's blocks: a block
// started, or a delta of the last one.
func (m *Message) add(ev Event) {
	switch ev.Type {
	case "content_block_start":
		m.Content = append(m.Content, *ev.ContentBlock)
	case "content_block_delta":
		b := &m.Content[len(m.Content)-1]
		switch d := ev.Delta; d.Type {
		case "text_delta":
			b.Text += *d.Text
		case "thinking_delta":
			b.Thinking += *d.Thinking
		case "signature_delta":
			b.Signature = *d.Signature
		case "citations_delta":
			b.Citations = append(b.Citations, *d.Citation)
		case "input_json_delta":
			b.Input = json.RawMessage(*d.PartialJSON)
		}
	}
}

// Result returns the engine result that m carries. Timings are zero; a
// failed search's Error is its error_code.
func (m Message) Result() inference.Result {
	var res inference.Result
	var text, thinking strings.Builder
	sources := 0 // the results of the searches so far
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			start := text.Len()
			text.WriteString(b.Text)
			for _, c := range b.Citations {
				var ix sealedIndex
				_ = unseal(c.EncryptedIndex, &ix)
				res.Citations = append(res.Citations, inference.Citation{Start: start, End: text.Len(), Source: ix.Source, URL: c.URL, Title: c.Title})
			}
		case "thinking":
			thinking.WriteString(b.Thinking)
		case "tool_use":
			res.ToolCalls = append(res.ToolCalls, inference.ToolCall{ID: b.ID, Name: b.Name, Arguments: toolArguments(b.Input)})
		case "server_tool_use":
			query, _ := wire.SearchQuery(b.Input)
			res.Searches = append(res.Searches, inference.SearchCall{ID: "ws_" + strings.TrimPrefix(b.ID, "srvtoolu_"),
				Query: query, Status: inference.SearchSearching, At: text.Len()})
		case "web_search_tool_result":
			i := slices.IndexFunc(res.Searches, func(sc inference.SearchCall) bool { return srvToolID(sc.ID) == b.ToolUseID })
			if i < 0 || b.WebSearch == nil {
				continue
			}
			sc := &res.Searches[i]
			sc.Status, sc.First = inference.SearchCompleted, sources+1
			if b.WebSearch.ErrorCode != "" {
				sc.Status, sc.Error = inference.SearchFailed, b.WebSearch.ErrorCode
			}
			for _, r := range b.WebSearch.Results {
				sr := sealedResult{URL: r.URL, Title: r.Title}
				_ = unseal(r.EncryptedContent, &sr)
				sc.Results = append(sc.Results, search.Result(sr))
			}
			sources += len(sc.Results)
		}
	}
	res.Text, res.Reasoning = text.String(), thinking.String()
	res.FinishReason = inference.FinishStop
	if m.StopReason != nil {
		switch *m.StopReason {
		case "tool_use":
			res.FinishReason = inference.FinishToolCalls
		case "max_tokens":
			res.FinishReason = inference.FinishLength
		case "stop_sequence":
			res.FinishReason = inference.FinishStopSequence
			if m.StopSequence != nil {
				res.StopSequence = *m.StopSequence
			}
		}
	}
	u := m.Usage
	res.Usage = inference.Usage{
		PromptTokens:     u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		CachedTokens:     u.CacheReadInputTokens,
		CompletionTokens: u.OutputTokens,
	}
	if u.ServerToolUse != nil {
		res.Usage.WebSearches = u.ServerToolUse.WebSearchRequests
	}
	return res
}

// toolArguments returns a tool_use block's input as compact JSON text;
// absent or null input is {}.
func toolArguments(input json.RawMessage) string {
	var b bytes.Buffer
	if s := bytes.TrimSpace(input); len(s) == 0 || string(s) == "null" || json.Compact(&b, s) != nil {
		return "{}"
	}
	return b.String()
}

// mcpBlocks are the blocks of an MCP call: its mcp_tool_use, and, once
// it ended, its mcp_tool_result (is_error for a call that failed or was
// declined), whose text is what the model read.
func mcpBlocks(c inference.MCPCall) []Block {
	use := Block{Type: "mcp_tool_use", ID: c.ID, Name: c.Name, ServerName: c.Server, Input: json.RawMessage(c.Arguments)}
	if c.Status == inference.MCPInProgress || c.Status == inference.MCPAwaitingApproval {
		return []Block{use}
	}
	text := c.Output
	if c.Status != inference.MCPCompleted {
		text = c.Text()
	}
	return []Block{use, {Type: "mcp_tool_result", ToolUseID: c.ID, IsError: c.Status != inference.MCPCompleted,
		Content: &Content{Blocks: []Block{{Type: "text", Text: text}}}}}
}
