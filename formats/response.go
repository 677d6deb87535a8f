package formats

import (
	"strings"

	"github.com/inferkit/inferkit/inference"
)

// Response is the response object of the responses style, with the
// fields the OpenAI SDKs' Response type expects.
type Response struct {
	ID     string `json:"id"`
	Object string `json:"object"` // response
	// Status is completed, failed, in_progress or incomplete (when the
	// output limit cut the output).
	Status            string              `json:"status"`
	CreatedAt         int64               `json:"created_at"`
	Background        bool                `json:"background"`
	Error             *ResponseError      `json:"error"`
	IncompleteDetails *ResponseIncomplete `json:"incomplete_details"`
	Instructions      *string             `json:"instructions"`
	MaxOutputTokens   *int                `json:"max_output_tokens"`
	Model             string              `json:"model"`
	// Output is a reasoning item when the model thought, then the message
	// (none when the model only called tools), then a function_call item
	// per tool call.
	Output []ResponseItem `json:"output"`
	// OutputText joins the text of the output_text parts.
	OutputText         string              `json:"output_text"`
	ParallelToolCalls  bool                `json:"parallel_tool_calls"`
	PreviousResponseID *string             `json:"previous_response_id"`
	Reasoning          ResponseReasoning   `json:"reasoning"`
	Store              bool                `json:"store"`
	Temperature        float64             `json:"temperature"`
	Text               ResponseText        `json:"text"`
	ToolChoice         ResponsesToolChoice `json:"tool_choice"`
	Tools              []ResponsesTool     `json:"tools"`
	TopP               float64             `json:"top_p"`
	Truncation         string              `json:"truncation"`
	// Usage is null until the response is done.
	Usage    *ResponseUsage    `json:"usage"`
	User     *string           `json:"user"`
	Metadata map[string]string `json:"metadata"`
}

// ResponseError is the error of a failed response.
type ResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ResponseIncomplete says why a response is incomplete.
type ResponseIncomplete struct {
	Reason string `json:"reason"` // max_output_tokens
}

// ResponseReasoning echoes the request's reasoning.
type ResponseReasoning struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

// ResponseText echoes the request's text configuration.
type ResponseText struct {
	Format    ResponsesFormat `json:"format"`
	Verbosity string          `json:"verbosity"`
}

// ResponseItem is an output item: a message (role, content of output_text
// parts), a reasoning item (summary, content of reasoning_text parts) or a
// function_call (call_id, name, arguments).
type ResponseItem struct {
	ID   string `json:"id"`
	Type string `json:"type"` // message, reasoning or function_call
	// Status is in_progress, completed or incomplete.
	Status  string         `json:"status"`
	Role    string         `json:"role,omitzero"`
	Summary []ResponsePart `json:"summary,omitzero"`
	Content []ResponsePart `json:"content"`

	// CallID names a function_call for its function_call_output.
	CallID string `json:"call_id,omitzero"`
	// Name is the function a function_call calls.
	Name string `json:"name,omitzero"`
	// Arguments is a function_call's arguments, a JSON object.
	Arguments string `json:"arguments,omitzero"`
}

// MarshalJSON writes the fields of the item's type: a function_call has
// no content and always has arguments ("" while it is in progress).
func (it ResponseItem) MarshalJSON() ([]byte, error) {
	if it.Type == "function_call" {
		return marshal(struct {
			ID        string `json:"id"`
			Type      string `json:"type"`
			Status    string `json:"status"`
			CallID    string `json:"call_id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}{it.ID, it.Type, it.Status, it.CallID, it.Name, it.Arguments})
	}
	type plain ResponseItem
	return marshal(plain(it))
}

// ResponsePart is a part of an output item: output_text with annotations,
// summary_text or reasoning_text.
type ResponsePart struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations,omitzero"`
	Logprobs    []any  `json:"logprobs,omitzero"`
}

// ResponseUsage counts the tokens of a response; details are always
// present.
type ResponseUsage struct {
	InputTokens         int                   `json:"input_tokens"`
	InputTokensDetails  ResponseInputDetails  `json:"input_tokens_details"`
	OutputTokens        int                   `json:"output_tokens"`
	OutputTokensDetails ResponseOutputDetails `json:"output_tokens_details"`
	TotalTokens         int                   `json:"total_tokens"`
}

// ResponseInputDetails splits the input tokens.
type ResponseInputDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// ResponseOutputDetails splits the output tokens.
type ResponseOutputDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// newResponseUsage converts the engine's usage.
func newResponseUsage(u inference.Usage) *ResponseUsage {
	return &ResponseUsage{
		InputTokens:         u.PromptTokens,
		InputTokensDetails:  ResponseInputDetails{CachedTokens: u.CachedTokens},
		OutputTokens:        u.CompletionTokens,
		OutputTokensDetails: ResponseOutputDetails{ReasoningTokens: u.ReasoningTokens},
		TotalTokens:         u.PromptTokens + u.CompletionTokens,
	}
}

// newResponseShell returns the response of req before any output: status
// in_progress, no usage.
func newResponseShell(req Request, id string, created int64) Response {
	r := Response{
		ID: id, Object: "response", Status: "in_progress", CreatedAt: created,
		MaxOutputTokens: nonZero(req.MaxTokens), Model: req.Model, Output: []ResponseItem{},
		ParallelToolCalls: !req.OneToolCall, Store: req.Store, Truncation: "disabled",
		Tools: []ResponsesTool{}, Metadata: map[string]string{},
		Text: ResponseText{Format: ResponsesFormat{Type: "text"}, Verbosity: "medium"},
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
		r.Text.Format = ResponsesFormat{Type: "json_object"}
	case "json_schema":
		r.Text.Format = ResponsesFormat{Type: "json_schema", Name: req.Format.Name, Schema: req.Format.Schema, Strict: ptr(req.Format.Strict)}
	}
	r.ToolChoice = ResponsesToolChoice{Mode: "auto"}
	if req.ToolChoice.Mode != "" {
		r.ToolChoice = ResponsesToolChoice(req.ToolChoice)
	}
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, ResponsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: ptr(false)})
	}
	if req.User != "" {
		r.User = ptr(req.User)
	}
	for k, v := range req.Metadata {
		r.Metadata[k] = v
	}
	return r
}

// reasoningItem returns the output item of reasoning text.
func reasoningItem(id, status, text string) ResponseItem {
	it := ResponseItem{ID: id, Type: "reasoning", Status: status, Summary: []ResponsePart{}, Content: []ResponsePart{}}
	if text != "" {
		it.Content = append(it.Content, ResponsePart{Type: "reasoning_text", Text: text})
	}
	return it
}

// messageItem returns the output message item; with parts false its
// content is empty, as in output_item.added.
func messageItem(id, status, text string, parts bool) ResponseItem {
	it := ResponseItem{ID: id, Type: "message", Status: status, Role: "assistant", Content: []ResponsePart{}}
	if parts {
		it.Content = append(it.Content, outputText(text))
	}
	return it
}

// outputText returns an output_text part.
func outputText(text string) ResponsePart {
	return ResponsePart{Type: "output_text", Text: text, Annotations: []any{}, Logprobs: []any{}}
}

// functionCallItem returns the output item of a tool call; with done
// false it is in progress, with empty arguments, as in output_item.added.
func functionCallItem(id string, c inference.ToolCall, done bool) ResponseItem {
	it := ResponseItem{ID: id, Type: "function_call", Status: "in_progress", CallID: c.ID, Name: c.Name}
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
// result.
func (r *Response) finish(res inference.Result, items []ResponseItem) {
	r.Status, r.IncompleteDetails = "completed", nil
	if res.FinishReason == inference.FinishLength {
		r.Status, r.IncompleteDetails = "incomplete", &ResponseIncomplete{Reason: "max_output_tokens"}
	}
	r.Output = append([]ResponseItem{}, items...)
	r.OutputText = res.Text
	r.Usage = newResponseUsage(res.Usage)
}

// NewResponse returns the response object of res answering req, with a
// fresh resp_ id and item ids rs_, msg_ and fc_. The output is a
// reasoning item when the model thought, the message (left out when the
// model only called tools), and a function_call item per tool call. A
// result cut by the output limit gives status incomplete with
// incomplete_details.reason max_output_tokens.
func NewResponse(req Request, res inference.Result, o Options) Response {
	r := newResponseShell(req, o.id("resp_"), o.now().Unix())
	var items []ResponseItem
	if res.Reasoning != "" {
		items = append(items, reasoningItem(o.id("rs_"), "completed", res.Reasoning))
	}
	if res.Text != "" || len(res.ToolCalls) == 0 {
		items = append(items, messageItem(o.id("msg_"), itemStatus(res), res.Text, true))
	}
	for _, c := range res.ToolCalls {
		items = append(items, functionCallItem(o.id("fc_"), c, true))
	}
	r.finish(res, items)
	return r
}

// FailedResponse returns the response object of req that failed with err:
// status failed and error {code, message}.
func FailedResponse(req Request, err error, o Options) Response {
	r := newResponseShell(req, o.id("resp_"), o.now().Unix())
	r.fail(err)
	return r
}

// fail sets the failed status and error.
func (r *Response) fail(err error) {
	e := ErrorOf(err).in(FamilyResponses)
	r.Status = "failed"
	r.Error = &ResponseError{Code: e.Code, Message: e.Message}
}

// Result returns the engine result that r carries. Timings are zero.
func (r Response) Result() inference.Result {
	var res inference.Result
	var text, reasoning strings.Builder
	for _, it := range r.Output {
		if it.Type == "function_call" {
			res.ToolCalls = append(res.ToolCalls, inference.ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments})
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
	res.Text, res.Reasoning = text.String(), reasoning.String()
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
