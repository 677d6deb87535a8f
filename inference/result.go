package inference

import "time"

// FinishReason says why generation ended.
type FinishReason string

// The reasons generation ends.
const (
	// FinishStop: the model ended its turn.
	FinishStop FinishReason = "stop"
	// FinishLength: MaxTokens or the context ran out.
	FinishLength FinishReason = "length"
	// FinishStopSequence: one of the request's stop strings appeared.
	FinishStopSequence FinishReason = "stop_sequence"
	// FinishToolCalls: the model ended its turn after calling tools.
	FinishToolCalls FinishReason = "tool_calls"
)

// Usage counts the tokens of a request.
type Usage struct {
	// PromptTokens is the length of the tokenized prompt.
	PromptTokens int
	// CachedTokens is the part of the prompt served from the KV cache
	// without being decoded again.
	CachedTokens int
	// CompletionTokens is the number of tokens generated, reasoning
	// included.
	CompletionTokens int
	// ReasoningTokens is the part of CompletionTokens spent thinking.
	ReasoningTokens int
	// DraftedTokens is the tokens drafted for the model to verify
	// (Config.Draft), and AcceptedTokens the part of CompletionTokens
	// that came from them: each saved a decode step. They are the
	// engine's own figures, which no wire format carries.
	DraftedTokens, AcceptedTokens int
	// WebSearches is the number of searches the request ran
	// (Request.Search). Their results count in PromptTokens, as the model
	// reads them: each turn after a search is a prompt of its own.
	WebSearches int
	// MCPCalls counts the MCP tool calls the engine ran.
	MCPCalls int
}

// Timings measure where a request spent its time.
type Timings struct {
	// Queued is the wait for a free sequence.
	Queued time.Duration
	// Prefill is the time from admission to the first generated token.
	Prefill time.Duration
	// Decode is the time from the first generated token to the end.
	Decode time.Duration
	// Thinking is the time from the first generated token to the end of
	// the thinking section, when the model thought.
	Thinking time.Duration
}

// Result is a finished generation.
type Result struct {
	// Text is the answer, without the thinking.
	Text string
	// Reasoning is the model's thinking, when it thinks before answering
	// (<think>...</think> or its own markers).
	Reasoning string
	// Summary is the summary of Reasoning, when the request asked for one.
	Summary      string
	FinishReason FinishReason
	// StopSequence is the stop string matched when FinishReason is
	// FinishStopSequence.
	StopSequence string
	// StopToken is the end-of-turn token that ended the output when
	// FinishReason is FinishStop or FinishToolCalls.
	StopToken int
	// ToolCalls are the model's calls of the request's tools.
	ToolCalls []ToolCall
	// Logprobs are the answer's tokens and their log-probabilities, when
	// the request asked for them.
	Logprobs []TokenLogprob
	// PromptLogprobs are the prompt's tokens, when the request asked for
	// them (Request.PromptLogprobs): the first, which nothing before it
	// predicts, with Logprob 0 and no alternatives.
	PromptLogprobs []TokenLogprob
	// Searches are the web searches the model ran, in order, when the
	// request let it (Request.Search).
	Searches []SearchCall
	// Citations tie spans of Text to the search results the model cited.
	Citations []Citation
	// MCPLists are the tool listings of the request's MCP servers
	// (Request.MCP), one per server, in the order of its Servers.
	MCPLists []MCPToolList
	// MCPCalls are the MCP tools the model called, in order: those the
	// engine ran (completed or failed), those the caller declined, and
	// last, those that wait for approval (MCPAwaitingApproval), with
	// which the request ends (FinishToolCalls).
	MCPCalls []MCPCall
	Usage    Usage
	Timings  Timings
	// callCut says the output ended inside a tool call, which the
	// engine's bound on an ungrammared search call cut (searchCallBytes).
	callCut bool
}

// add counts a turn of a request that searches (searchLoop) into r: its
// thinking, summary, usage and time.
func (r *Result) add(turn *Result, first bool) {
	r.Reasoning += turn.Reasoning
	r.Summary += turn.Summary
	r.Usage.add(turn.Usage)
	if first {
		r.Timings = turn.Timings
		return
	}
	r.Timings.Decode += turn.Timings.Queued + turn.Timings.Prefill + turn.Timings.Decode
	r.Timings.Thinking += turn.Timings.Thinking
}

// add counts v into u.
func (u *Usage) add(v Usage) {
	u.PromptTokens += v.PromptTokens
	u.CachedTokens += v.CachedTokens
	u.CompletionTokens += v.CompletionTokens
	u.ReasoningTokens += v.ReasoningTokens
	u.DraftedTokens += v.DraftedTokens
	u.AcceptedTokens += v.AcceptedTokens
	u.WebSearches += v.WebSearches
	u.MCPCalls += v.MCPCalls
}

// Event is one step of a stream: a piece of text, or the end.
type Event struct {
	// Text is the next piece of the output. It holds whole UTF-8
	// characters and never any part of a matched stop string.
	Text string
	// Reasoning is the next piece of the model's thinking. Thinking comes
	// before any Text.
	Reasoning string
	// Summary is the next piece of the thinking's summary, when the
	// request asked for one: after the thinking, before any Text.
	Summary string
	// ToolCalls are calls the model has just finished writing, whole.
	ToolCalls []ToolCall
	// Search is a web search the engine runs for the model (Request.Search):
	// an event when it starts (SearchSearching) and one when it ends.
	Search *SearchCall
	// MCPList is a listing of an MCP server's tools (Request.MCP): an
	// event when it starts (MCPInProgress) and one when it ends, before
	// the first turn. MCPCall is a call of one of them: an event when
	// it starts and one when it ends, or a single one for a call that
	// waits for approval or that the caller declined.
	MCPList *MCPToolList
	MCPCall *MCPCall
	// Citations are the citations whose markers the model has just
	// written, taken out of Text; their offsets are in the whole answer.
	Citations []Citation
	// Logprobs are the entries of the answer tokens generated since the
	// previous event, when the request asked for them: the entries of a
	// stream's events, in order, are its result's Logprobs.
	Logprobs []TokenLogprob
	// PromptLogprobs are the prompt's entries, on the first event of a
	// request that asked for them (Request.PromptLogprobs).
	PromptLogprobs []TokenLogprob
	// Choice is the index of the completion the event belongs to, when
	// the request asked for several (Request.Choices).
	Choice int
	// Final is set on the last event of a successful stream (of each
	// choice); its Text is the whole output.
	Final *Result
}

// ChoicesUsage returns the usage of a request's results together, n
// choices to a prompt (those of prompt i are results[i*n:(i+1)*n]): each
// prompt counted once, as its first choice counts it (the others follow
// its prefill), and the tokens generated summed.
func ChoicesUsage(results []Result, n int) Usage {
	var u Usage
	for i, res := range results {
		if i%max(1, n) == 0 {
			u.PromptTokens += res.Usage.PromptTokens
			u.CachedTokens += res.Usage.CachedTokens
		}
		u.CompletionTokens += res.Usage.CompletionTokens
		u.ReasoningTokens += res.Usage.ReasoningTokens
		u.DraftedTokens += res.Usage.DraftedTokens
		u.AcceptedTokens += res.Usage.AcceptedTokens
	}
	return u
}
