package inference

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// toolTurn checks a request with tools that the engine runs (Search,
// MCP) and returns the request of its first turn and its plan: the
// search tool beside the request's own (searchTurn); the servers' tools
// are listed when it runs.
func (e *Engine) toolTurn(m *model, req Request) (Request, *toolPlan, error) {
	name := "Search"
	if req.Search == nil {
		name = "MCP"
	}
	switch {
	case m.runner != nil && (m.family == nil || m.family.Tools == nil):
		// The engine's tools are tool calls in the family's format.
		return req, nil, fieldError(Field(name), "%s", m.noTools())
	case len(req.Messages) == 0:
		return req, nil, fieldError(Field(name), "needs Messages: a raw Prompt has no tool calls")
	case req.Choices > 1:
		return req, nil, fieldError(Field(name), "with %d Choices: a request whose tools the engine runs has one", req.Choices)
	case req.Logprobs || req.PromptLogprobs || req.PromptOnly:
		return req, nil, fieldError(Field(name), "with log-probabilities or PromptOnly")
	case req.ToolChoice.Mode == ToolNone:
		return req, nil, fieldError(Field("ToolChoice"), "none, with %s: the model cannot call its tools", name)
	}
	plan := &toolPlan{req: req}
	turn := req
	if req.Search != nil {
		var err error
		if turn, plan.search, err = e.searchTurn(req); err != nil {
			return req, nil, err
		}
	}
	if req.MCP != nil {
		opts := *req.MCP
		if err := opts.check(); err != nil {
			return req, nil, err
		}
		if err := checkApprovals(req.Messages, opts.Approvals); err != nil {
			return req, nil, err
		}
		plan.mcp = &opts
		if forces(turn.ToolChoice) && turn.ToolChoice == req.ToolChoice {
			// The servers' tools are not known yet: the first turn is
			// prepared again, with them and this choice, when it runs.
			turn.ToolChoice = ToolChoice{}
		}
	}
	turn.Search, turn.MCP = nil, nil
	return turn, plan, nil
}

// checkApprovals checks that each approval answers a call of the
// conversation's last assistant message that no tool message answers,
// once.
func checkApprovals(msgs []Message, approvals []MCPApproval) error {
	if len(approvals) == 0 {
		return nil
	}
	last := lastAssistant(msgs)
	pending := map[string]bool{}
	if last >= 0 {
		for _, c := range msgs[last].ToolCalls {
			pending[c.ID] = true
		}
		for _, m := range msgs[last+1:] {
			if m.Role == RoleTool {
				delete(pending, m.ToolCallID)
			}
		}
	}
	for i, a := range approvals {
		if !pending[a.CallID] {
			return fieldError(Field("MCP", "Approvals").At(i).Dot("CallID"), "%q is no call of the last assistant message that waits for an answer", a.CallID)
		}
		delete(pending, a.CallID) // a second answer of it fails
	}
	return nil
}

// toolLoop runs a request with tools that the engine runs (Search,
// MCP): turn after turn, each a generation over the conversation so far,
// until a turn calls none of them (or calls the request's own tools,
// which end it as usual, or one that waits for approval). The calls a
// turn makes run between turns, and their results go to the model as
// tool messages; each turn reuses the previous one's KV cells through
// the prompt cache. Before the first turn it connects to the MCP
// servers and lists their tools, and runs the calls the request
// approves. Events carry the answer with its citation markers taken
// out, the citations, each listing, search and call as it starts and
// ends; the final result sums the turns. The lease l keeps the model
// loaded for every turn and between them; the caller releases it.
func (e *Engine) toolLoop(ctx context.Context, l *lease, p *Prepared, yield func(Event, error) bool) {
	plan := p.plan.tools
	req, sopts, mopts := plan.req, plan.search, plan.mcp
	msgs := slices.Clone(req.Messages)
	var res Result
	var text strings.Builder
	c := &citer{}
	budget := p.MaxOutputTokens
	searches, mcpCalls := 0, 0
	turn := p
	tools := slices.Clip(req.Tools)
	if sopts != nil {
		tools = append(tools, searchTool)
	}
	var sessions mcpSessions
	if mopts != nil {
		var ok bool
		sessions, ok = e.mcpConnect(ctx, mopts, toolNames(tools), yield)
		defer sessions.close()
		if !ok {
			return
		}
		for _, s := range sessions {
			res.MCPLists = append(res.MCPLists, s.list)
		}
		tools = append(tools, sessions.tools()...)
		// The calls the request approves or declines, then the first
		// turn again, with the servers' tools and those answers.
		answers, ok := e.mcpApprovals(ctx, sessions, mopts, msgs, &mcpCalls, &res, yield)
		if !ok {
			return
		}
		first := req
		if sopts != nil && sopts.Force {
			first.ToolChoice = p.Request.ToolChoice
		}
		var err error
		if turn, err = e.prepare(l, turnRequest(first, append(msgs, answers...), tools, budget)); err != nil {
			yield(Event{}, fmt.Errorf("inference: the conversation with the MCP servers' tools: %w", err))
			return
		}
		msgs = append(msgs, answers...)
	}
	if forces(req.ToolChoice) {
		// The turns after the first may answer: a choice that forces a
		// call holds for the first.
		req.ToolChoice = ToolChoice{}
	}
	// engine reports whether the engine runs a call, not the caller.
	engine := func(c ToolCall) bool {
		if sopts != nil && isSearchCall(c) {
			return true
		}
		s, _ := sessions.tool(c.Name)
		return s != nil
	}
	for n := 0; ; n++ {
		var final *Result
		ok := e.runTurn(ctx, l, turn, func(ev Event, err error) bool {
			if err != nil {
				yield(ev, err)
				return false
			}
			if ev.Final != nil {
				final = ev.Final
				return true
			}
			ev.ToolCalls = slices.DeleteFunc(ev.ToolCalls, engine)
			ev.Text, ev.Citations = c.push(ev.Text)
			text.WriteString(ev.Text)
			res.Citations = append(res.Citations, ev.Citations...)
			if ev.Text == "" && ev.Reasoning == "" && ev.Summary == "" && len(ev.ToolCalls) == 0 && len(ev.Citations) == 0 {
				return true
			}
			return yield(ev, nil)
		})
		if !ok {
			return
		}
		if final == nil {
			yield(Event{}, errors.New("inference: a tool turn ended without a result"))
			return
		}
		if rest := c.flush(); rest != "" {
			text.WriteString(rest)
			if !yield(Event{Text: rest}, nil) {
				return
			}
		}
		c.open, c.prev = false, nil
		res.add(final, n == 0)
		calls := slices.DeleteFunc(slices.Clone(final.ToolCalls), func(c ToolCall) bool { return !engine(c) })
		own := slices.DeleteFunc(slices.Clone(final.ToolCalls), engine)
		budget -= final.Usage.CompletionTokens
		if sopts != nil && len(calls) == 0 && final.FinishReason == FinishLength && (n == 0 && sopts.Force || final.callCut) {
			// The forced call, or one the bound on a call cut short
			// (searchCallBytes), in its query: it is reported, not
			// dropped.
			why := "the output limit cut the search call short"
			if final.callCut {
				why = fmt.Sprintf("the search call ran past %d bytes: a query is at most %d characters", searchCallBytes, maxQueryChars)
			}
			sc := SearchCall{ID: "ws_" + rand.Text(), Status: SearchIncomplete, Error: why,
				First: len(c.sources) + 1, At: text.Len(), ReasoningAt: len(res.Reasoning)}
			res.Searches = append(res.Searches, sc)
			if !yield(Event{Search: &sc}, nil) {
				return
			}
		}
		// A turn that calls again after its limits were reached ends the
		// request: the model had the note that they were.
		exhausted := slices.ContainsFunc(calls, func(c ToolCall) bool {
			if isSearchCall(c) && sopts != nil {
				return searches == sopts.MaxSearches
			}
			return mcpCalls == mopts.MaxCalls
		})
		if len(calls) == 0 || len(own) > 0 || exhausted || budget <= 0 {
			res.Text, res.ToolCalls = text.String(), own
			res.FinishReason, res.StopSequence, res.StopToken = final.FinishReason, final.StopSequence, final.StopToken
			if len(calls) > 0 && len(own) == 0 {
				// Calls the request had no room left to run.
				res.FinishReason = FinishLength
			}
			yield(Event{Final: &res}, nil)
			return
		}
		// answers[i] answers calls[i], to the model, shrunk (see
		// nextTurn); nil for a call that waits for approval.
		answers := make([]func(shrink int) string, len(calls))
		var waiting []MCPCall
		for i, call := range calls {
			if sopts != nil && isSearchCall(call) {
				if searches == sopts.MaxSearches {
					answers[i] = func(int) string {
						return "The search limit of this request is reached: answer with the results you have."
					}
					continue
				}
				searches++
				sc, ok := e.search(ctx, call, sopts, len(c.sources)+1, text.Len(), len(res.Reasoning), yield)
				if !ok {
					return
				}
				res.Searches = append(res.Searches, sc)
				res.Usage.WebSearches++
				c.sources = append(c.sources, sc.Results...)
				answers[i] = func(shrink int) string { return sc.Text(sopts.ContentChars >> (2 * shrink)) }
				continue
			}
			s, t := sessions.tool(call.Name)
			mc := MCPCall{ID: call.ID, Server: s.server.Label, Name: t.Name, Arguments: call.Arguments, At: text.Len(), ReasoningAt: len(res.Reasoning)}
			switch {
			case s.server.Approval.requires(t.Name):
				mc.Status = MCPAwaitingApproval
				waiting = append(waiting, mc)
				continue
			case mcpCalls == mopts.MaxCalls:
				answers[i] = func(int) string { return mcpLimitText }
				continue
			}
			mcpCalls++
			mc, ok := e.runMCP(ctx, s, mc, mopts, yield)
			if !ok {
				return
			}
			res.MCPCalls = append(res.MCPCalls, mc)
			res.Usage.MCPCalls++
			answers[i] = func(shrink int) string { return clip(mc.Text(), mopts.ResultChars>>(2*shrink)) }
		}
		if len(waiting) > 0 {
			// The request ends with the calls that wait, after those of
			// its turn that did not; the caller answers them.
			for _, mc := range waiting {
				res.MCPCalls = append(res.MCPCalls, mc)
				if !yield(Event{MCPCall: &mc}, nil) {
					return
				}
			}
			res.Text, res.ToolCalls, res.FinishReason = text.String(), nil, FinishToolCalls
			yield(Event{Final: &res}, nil)
			return
		}
		reply := Message{Role: RoleAssistant, Content: []Part{{Text: final.Text}}, Reasoning: final.Reasoning, ToolCalls: calls}
		var err error
		if turn, msgs, err = e.nextTurn(l, req, append(msgs, reply), calls, answers, tools, budget); err != nil {
			if errors.Is(err, ErrContextLength) {
				// Not even the shortest answers fit: the answer ends here.
				res.Text, res.FinishReason = text.String(), FinishLength
				yield(Event{Final: &res}, nil)
				return
			}
			yield(Event{}, fmt.Errorf("inference: the conversation with the tools' results: %w", err))
			return
		}
		if e.onSearchTurn != nil {
			e.onSearchTurn(turn)
		}
	}
}

// maxShrink is how many times nextTurn shrinks the answers of a turn's
// calls, each time to a quarter of their characters, before it gives
// up: by then a search's results are their titles and URLs.
const maxShrink = 8

// nextTurn prepares the turn after a turn's calls: the conversation so
// far (msgs, which ends with the turn that made them), a tool message
// answering each call (answers[i](0), or, when they do not fit in the
// context, answers[i](k), shrunk k times, up to maxShrink; past that, it
// fails with ErrContextLength), the turn's tools and what is left of the
// output limit. It returns the turn and its conversation, prepared on
// l's model.
func (e *Engine) nextTurn(l *lease, req Request, msgs []Message, calls []ToolCall, answers []func(int) string, tools []Tool, budget int) (*Prepared, []Message, error) {
	for shrink := 0; ; shrink++ {
		next := slices.Clone(msgs)
		for i, call := range calls {
			next = append(next, Message{Role: RoleTool, ToolCallID: call.ID, Name: call.Name, Content: []Part{{Text: answers[i](shrink)}}})
		}
		p, err := e.prepare(l, turnRequest(req, next, tools, budget))
		if errors.Is(err, ErrContextLength) && shrink < maxShrink {
			continue
		}
		return p, next, err
	}
}

// turnRequest is the request of one turn of a tool loop: base's, with
// the conversation msgs, the tools, and what is left of the output
// limit, within the room the longer conversation leaves.
func turnRequest(base Request, msgs []Message, tools []Tool, budget int) Request {
	next := base
	next.Search, next.MCP = nil, nil
	next.Messages, next.Tools = msgs, tools
	next.MaxTokens, next.ClampMaxTokens = budget, true
	return next
}

// toolNames are the tools' names.
func toolNames(tools []Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

// runMCP runs the MCP call mc on s, announcing it (yield) as it starts
// and ends. ok is false when yield wanted no more.
func (e *Engine) runMCP(ctx context.Context, s *mcpSession, mc MCPCall, opts *MCPOptions, yield func(Event, error) bool) (MCPCall, bool) {
	mc.Status = MCPInProgress
	if ann := mc; !yield(Event{MCPCall: &ann}, nil) {
		return mc, false
	}
	cctx, end := e.traceTool(ctx, mc.Name, mc.ID)
	mc = s.call(cctx, mc, opts.Timeout, opts.ResultChars)
	if mc.Status == MCPFailed {
		end(errors.New(mc.Error))
	} else {
		end(nil)
	}
	done := mc
	return mc, yield(Event{MCPCall: &done}, nil)
}

// mcpApprovals answers the calls of the conversation's last assistant
// message that the request approves or declines (checkApprovals checked
// that they wait): an approved call runs, counted in *calls, within
// opts.MaxCalls; a declined one is answered with its refusal. It
// returns the tool messages that answer them, in order. ok is false
// when yield wanted no more.
func (e *Engine) mcpApprovals(ctx context.Context, ss mcpSessions, opts *MCPOptions, msgs []Message, calls *int, res *Result, yield func(Event, error) bool) (answers []Message, ok bool) {
	if len(opts.Approvals) == 0 {
		return nil, true
	}
	last := lastAssistant(msgs)
	for _, a := range opts.Approvals {
		call := msgs[last].ToolCalls[slices.IndexFunc(msgs[last].ToolCalls, func(c ToolCall) bool { return c.ID == a.CallID })]
		mc := MCPCall{ID: call.ID, Name: call.Name, Arguments: call.Arguments}
		s, t := ss.tool(call.Name)
		ran := false
		switch {
		case s == nil:
			mc.Status, mc.Error = MCPFailed, fmt.Sprintf("no MCP server of the request lists a tool %q now", call.Name)
		case !a.Approve:
			mc.Server, mc.Name, mc.Status, mc.Error = s.server.Label, t.Name, MCPDeclined, a.Reason
		case *calls == opts.MaxCalls:
			mc.Server, mc.Name, mc.Status, mc.Error = s.server.Label, t.Name, MCPFailed, mcpLimitText
		default:
			mc.Server, mc.Name = s.server.Label, t.Name
			*calls++
			if mc, ok = e.runMCP(ctx, s, mc, opts, yield); !ok {
				return nil, false
			}
			res.Usage.MCPCalls++
			ran = true
		}
		if !ran { // runMCP announces the calls it runs
			if ann := mc; !yield(Event{MCPCall: &ann}, nil) {
				return nil, false
			}
		}
		res.MCPCalls = append(res.MCPCalls, mc)
		answers = append(answers, Message{Role: RoleTool, ToolCallID: call.ID, Name: call.Name, Content: []Part{{Text: clip(mc.Text(), opts.ResultChars)}}})
	}
	return answers, true
}

// lastAssistant is the index of the conversation's last assistant
// message, or -1.
func lastAssistant(msgs []Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleAssistant {
			return i
		}
	}
	return -1
}

// forces reports whether a tool choice makes the model call a tool.
func forces(c ToolChoice) bool { return c.Mode == ToolRequired || c.Mode == ToolFunction }
