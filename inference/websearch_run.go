package inference

import (
	"context"
	"crypto/rand"
	"slices"
	"time"

	"github.com/inferkit/inferkit/search"
)

// searchTimeout bounds one search.
const searchTimeout = 15 * time.Second

// searchTurn checks the Search of a request that toolTurn has checked,
// and returns the request of its first turn: the search tool beside the
// request's own, called first when the request forces it. The returned
// options have their defaults.
func (e *Engine) searchTurn(req Request) (Request, *SearchOptions, error) {
	if e.cfg.Search == nil {
		return req, nil, fieldError(Field("Search"), "this engine has no search backend (Config.Search)")
	}
	opts := *req.Search
	if err := opts.check(); err != nil {
		return req, nil, err
	}
	if opts.Force && (req.ToolChoice.Mode == ToolFunction || req.ToolChoice.Mode == ToolRequired) {
		return req, nil, fieldError(Field("ToolChoice"), "forces another tool, and Search.Force the search")
	}
	for i, t := range req.Tools {
		if t.Name == SearchToolName {
			return req, nil, fieldError(Field("Tools").At(i).Dot("Name"), "%q is the search tool's name", t.Name)
		}
	}
	turn := req
	turn.Tools = append(slices.Clip(req.Tools), searchTool)
	if opts.Force {
		turn.ToolChoice = ToolChoice{Mode: ToolFunction, Name: SearchToolName}
	}
	return turn, &opts, nil
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
