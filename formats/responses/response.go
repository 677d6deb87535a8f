package responses

import (
	"net/http"
	"slices"
	"strings"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
)

// Response is the response object of the responses style. It has every
// field of the OpenAI SDKs' Response type, each with the value actually
// used for the request: the request's parameters as applied (defaults
// filled in), and for the fields of OpenAI's platform that inferkit has no
// counterpart of, the value that says so in the shape the SDKs accept:
// null, or a zero count (tool_usage.image_gen), or the plain choice (service_tier
// default, access_programs.cyber standard, reasoning.mode standard,
// prompt_cache_diagnostics unavailable).
type Response struct {
	ID     string `json:"id"`
	Object string `json:"object"` // response
	// Status is completed, failed, in_progress or incomplete (when the
	// output limit cut the output); a background response is queued
	// until its generation starts, and cancelled when it was cancelled.
	Status    string `json:"status"`
	CreatedAt int64  `json:"created_at"`
	// CompletedAt is when the response completed, in Unix seconds; null
	// unless Status is completed.
	CompletedAt *int64 `json:"completed_at"`
	// AccessPrograms is OpenAI's access programs: none, so cyber is
	// standard.
	AccessPrograms AccessPrograms `json:"access_programs"`
	// Background is the request's background.
	Background bool `json:"background"`
	// Conversation is null: the conversation parameter is refused, and
	// previous_response_id continues a conversation.
	Conversation *Conversation `json:"conversation"`
	Error        *ErrorObject  `json:"error"`
	// IncompleteDetails says why the status is incomplete; null otherwise.
	IncompleteDetails *IncompleteDetails `json:"incomplete_details"`
	Instructions      *string            `json:"instructions"`
	MaxOutputTokens   *int               `json:"max_output_tokens"`
	// MaxToolCalls is the request's max_tool_calls, or null.
	MaxToolCalls *int   `json:"max_tool_calls"`
	Model        string `json:"model"`
	// Moderation is null: no moderation runs.
	Moderation any `json:"moderation"`
	// Output is a reasoning item when the model thought, then the message
	// (none when the model only called tools), then a function_call item
	// per tool call. A response that searched the web has the text
	// written before each search as a message, then the search's
	// web_search_call item, and the text after the last search as the
	// message, whose output_text's annotations cite the results.
	Output []Item `json:"output"`
	// OutputText joins the text of the output_text parts.
	OutputText        string `json:"output_text"`
	ParallelToolCalls bool   `json:"parallel_tool_calls"`
	// PresencePenalty and FrequencyPenalty are the sampler's penalties, 0
	// when not asked for.
	PresencePenalty    float64 `json:"presence_penalty"`
	FrequencyPenalty   float64 `json:"frequency_penalty"`
	PreviousResponseID *string `json:"previous_response_id"`
	// Prompt is null: prompt templates are refused.
	Prompt any `json:"prompt"`
	// PromptCacheDiagnostics is {type: unavailable}: no diagnostics are
	// made.
	PromptCacheDiagnostics CacheDiagnostics `json:"prompt_cache_diagnostics"`
	// PromptCacheKey is the request's prompt_cache_key, or null.
	PromptCacheKey *string `json:"prompt_cache_key"`
	// PromptCacheOptions is null: OpenAI's cache breakpoint options (TTL
	// 30m or 12h) do not apply to the prefix cache, whose entries live 5
	// minutes.
	PromptCacheOptions any `json:"prompt_cache_options"`
	// PromptCacheRetention is in_memory: the prefix cache keeps prompts
	// in memory for 5 minutes.
	PromptCacheRetention string        `json:"prompt_cache_retention"`
	Reasoning            ReasoningEcho `json:"reasoning"`
	// SafetyIdentifier is the request's safety_identifier, or null.
	SafetyIdentifier *string `json:"safety_identifier"`
	// ServiceTier is default, the only way requests are served.
	ServiceTier string     `json:"service_tier"`
	Store       bool       `json:"store"`
	Temperature float64    `json:"temperature"`
	Text        TextEcho   `json:"text"`
	ToolChoice  ToolChoice `json:"tool_choice"`
	// ToolUsage counts the calls of built-in tools: the web searches
	// run; no image is generated.
	ToolUsage ToolUsage `json:"tool_usage"`
	// Tools are the function tools, then the web search tool as applied
	// (sentSearch): absent when max_tool_calls 0 or tool_choice none
	// leave no search, and typed web_search whatever version was sent.
	Tools []Tool `json:"tools"`
	// TopLogprobs is the request's top_logprobs, 0 when not set.
	TopLogprobs int     `json:"top_logprobs"`
	TopP        float64 `json:"top_p"`
	// Truncation is disabled: auto is refused.
	Truncation string `json:"truncation"`
	// Usage is null until the response is done.
	Usage *Usage `json:"usage"`
	// User is the request's user, or null.
	User     *string           `json:"user"`
	Metadata map[string]string `json:"metadata"`
}

// AccessPrograms is the access_programs of a response.
type AccessPrograms struct {
	Cyber string `json:"cyber"` // standard
}

// Conversation is the conversation a response belongs to; never
// set, since stored conversations are not served.
type Conversation struct {
	ID string `json:"id"`
}

// CacheDiagnostics is the prompt_cache_diagnostics of a response.
type CacheDiagnostics struct {
	Type string `json:"type"` // unavailable
}

// ToolUsage counts the calls of built-in tools.
type ToolUsage struct {
	ImageGen  ImageGenUsage  `json:"image_gen"`
	WebSearch WebSearchUsage `json:"web_search"`
}

// ImageGenUsage counts the tokens of image generation calls.
type ImageGenUsage struct {
	InputTokens         int                   `json:"input_tokens"`
	InputTokensDetails  ImageGenTokens        `json:"input_tokens_details"`
	OutputTokens        int                   `json:"output_tokens"`
	OutputTokensDetails ImageGenTokens        `json:"output_tokens_details"`
	TotalTokens         int                   `json:"total_tokens"`
	CachedTokens        int                   `json:"cached_tokens"`
	CachedTokensDetails ImageGenCachedDetails `json:"cached_tokens_details"`
}

// ImageGenTokens splits an image generation's tokens.
type ImageGenTokens struct {
	ImageTokens int `json:"image_tokens"`
	TextTokens  int `json:"text_tokens"`
}

// ImageGenCachedDetails splits an image generation's cached
// tokens.
type ImageGenCachedDetails struct {
	CachedImageTokens int `json:"cached_image_tokens"`
	CachedTextTokens  int `json:"cached_text_tokens"`
}

// WebSearchUsage counts web search calls.
type WebSearchUsage struct {
	NumRequests int `json:"num_requests"`
}

// ErrorObject is the error of a failed response: code is one of the
// OpenAI SDKs' response error codes (server_error, rate_limit_exceeded,
// invalid_prompt, or an image code), type is the error's type in the
// error bodies (such as api_error), param the parameter at fault or null.
type ErrorObject struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Param   *string `json:"param"`
	Type    *string `json:"type"`
}

// IncompleteDetails says why a response is incomplete.
type IncompleteDetails struct {
	Reason string `json:"reason"` // max_output_tokens
}

// ReasoningEcho echoes the request's reasoning: effort and summary as
// applied, generate_summary (the deprecated name of summary) and context
// null, mode standard.
type ReasoningEcho struct {
	Context         *string `json:"context"`
	Effort          *string `json:"effort"`
	GenerateSummary *string `json:"generate_summary"`
	Mode            string  `json:"mode"`
	Summary         *string `json:"summary"`
}

// TextEcho echoes the request's text configuration.
type TextEcho struct {
	Format    Format `json:"format"`
	Verbosity string `json:"verbosity"`
}

// Item is an output item: a message (role, content of output_text
// parts), a reasoning item (summary, content of reasoning_text parts), a
// function_call (call_id, name, arguments) or a web_search_call (action).
type Item struct {
	ID   string `json:"id"`
	Type string `json:"type"` // message, reasoning, function_call or web_search_call
	// Status is in_progress, completed or incomplete, or for a
	// web_search_call failed.
	Status  string `json:"status"`
	Role    string `json:"role,omitzero"`
	Summary []Part `json:"summary,omitzero"`
	Content []Part `json:"content"`

	// CallID names a function_call for its function_call_output.
	CallID string `json:"call_id,omitzero"`
	// Name is the function a function_call calls.
	Name string `json:"name,omitzero"`
	// Arguments is a function_call's arguments, a JSON object.
	Arguments string `json:"arguments,omitzero"`
	// Action is what a web_search_call did.
	Action *SearchAction `json:"action,omitzero"`

	// ServerLabel names the MCP server of an mcp_list_tools,
	// mcp_call or mcp_approval_request item; Tools are an
	// mcp_list_tools' tools, Output an mcp_call's result, and Error why
	// a listing or call failed.
	ServerLabel string          `json:"server_label,omitzero"`
	Tools       []MCPListedTool `json:"tools,omitzero"`
	Output      *string         `json:"output,omitzero"`
	Error       *string         `json:"error,omitzero"`
}

// MarshalJSON writes the fields of the item's type: a function_call has
// no content and always has arguments ("" while it is in progress); a
// web_search_call has only its action.
func (it Item) MarshalJSON() ([]byte, error) {
	switch it.Type {
	case "function_call":
		return formats.Marshal(struct {
			ID        string `json:"id"`
			Type      string `json:"type"`
			Status    string `json:"status"`
			CallID    string `json:"call_id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}{it.ID, it.Type, it.Status, it.CallID, it.Name, it.Arguments})
	case "web_search_call":
		return formats.Marshal(struct {
			ID     string        `json:"id"`
			Type   string        `json:"type"`
			Status string        `json:"status"`
			Action *SearchAction `json:"action"`
		}{it.ID, it.Type, it.Status, it.Action})
	case "mcp_list_tools":
		return formats.Marshal(struct {
			ID          string          `json:"id"`
			Type        string          `json:"type"`
			ServerLabel string          `json:"server_label"`
			Tools       []MCPListedTool `json:"tools"`
			Error       *string         `json:"error"`
		}{it.ID, it.Type, it.ServerLabel, it.Tools, it.Error})
	case "mcp_call":
		return formats.Marshal(struct {
			ID                string  `json:"id"`
			Type              string  `json:"type"`
			Status            string  `json:"status"`
			ServerLabel       string  `json:"server_label"`
			Name              string  `json:"name"`
			Arguments         string  `json:"arguments"`
			Output            *string `json:"output"`
			Error             *string `json:"error"`
			ApprovalRequestID *string `json:"approval_request_id"`
		}{it.ID, it.Type, it.Status, it.ServerLabel, it.Name, it.Arguments, it.Output, it.Error, nil})
	case "mcp_approval_request":
		return formats.Marshal(struct {
			ID          string `json:"id"`
			Type        string `json:"type"`
			ServerLabel string `json:"server_label"`
			Name        string `json:"name"`
			Arguments   string `json:"arguments"`
		}{it.ID, it.Type, it.ServerLabel, it.Name, it.Arguments})
	}
	type plain Item
	return formats.Marshal(plain(it))
}

// SearchAction is the action of a web_search_call: type search,
// with the query (also as queries) and the URLs of the results (sources).
// Read from input, it may be an open_page (url) or find_in_page (url,
// pattern) action of another server.
type SearchAction struct {
	Type    string   `json:"type"`
	Query   string   `json:"query,omitzero"`
	Queries []string `json:"queries,omitzero"`
	Sources []Source `json:"sources,omitzero"`
	URL     string   `json:"url,omitzero"`
	Pattern string   `json:"pattern,omitzero"`
}

// Source is a page a search read: type url.
type Source struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Annotation is an annotation of an output_text: a url_citation,
// whose start_index and end_index are character (code point) offsets in
// the part's text of the span that cites the page at url.
type Annotation struct {
	Type       string `json:"type"` // url_citation
	StartIndex int    `json:"start_index"`
	EndIndex   int    `json:"end_index"`
	URL        string `json:"url"`
	Title      string `json:"title"`
}

// Part is a part of an output item: output_text with annotations,
// summary_text or reasoning_text.
type Part struct {
	Type        string       `json:"type"`
	Text        string       `json:"text"`
	Annotations []Annotation `json:"annotations,omitzero"`
	// Logprobs are an output_text's tokens, when the request asked for
	// them; else empty.
	Logprobs []formats.TokenLogprob `json:"logprobs,omitzero"`
}

// Usage counts the tokens of a response; details are always
// present. Of the input tokens, cached_tokens were read from the prefix
// cache and cache_write_tokens, all the others, were decoded and written
// to it.
type Usage struct {
	InputTokens         int           `json:"input_tokens"`
	InputTokensDetails  InputDetails  `json:"input_tokens_details"`
	OutputTokens        int           `json:"output_tokens"`
	OutputTokensDetails OutputDetails `json:"output_tokens_details"`
	TotalTokens         int           `json:"total_tokens"`
}

// InputDetails splits the input tokens.
type InputDetails struct {
	CachedTokens     int `json:"cached_tokens"`
	CacheWriteTokens int `json:"cache_write_tokens"`
	// CacheWriteTokensDetails splits the writes by OpenAI's retentions,
	// 30 minutes and 12 hours: both 0, since the prefix cache keeps
	// entries for 5 minutes.
	CacheWriteTokensDetails CacheWriteDetails `json:"cache_write_tokens_details"`
}

// CacheWriteDetails splits the tokens written to the cache by
// retention.
type CacheWriteDetails struct {
	TTL12hTokens int `json:"ttl_12h_tokens"`
	TTL30mTokens int `json:"ttl_30m_tokens"`
}

// OutputDetails splits the output tokens.
type OutputDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// newUsage converts the engine's usage.
func newUsage(u inference.Usage) *Usage {
	return &Usage{
		InputTokens:         u.PromptTokens,
		InputTokensDetails:  InputDetails{CachedTokens: u.CachedTokens, CacheWriteTokens: u.PromptTokens - u.CachedTokens},
		OutputTokens:        u.CompletionTokens,
		OutputTokensDetails: OutputDetails{ReasoningTokens: u.ReasoningTokens},
		TotalTokens:         u.PromptTokens + u.CompletionTokens,
	}
}

// newShell returns the response of req before any output: status
// in_progress, no usage.
func newShell(req formats.Request, id string, created int64) Response {
	r := Response{
		ID: id, Object: "response", Status: "in_progress", CreatedAt: created,
		AccessPrograms:  AccessPrograms{Cyber: "standard"},
		MaxOutputTokens: wire.NonZero(req.MaxTokens), Model: req.Model, Output: []Item{},
		ParallelToolCalls: !req.OneToolCall, Store: req.Store, Background: req.Background, Truncation: "disabled",
		PresencePenalty: req.PresencePenalty, FrequencyPenalty: req.FrequencyPenalty, TopLogprobs: req.TopLogprobs,
		PromptCacheDiagnostics: CacheDiagnostics{Type: "unavailable"},
		PromptCacheRetention:   "in_memory", ServiceTier: "default",
		Reasoning: ReasoningEcho{Mode: "standard"},
		Tools:     []Tool{}, Metadata: map[string]string{},
		Text: TextEcho{Format: Format{Type: "text"}, Verbosity: "medium"},
	}
	if req.MaxToolCalls != nil {
		r.MaxToolCalls = ptr(*req.MaxToolCalls)
	}
	if req.PromptCacheKey != "" {
		r.PromptCacheKey = ptr(req.PromptCacheKey)
	}
	if req.SafetyIdentifier != "" {
		r.SafetyIdentifier = ptr(req.SafetyIdentifier)
	}
	if req.Instructions != "" {
		r.Instructions = ptr(req.Instructions)
	}
	if req.Verbosity != "" {
		r.Text.Verbosity = req.Verbosity
	}
	if req.PreviousResponseID != "" {
		r.PreviousResponseID = ptr(req.PreviousResponseID)
	}
	if req.Reasoning.Effort != "" {
		r.Reasoning.Effort = ptr(req.Reasoning.Effort)
	}
	if s := req.Reasoning.Summary; s != "" && s != "none" {
		r.Reasoning.Summary = ptr(s)
	}
	if req.Temperature != nil {
		r.Temperature = *req.Temperature
	}
	r.TopP = 1
	if req.TopP != nil {
		r.TopP = *req.TopP
	}
	switch req.Format.Type {
	case "json":
		r.Text.Format = Format{Type: "json_object"}
	case "json_schema":
		r.Text.Format = Format{Type: "json_schema", Name: req.Format.Name, Schema: req.Format.Schema, Strict: ptr(req.Format.Strict)}
	}
	r.ToolChoice = ToolChoice{Mode: "auto"}
	if req.ToolChoice.Mode != "" {
		r.ToolChoice = ToolChoice{Mode: req.ToolChoice.Mode, Name: req.ToolChoice.Name}
	}
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, Tool{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: ptr(false)})
	}
	switch s, sent := req.Search, sentOf(req); {
	case sent.tool != nil:
		// As the request sent them.
		r.Tools = append(r.Tools, *sent.tool)
		if sent.choice != "" {
			r.ToolChoice = ToolChoice{Mode: sent.choice}
		}
	case s != nil:
		r.Tools = append(r.Tools, searchTool(s))
		if s.Force {
			r.ToolChoice = ToolChoice{Mode: "web_search"}
		}
	}
	if m := req.MCP; m != nil {
		for _, s := range m.Servers {
			r.Tools = append(r.Tools, mcpToolEcho(s))
		}
	}
	if req.User != "" {
		r.User = ptr(req.User)
	}
	for k, v := range req.Metadata {
		r.Metadata[k] = v
	}
	return r
}

// reasoningItem returns the output item of the model's thinking: its
// summary, when one was asked for and made, as a summary_text part. The
// thinking itself stays on the server (in a stored transcript, for
// previous_response_id): its tokens are counted in the usage.
func reasoningItem(id, status, summary string) Item {
	it := Item{ID: id, Type: "reasoning", Status: status, Summary: []Part{}, Content: []Part{}}
	if summary != "" {
		it.Summary = append(it.Summary, summaryText(summary))
	}
	return it
}

// summaryText returns a summary_text part.
func summaryText(text string) Part { return Part{Type: "summary_text", Text: text} }

// messageItem returns the output message item; with parts false its
// content is empty, as in output_item.added.
func messageItem(id, status, text string, parts bool) Item {
	it := Item{ID: id, Type: "message", Status: status, Role: "assistant", Content: []Part{}}
	if parts {
		it.Content = append(it.Content, outputText(text))
	}
	return it
}

// outputText returns an output_text part.
func outputText(text string) Part {
	return Part{Type: "output_text", Text: text, Annotations: []Annotation{}, Logprobs: []formats.TokenLogprob{}}
}

// citedMessage returns a message item of the answer's text from byte
// start to end, annotated with the citations of that span.
func citedMessage(id, status string, res inference.Result, start, end int) Item {
	text := res.Text[start:end]
	it := messageItem(id, status, text, true)
	for _, c := range res.Citations {
		if c.Start >= start && c.End <= end {
			if a, ok := urlCitation(c, text, start); ok {
				it.Content[0].Annotations = append(it.Content[0].Annotations, a)
			}
		}
	}
	return it
}

// urlCitation returns the annotation of a citation in a part whose text
// starts at byte off of the answer. A citation of no text (a marker with
// nothing before it) has none.
func urlCitation(c inference.Citation, text string, off int) (Annotation, bool) {
	start, end, ok := wire.CitedSpan(c, text, off)
	return Annotation{Type: "url_citation", StartIndex: start, EndIndex: end, URL: c.URL, Title: c.Title}, ok
}

// webSearchItem returns the output item of a search: in progress, as in
// output_item.added, or done (completed or failed), with the URLs of its
// results as the action's sources.
func webSearchItem(sc inference.SearchCall, done bool) Item {
	action := &SearchAction{Type: "search", Query: sc.Query}
	if sc.Query != "" {
		action.Queries = []string{sc.Query}
	}
	it := Item{ID: sc.ID, Type: "web_search_call", Status: "in_progress", Action: action}
	if !done {
		return it
	}
	switch sc.Status {
	case inference.SearchCompleted, inference.SearchFailed:
		it.Status = string(sc.Status)
	default: // the stream ended while it ran
		it.Status = "incomplete"
	}
	for _, r := range sc.Results {
		action.Sources = append(action.Sources, Source{Type: "url", URL: r.URL})
	}
	return it
}

// functionCallItem returns the output item of a tool call; with done
// false it is in progress, with empty arguments, as in output_item.added.
func functionCallItem(id string, c inference.ToolCall, done bool) Item {
	it := Item{ID: id, Type: "function_call", Status: "in_progress", CallID: c.ID, Name: c.Name}
	if done {
		it.Status, it.Arguments = "completed", c.Arguments
	}
	return it
}

// itemStatus is the status of a finished result's message item.
func itemStatus(res inference.Result) string {
	if res.FinishReason == inference.FinishLength {
		return "incomplete"
	}
	return "completed"
}

// finish sets the status, the output items and the usage of a finished
// result, and completed_at, at now, when it completed.
func (r *Response) finish(res inference.Result, items []Item, now int64) {
	r.Status, r.IncompleteDetails, r.CompletedAt = "completed", nil, ptr(now)
	if res.FinishReason == inference.FinishLength {
		r.Status, r.IncompleteDetails, r.CompletedAt = "incomplete", &IncompleteDetails{Reason: "max_output_tokens"}, nil
	}
	r.Output = append([]Item{}, items...)
	r.OutputText = res.Text
	r.Usage = newUsage(res.Usage)
	r.ToolUsage.WebSearch.NumRequests = res.Usage.WebSearches
}

// NewResponse returns the response object of res answering req, with a
// fresh resp_ id and item ids rs_, msg_ and fc_ (a web_search_call keeps
// the engine's ws_ id). The output is a reasoning item when the model
// thought; for each search, the text written before it (when there is
// some) as a message and the search's web_search_call item; the message
// of the text after the last search, left out when there is none and the
// model searched or called tools; and a function_call item per tool call.
// A result cut by the output limit gives status incomplete with
// incomplete_details.reason max_output_tokens.
func NewResponse(req formats.Request, res inference.Result, o formats.Options) Response {
	now := o.Time().Unix()
	r := newShell(req, o.ID("resp_"), now)
	var items []Item
	if res.Reasoning != "" {
		items = append(items, reasoningItem(o.ID("rs_"), "completed", res.Summary))
	}
	for _, l := range res.MCPLists {
		items = append(items, mcpListItem(l))
	}
	start := 0
	for _, c := range formats.EngineCalls(res) {
		if at := min(c.At, len(res.Text)); at > start {
			items = append(items, citedMessage(o.ID("msg_"), "completed", res, start, at))
			start = at
		}
		if c.Search != nil {
			items = append(items, webSearchItem(*c.Search, true))
		} else {
			items = append(items, mcpCallItem(*c.MCP, true))
		}
	}
	if start < len(res.Text) || len(res.ToolCalls) == 0 && len(res.Searches) == 0 && len(res.MCPCalls) == 0 {
		it := citedMessage(o.ID("msg_"), itemStatus(res), res, start, len(res.Text))
		if req.Logprobs {
			it.Content[0].Logprobs = wire.TokenLogprobs(res.Logprobs)
		}
		items = append(items, it)
	}
	for _, c := range res.ToolCalls {
		items = append(items, functionCallItem(o.ID("fc_"), c, true))
	}
	r.finish(res, items, now)
	return r
}

// FailedResponse returns the response object of req that failed with err:
// status failed and error {code, message}.
func FailedResponse(req formats.Request, err error, o formats.Options) Response {
	r := newShell(req, o.ID("resp_"), o.Time().Unix())
	r.fail(err)
	return r
}

// Interrupted returns r, a response whose generation stopped before it
// ended (a server that stopped while it ran, say), as failed with err:
// its items still in progress are incomplete.
func Interrupted(r Response, err error) Response {
	r.Output = slices.Clone(r.Output)
	for i, it := range r.Output {
		if it.Status == "in_progress" {
			r.Output[i].Status = "incomplete"
		}
	}
	r.fail(err)
	return r
}

// Done reports whether r has ended: its status is none of queued and
// in_progress.
func (r Response) Done() bool { return r.Status != "queued" && r.Status != "in_progress" }

// fail sets the failed status and error.
func (r *Response) fail(err error) {
	e := Error(err)
	r.Status = "failed"
	r.Error = &ErrorObject{Code: errorCode(e), Message: e.Message, Type: ptr(e.Type(formats.StyleResponses))}
	if e.Param != "" {
		r.Error.Param = ptr(e.Param)
	}
}

// errorCodes are the codes of a response's error that the OpenAI
// SDKs know.
var errorCodes = map[string]bool{
	"server_error": true, "rate_limit_exceeded": true, "invalid_prompt": true,
	"invalid_image": true, "invalid_image_format": true, "invalid_base64_image": true, "invalid_image_url": true,
	"image_too_large": true, "image_too_small": true, "image_parse_error": true, "invalid_image_mode": true,
	"image_file_too_large": true, "unsupported_image_media_type": true, "empty_image_file": true,
}

// errorCode returns the code of e in a failed response: e's own
// code when the SDKs know it, else by status rate_limit_exceeded (429,
// such as an overloaded engine), invalid_prompt (another 4xx, such as a
// prompt over the context length) or server_error. The message keeps the
// detail.
func errorCode(e *formats.Error) string {
	switch {
	case errorCodes[e.Code]:
		return e.Code
	case e.Status == http.StatusTooManyRequests:
		return "rate_limit_exceeded"
	case e.Status >= 400 && e.Status < 500:
		return "invalid_prompt"
	}
	return "server_error"
}

// Result returns the engine result that r carries. Timings are zero.
func (r Response) Result() inference.Result {
	var res inference.Result
	var text, reasoning, summary strings.Builder
	for _, it := range r.Output {
		if it.Type == "function_call" {
			res.ToolCalls = append(res.ToolCalls, inference.ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		}
		for _, p := range it.Summary {
			summary.WriteString(p.Text)
		}
		for _, p := range it.Content {
			switch p.Type {
			case "output_text":
				text.WriteString(p.Text)
			case "reasoning_text":
				reasoning.WriteString(p.Text)
			}
		}
	}
	res.Text, res.Reasoning, res.Summary = text.String(), reasoning.String(), summary.String()
	res.FinishReason = inference.FinishStop
	if len(res.ToolCalls) > 0 {
		res.FinishReason = inference.FinishToolCalls
	}
	if r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "max_output_tokens" {
		res.FinishReason = inference.FinishLength
	}
	if u := r.Usage; u != nil {
		res.Usage = inference.Usage{
			PromptTokens:     u.InputTokens,
			CachedTokens:     u.InputTokensDetails.CachedTokens,
			CompletionTokens: u.OutputTokens,
			ReasoningTokens:  u.OutputTokensDetails.ReasoningTokens,
		}
	}
	return res
}
