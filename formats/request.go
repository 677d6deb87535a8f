package formats

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/inferkit/inferkit/inference"
)

// Request is the canonical form of a generation request, whatever its wire
// style: the engine's request and what the engine does not read itself.
// Parsing a wire request fills every default of its style, so two styles
// may give different Requests for the same JSON.
type Request struct {
	// Request is what the engine runs. Its Messages hold the conversation
	// without Instructions.
	inference.Request

	// Instructions is a system prompt given apart from the conversation:
	// the messages style's system blocks, the responses style's
	// instructions. Chat system messages stay in Messages.
	Instructions string
	// Stream asks for Server-Sent Events.
	Stream bool
	// IncludeUsage adds the usage chunk to a chat stream.
	IncludeUsage bool
	// Reasoning is the thinking asked for.
	Reasoning Reasoning
	// Format is the output format asked for.
	Format Format
	// Verbosity is "low", "medium" or "high" (responses text.verbosity,
	// chat verbosity), or empty for the model's own. Inference turns low
	// and high into a line of the system prompt; see VerbosityInstruction.
	Verbosity string
	// ToolChoice says whether and which tools the model must call.
	ToolChoice ToolChoice
	// OneToolCall allows at most one tool call (parallel_tool_calls false,
	// or messages' disable_parallel_tool_use).
	OneToolCall bool
	// Store asks to keep the response for previous_response_id (responses
	// style).
	Store bool
	// Background asks to run the response after answering, as a stored
	// response whose progress GET /v1/responses/{id} reads (responses
	// style; Store is set with it).
	Background bool
	// PreviousResponseID continues a stored conversation (responses style).
	PreviousResponseID string
	// Metadata is the caller's key-value pairs.
	Metadata map[string]string
	// User identifies the end user, for abuse tracking.
	User string
	// Prompts are a legacy completions request's prompts, each run in
	// turn as the engine's Prompt (completions.ForPrompt).
	Prompts []string
	// Echo puts each prompt before its choices' text (legacy
	// completions).
	Echo bool
	// SafetyIdentifier identifies the end user, for abuse tracking
	// (responses style's safety_identifier); it is echoed in the response.
	SafetyIdentifier string
	// PromptCacheKey is the responses style's prompt_cache_key, echoed in
	// the response. The prefix cache matches on the prompt itself, so
	// requests that share a prefix reuse it with or without a key.
	PromptCacheKey string
	// MaxToolCalls is the responses style's max_tool_calls, a bound on the
	// calls of built-in tools, echoed in the response; nil when not set.
	// The one built-in tool is web search: it bounds the searches
	// (Search.MaxSearches is at most it), and 0 offers no search.
	MaxToolCalls *int
	// Cache is the prefix the client asked to be cached (the messages
	// style's last cache_control breakpoint); nil when it asked for none.
	Cache *CachePoint

	// Sent is what a style keeps of its request as sent, for its
	// response to echo (the responses style's web search tool and the
	// tool_choice that forced it); nil for most requests. The hub neither
	// sets nor reads it: only the style that set it does.
	Sent any `json:"-"`
}

// CachePoint is a client's cache breakpoint: the prefix of the prompt
// that ends after the marked tool, system block or content block, which
// the client asks to be written to the prefix cache. The prefix cache
// keeps every prompt it decodes, breakpoint or not; the breakpoint says
// which of the decoded tokens count as written to the cache for the
// client (the messages style's cache_creation_input_tokens), and the
// rest of those decoded count as plain input. The prefix is, in the
// order the messages style caches, the first Tools tools, then
// Instructions, then Messages.
type CachePoint struct {
	// Tools is the number of the request's tools in the prefix.
	Tools int
	// Instructions are the system prompt in the prefix: all of the
	// request's, or its system blocks up to the marked one.
	Instructions string
	// Messages are the conversation in the prefix, the last message cut
	// after the marked block.
	Messages []inference.Message
	// Tokens is the number of prompt tokens of the prefix, as it begins
	// the whole prompt (without the generation prompt that the prefix
	// rendered on its own would end with). It is 0 until a server counts
	// it; the messages style reads it when it writes the usage.
	Tokens int
}

// Prefix returns r cut at its cache point c: the request whose prompt is
// the prefix the client asked to be cached. A prefix of tools alone gets
// an empty system message, so that the template renders them.
func (r Request) Prefix(c CachePoint) Request {
	r.Tools = r.Tools[:min(c.Tools, len(r.Tools))]
	r.Instructions = c.Instructions
	r.Messages = c.Messages
	if r.Instructions == "" && len(r.Messages) == 0 {
		r.Messages = []inference.Message{inference.Text(inference.RoleSystem, "")}
	}
	r.Cache = nil
	return r
}

// Reasoning is the thinking a request asks for. Inference turns it into
// the engine's NoThinking, ThinkingBudget and Effort.
type Reasoning struct {
	// Effort is "none" (no thinking), "low", "medium" or "high".
	Effort string
	// BudgetTokens bounds the thinking tokens; 0 means no bound of its own.
	BudgetTokens int
	// BudgetAsked says BudgetTokens is the client's (thinking.budget_tokens),
	// not the style's default: it is kept whole (see Budget), a style
	// having checked that it leaves the answer room.
	BudgetAsked bool
	// Summary is "none", "auto", "concise" or "detailed": whether a
	// summary of the reasoning, which the engine generates
	// (inference.Request.Summary), is returned (chat reasoning_content,
	// responses reasoning summary). Empty means the style's default: none.
	Summary string
	// Asked says the client asked for thinking (an effort or a budget
	// other than none), rather than taking the style's default: on a
	// model that does not think, the engine refuses an ask and drops a
	// default (inference.Request.ThinkingDefaults).
	Asked bool
	// EffortAsked says Effort is the client's (reasoning_effort,
	// reasoning.effort, output_config.effort), not the style's default:
	// it is passed on as inference.Request.Effort, which a family such as
	// gpt-oss sets in its template.
	EffortAsked bool
}

// SummaryLevel is the engine's summary of Summary: none for "" and
// "none".
func (r Reasoning) SummaryLevel() inference.SummaryLevel {
	switch r.Summary {
	case "auto":
		return inference.SummaryAuto
	case "concise":
		return inference.SummaryConcise
	case "detailed":
		return inference.SummaryDetailed
	}
	return inference.SummaryNone
}

// Thinking reports whether the request asks the model to think.
func (r Reasoning) Thinking() bool { return r.Effort != "none" }

// Budget returns the thinking budget for an output limit of maxTokens (0:
// none). A budget the client asked for (BudgetAsked) is BudgetTokens,
// whole: the style refuses one that leaves the answer no room (the
// messages style's budget_tokens at or above max_tokens). A default one
// is BudgetTokens when set, else by effort low 1,024, medium 4,096 and
// high 16,384 tokens, fitted under the limit: at most three quarters of
// maxTokens, rounded down, and at least one token, so that the answer has
// the last quarter.
func (r Reasoning) Budget(maxTokens int) int {
	budget := r.BudgetTokens
	if r.BudgetAsked {
		return budget
	}
	if budget == 0 {
		budget = map[string]int{"low": 1024, "medium": 4096, "high": 16384}[r.Effort]
	}
	if maxTokens > 0 {
		// Three quarters of maxTokens, rounded down, without overflowing
		// for a limit near the largest int.
		budget = min(budget, max(1, maxTokens/4*3+maxTokens%4*3/4))
	}
	return budget
}

// Format is the output format of a request.
type Format struct {
	// Type is "text", "json" (any JSON object) or "json_schema".
	Type string
	// Name names the schema.
	Name string
	// Schema is a JSON Schema, for json_schema.
	Schema json.RawMessage
	// Strict asks for strict adherence to Schema.
	Strict bool
}

// ToolChoice says whether and which tools the model must call.
type ToolChoice struct {
	// Mode is "auto" (a message or tool calls), "none" (no tool call),
	// "required" (one or more tool calls) or "function" (call Name).
	Mode string
	// Name is the function to call when Mode is "function".
	Name string
}

// VerbosityInstruction returns the line that Inference adds to the
// system prompt for a verbosity: for low, to answer concisely; for high,
// to answer in detail; none for medium, the model's own length. A model
// has no length setting of its own, so an instruction it reads is the
// honest way to ask for one.
func VerbosityInstruction(verbosity string) string {
	switch verbosity {
	case "low":
		return "Answer concisely: give only what was asked, in as few words as possible."
	case "high":
		return "Answer in detail: explain your reasoning, cover the relevant cases, and give examples where they help."
	}
	return ""
}

// Inference returns the engine's request: Instructions, when set, become
// the first system message, and a verbosity's instruction (see
// VerbosityInstruction) ends the system prompt; the output format becomes
// the engine's Format, the reasoning its NoThinking, ThinkingBudget and
// Effort (the client's, where it gave one), and the tool choice its
// ToolChoice.
func (r Request) Inference() inference.Request {
	out := r.Request
	out.Messages = slices.Clone(r.Messages)
	if r.Instructions != "" {
		out.Messages = append([]inference.Message{inference.Text(inference.RoleSystem, r.Instructions)}, out.Messages...)
	}
	if line := VerbosityInstruction(r.Verbosity); line != "" {
		if len(out.Messages) > 0 && out.Messages[0].Role == inference.RoleSystem {
			sys := out.Messages[0]
			sys.Content = append(slices.Clone(sys.Content), inference.Part{Text: "\n\n" + line})
			out.Messages[0] = sys
		} else {
			out.Messages = append([]inference.Message{inference.Text(inference.RoleSystem, line)}, out.Messages...)
		}
	}
	switch r.ToolChoice.Mode {
	case "none":
		out.ToolChoice = inference.ToolChoice{Mode: inference.ToolNone}
	case "required":
		out.ToolChoice = inference.ToolChoice{Mode: inference.ToolRequired}
	case "function":
		out.ToolChoice = inference.ToolChoice{Mode: inference.ToolFunction, Name: r.ToolChoice.Name}
	default:
		out.ToolChoice = inference.ToolChoice{Mode: inference.ToolAuto}
	}
	out.ToolChoice.Single = r.OneToolCall
	switch r.Format.Type {
	case "json":
		out.Format = &inference.Format{JSON: true}
	case "json_schema":
		out.Format = &inference.Format{Schema: r.Format.Schema}
	}
	out.NoThinking = !r.Reasoning.Thinking()
	if !out.NoThinking {
		out.ThinkingBudget = r.Reasoning.Budget(out.MaxTokens)
		if r.Reasoning.EffortAsked {
			out.Effort = r.Reasoning.Effort
		}
	}
	out.ThinkingDefaults = !r.Reasoning.Asked
	out.Summary = r.Reasoning.SummaryLevel()
	return out
}

// Transcript returns the conversation after res answered r: r's messages
// (instructions left out), each search the model ran as its call and the
// results it read, then the assistant's reply, with its text, reasoning
// and tool calls. It is what a server stores under a response's id for
// previous_response_id.
func (r Request) Transcript(res inference.Result) []inference.Message {
	msgs := slices.Clone(r.Messages)
	chars := 1000
	if r.Search != nil && r.Search.ContentChars > 0 {
		chars = r.Search.ContentChars
	}
	// The calls of the conversation so far: the calls waiting for
	// approval that this request answered are in it.
	called := map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			called[c.ID] = true
		}
	}
	// turn is the index of the message of the last call, -1 before any.
	at, waits, turn := 0, false, -1
	for _, c := range EngineCalls(res) {
		var tc inference.ToolCall
		var result string
		if s := c.Search; s != nil {
			tc = inference.ToolCall{ID: s.ID, Name: inference.SearchToolName, Arguments: string(SearchArguments(s.Query))}
			result = s.Text(chars)
		} else {
			tc, result = inference.ToolCall{ID: c.MCP.ID, Name: c.MCP.Name, Arguments: c.MCP.Arguments}, c.MCP.Text()
		}
		end := min(max(c.At, at), len(res.Text))
		switch {
		case called[tc.ID]:
		case turn >= 0 && end == at:
			// Another call of the same turn, with no text between.
			msgs[turn].ToolCalls = append(msgs[turn].ToolCalls, tc)
		default:
			call := inference.Message{Role: inference.RoleAssistant, ToolCalls: []inference.ToolCall{tc}}
			if end > at {
				call.Content = []inference.Part{{Text: res.Text[at:end]}}
				at = end
			}
			turn = len(msgs)
			msgs = append(msgs, call)
		}
		if c.MCP != nil && c.MCP.Status == inference.MCPAwaitingApproval {
			waits = true // answered by the next request
			continue
		}
		msgs = append(msgs, inference.Message{Role: inference.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: []inference.Part{{Text: result}}})
	}
	res.Text = res.Text[at:]
	if waits && res.Text == "" {
		// The conversation ends with the calls that wait.
		return msgs
	}
	reply := inference.Text(inference.RoleAssistant, res.Text)
	if res.Text == "" && len(res.ToolCalls) > 0 {
		reply.Content = nil
	}
	reply.Reasoning = res.Reasoning
	reply.ToolCalls = slices.Clone(res.ToolCalls)
	return append(msgs, reply)
}

// NameToolResults gives each tool message without a Name the name of the
// call it answers, from the assistant turns before it: the wire styles
// name a result by its call's id only, and chat templates render the
// tool's name.
func NameToolResults(msgs []inference.Message) {
	names := map[string]string{}
	for i, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.ID != "" {
				names[c.ID] = c.Name
			}
		}
		if m.Role == inference.RoleTool && m.Name == "" {
			msgs[i].Name = names[m.ToolCallID]
		}
	}
}

// Continue returns next continuing the stored conversation history (a
// Transcript of the previous response): history comes before next's own
// messages, and next's tool results are named after the calls of history
// they answer. The earlier request's instructions are not part of history,
// so only next's Instructions apply.
func Continue(history []inference.Message, next Request) Request {
	next.Messages = append(slices.Clone(history), next.Messages...)
	NameToolResults(next.Messages)
	next.Metadata = maps.Clone(next.Metadata)
	return next
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// EngineCall is one call of a tool the engine ran for a result: a search
// or an MCP call, and where in the answer it came (At).
type EngineCall struct {
	At     int
	Search *inference.SearchCall
	MCP    *inference.MCPCall
}

// EngineCalls returns a result's searches and MCP calls in the order
// the model made them: by where in the answer they came, the calls of
// one turn in the order of the result's lists.
func EngineCalls(res inference.Result) []EngineCall {
	out := make([]EngineCall, 0, len(res.Searches)+len(res.MCPCalls))
	for i := range res.Searches {
		out = append(out, EngineCall{At: res.Searches[i].At, Search: &res.Searches[i]})
	}
	for i := range res.MCPCalls {
		out = append(out, EngineCall{At: res.MCPCalls[i].At, MCP: &res.MCPCalls[i]})
	}
	slices.SortStableFunc(out, func(a, b EngineCall) int { return a.At - b.At })
	return out
}
