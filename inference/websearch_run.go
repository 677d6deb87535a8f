package inference

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/inferkit/inferkit/search"
)

// searchTimeout bounds one search.
const searchTimeout = 15 * time.Second

// searchTurn checks a request with Search and returns the request of its
// first turn: the search tool beside the request's own, called first when
// the request forces it. The returned options have their defaults.
func (e *Engine) searchTurn(req Request) (Request, *SearchOptions, error) {
	if e.cfg.Search == nil {
		return req, nil, fieldError(Field("Search"), "this engine has no search backend (Config.Search)")
	}
	opts := *req.Search
	if err := opts.check(); err != nil {
		return req, nil, err
	}
	switch {
	case len(req.Messages) == 0:
		return req, nil, fieldError(Field("Search"), "needs Messages: a raw Prompt has no tool calls")
	case req.Choices > 1:
		return req, nil, fieldError(Field("Search"), "with %d Choices: a request that searches has one", req.Choices)
	case req.Logprobs || req.PromptLogprobs || req.PromptOnly:
		return req, nil, fieldError(Field("Search"), "with log-probabilities or PromptOnly")
	case req.ToolChoice.Mode == ToolNone:
		return req, nil, fieldError(Field("ToolChoice"), "none, with Search: the model cannot search")
	case opts.Force && (req.ToolChoice.Mode == ToolFunction || req.ToolChoice.Mode == ToolRequired):
		return req, nil, fieldError(Field("ToolChoice"), "forces another tool, and Search.Force the search")
	}
	for i, t := range req.Tools {
		if t.Name == SearchToolName {
			return req, nil, fieldError(Field("Tools").At(i).Dot("Name"), "%q is the search tool's name", t.Name)
		}
	}
	turn := req
	turn.Search = nil
	turn.Tools = append(slices.Clip(req.Tools), searchTool)
	if opts.Force {
		turn.ToolChoice = ToolChoice{Mode: ToolFunction, Name: SearchToolName}
	}
	return turn, &opts, nil
}

// searchLoop runs a request with Search: turn after turn, each a
// generation over the conversation so far, until a turn calls no search
// (or calls the request's own tools, which end it as usual). The searches
// a turn calls run between turns, and their results go to the model as
// tool messages; each turn reuses the previous one's KV cells through the
// prompt cache. Events carry the answer with its citation markers taken
// out, the citations, and each search as it starts and ends; the final
// result sums the turns. The lease l keeps the model loaded for every
// turn and between them, while the searches run; the caller releases it.
func (e *Engine) searchLoop(ctx context.Context, l *lease, p *Prepared, yield func(Event, error) bool) {
	req, opts := p.plan.search.req, p.plan.search.opts
	var err error
	msgs := slices.Clone(req.Messages)
	var res Result
	var text strings.Builder
	c := &citer{}
	budget := p.MaxOutputTokens
	searches := 0
	turn := p
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
			ev.ToolCalls = slices.DeleteFunc(ev.ToolCalls, isSearchCall)
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
			yield(Event{}, errors.New("inference: a search turn ended without a result"))
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
		calls := slices.DeleteFunc(slices.Clone(final.ToolCalls), func(c ToolCall) bool { return !isSearchCall(c) })
		own := slices.DeleteFunc(slices.Clone(final.ToolCalls), isSearchCall)
		budget -= final.Usage.CompletionTokens
		if len(calls) == 0 && final.FinishReason == FinishLength && (n == 0 && opts.Force || final.callCut) {
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
		if len(calls) == 0 || len(own) > 0 || searches == opts.MaxSearches || budget <= 0 {
			res.Text, res.ToolCalls = text.String(), own
			res.FinishReason, res.StopSequence, res.StopToken = final.FinishReason, final.StopSequence, final.StopToken
			if len(calls) > 0 && len(own) == 0 {
				// Searches the request had no room left to run.
				res.FinishReason = FinishLength
			}
			yield(Event{Final: &res}, nil)
			return
		}
		var ran []SearchCall // each call's search, the zero value past the limit
		for _, call := range calls {
			var sc SearchCall
			if searches < opts.MaxSearches {
				searches++
				var ok bool
				if sc, ok = e.search(ctx, call, opts, len(c.sources)+1, text.Len(), len(res.Reasoning), yield); !ok {
					return
				}
				res.Searches = append(res.Searches, sc)
				res.Usage.WebSearches++
				c.sources = append(c.sources, sc.Results...)
			}
			ran = append(ran, sc)
		}
		reply := Message{Role: RoleAssistant, Content: []Part{{Text: final.Text}}, Reasoning: final.Reasoning, ToolCalls: calls}
		if turn, msgs, err = e.nextTurn(l, req, append(msgs, reply), calls, ran, opts.ContentChars, budget); err != nil {
			if errors.Is(err, ErrContextLength) {
				// Not even the results' titles fit: the answer ends here.
				res.Text, res.FinishReason = text.String(), FinishLength
				yield(Event{Final: &res}, nil)
				return
			}
			yield(Event{}, fmt.Errorf("inference: the conversation with the search results: %w", err))
			return
		}
		if e.onSearchTurn != nil {
			e.onSearchTurn(turn)
		}
	}
}

// nextTurn prepares the turn after searches: the conversation so far
// (msgs, which ends with the turn that called them), a tool message
// answering each call with its search (ran, in order; the zero value for
// a call past the limit), and what is left of the output limit. Results
// that would not fit in the context are cut, to fewer characters each,
// down to their titles; past that, it fails with ErrContextLength. It
// returns the turn and its conversation, prepared on l's model.
func (e *Engine) nextTurn(l *lease, req Request, msgs []Message, calls []ToolCall, ran []SearchCall, chars, budget int) (*Prepared, []Message, error) {
	for {
		next := req
		next.Search, next.Messages = nil, slices.Clone(msgs)
		for i, call := range calls {
			content := "The search limit of this request is reached: answer with the results you have."
			if ran[i].Status != "" {
				content = ran[i].Text(chars)
			}
			next.Messages = append(next.Messages, Message{Role: RoleTool, ToolCallID: call.ID, Name: SearchToolName, Content: []Part{{Text: content}}})
		}
		next.Tools = append(slices.Clip(req.Tools), searchTool)
		// What is left of the output limit, within the room the longer
		// conversation leaves.
		next.MaxTokens, next.ClampMaxTokens = budget, true
		p, err := e.prepare(l, next)
		if errors.Is(err, ErrContextLength) && chars > 0 {
			chars /= 4 // and to 0: titles and URLs only
			continue
		}
		return p, next.Messages, err
	}
}

// runTurn runs one turn of a search loop and reports whether yield wanted
// more.
func (e *Engine) runTurn(ctx context.Context, l *lease, p *Prepared, yield func(Event, error) bool) bool {
	more := true
	e.runPlain(ctx, l, p, nil, func(ev Event, err error) bool {
		more = yield(ev, err) && err == nil
		return more
	})
	return more
}

// search runs the search that call asks for, announcing it (yield) as it
// starts and ends; first is the number its first result takes, at and
// reasoningAt the lengths of the answer and thinking so far. ok is false
// when yield wanted no more.
func (e *Engine) search(ctx context.Context, call ToolCall, opts *SearchOptions, first, at, reasoningAt int, yield func(Event, error) bool) (sc SearchCall, ok bool) {
	sc = SearchCall{ID: "ws_" + rand.Text(), Status: SearchSearching, First: first, At: at, ReasoningAt: reasoningAt}
	query, err := searchQuery(call)
	sc.Query = query
	if ann := sc; !yield(Event{Search: &ann}, nil) {
		return sc, false
	}
	var results []search.Result
	if err == nil {
		sctx, end := e.traceTool(ctx, SearchToolName, call.ID)
		sctx, cancel := context.WithTimeout(sctx, searchTimeout)
		results, err = e.cfg.Search.Search(sctx, search.Query{Text: query, Count: opts.Results, Locale: opts.Locale, Location: opts.Location, Domains: opts.Domains})
		cancel()
		end(err)
	}
	if err != nil {
		sc.Status, sc.Error = SearchFailed, err.Error()
	} else {
		// A copy: the Searcher's slice is its own.
		sc.Status, sc.Results = SearchCompleted, slices.Clone(results[:min(len(results), opts.Results)])
		for i := range sc.Results {
			sc.Results[i].Content = search.Truncate(sc.Results[i].Content, opts.ContentChars)
		}
	}
	done := sc
	return sc, yield(Event{Search: &done}, nil)
}

// isSearchCall reports whether c calls the search tool.
func isSearchCall(c ToolCall) bool { return c.Name == SearchToolName }

// isSearchTool reports whether t is the search tool.
func isSearchTool(t Tool) bool { return t.Name == SearchToolName }
