package inference

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/inferkit/inferkit/search"
)

// SearchOptions lets the model search the web while it answers, through
// the engine's Config.Search: the model sees a tool named SearchToolName,
// and each call of it runs a search whose numbered results go back to the
// model, which goes on answering and cites them as [n]. The zero value
// searches at most 3 times, 5 results of up to 1,000 characters each.
//
// Request.MaxTokens bounds the output of every turn together. A turn that
// calls the request's own tools ends the request with those calls, as
// without Search; searches called beside them do not run.
type SearchOptions struct {
	// MaxSearches bounds the searches of the request, 1 to
	// MaxSearchesPerRequest; 0 means 3. In the turn that reaches it,
	// calls past it are answered with a note that the limit is reached;
	// the turn after it that calls again ends the request, with
	// FinishLength.
	MaxSearches int
	// Force makes the model search before it answers: its first turn is
	// a call of the search tool. A forced call's query is at most 100
	// characters (its grammar); one the model chooses is cut once past
	// what such a query takes, and reported as a SearchIncomplete call.
	Force bool
	// Results is the number of results a search gives the model, 1 to
	// search.MaxCount; 0 means 5.
	Results int
	// ContentChars bounds the characters of each result's text that the
	// model reads, 100 to 10,000; 0 means 1,000.
	ContentChars int
	// Locale, Location and Domains go with every query (search.Query).
	Locale   string
	Location *search.Location
	Domains  []string
}

// SearchToolName is the name of the search tool the model sees. A request
// with Search may not declare a tool of that name.
const SearchToolName = "web_search"

// MaxSearchesPerRequest bounds SearchOptions.MaxSearches.
const MaxSearchesPerRequest = 10

// SearchStatus is where a search stands.
type SearchStatus string

// The statuses of a search.
const (
	SearchSearching SearchStatus = "searching"
	SearchCompleted SearchStatus = "completed"
	SearchFailed    SearchStatus = "failed"
	// SearchIncomplete: the output limit, or the bound on a call that
	// no grammar bounds (a query past maxQueryChars), cut the model's
	// call short, in its query; no search ran.
	SearchIncomplete SearchStatus = "incomplete"
)

// maxQueryChars bounds the query of a search call, in characters: the
// grammar of a forced call keeps it within (the search tool's schema),
// so that a model cannot spend its whole output limit in one query.
const maxQueryChars = 100

// searchCallBytes bounds a search call that no grammar bounds (one the
// model chooses to make): its name and JSON around a query of
// maxQueryChars characters, each at most 6 bytes (a JSON escape), with
// room to spare. A search turn stops past it, the call reported as
// incomplete, so that a model that rambles in its query cannot spend its
// output limit there; the request's own tools' calls are not bounded.
const searchCallBytes = 6*maxQueryChars + 256

// SearchCall is one search the engine ran for a request.
type SearchCall struct {
	// ID names the search, unique in the engine's process ("ws_…").
	ID string
	// Query is what the model searched for.
	Query string
	// Status: SearchSearching in the event that announces the search,
	// then SearchCompleted or SearchFailed; SearchIncomplete, in the only
	// event of a call the output limit cut short.
	Status SearchStatus
	// Error says why a search failed.
	Error string
	// Results are what the model read, numbered First, First+1, …: the
	// numbers its citations use.
	Results []search.Result
	First   int
	// At is the length of Result.Text when the model called the search:
	// text before it was written before the search. ReasoningAt is the
	// length of Result.Reasoning then: the thinking after it is the next
	// turn's.
	At, ReasoningAt int
}

// Citation ties a span of the answer to a search result the model cited.
type Citation struct {
	// Start and End are byte offsets of the cited span in Result.Text
	// (the answer with the citation markers taken out).
	Start, End int
	// Source is the number the model cited (SearchCall.First and on).
	Source int
	// URL and Title are the cited result's.
	URL, Title string
}

// check validates the options and fills their defaults.
func (o *SearchOptions) check() error {
	switch {
	case o.MaxSearches < 0 || o.MaxSearches > MaxSearchesPerRequest:
		return fieldError(Field("Search", "MaxSearches"), "%d, want 1 to %d", o.MaxSearches, MaxSearchesPerRequest)
	case o.Results < 0 || o.Results > search.MaxCount:
		return fieldError(Field("Search", "Results"), "%d, want 1 to %d", o.Results, search.MaxCount)
	case o.ContentChars != 0 && (o.ContentChars < 100 || o.ContentChars > 10000):
		return fieldError(Field("Search", "ContentChars"), "%d, want 100 to 10,000", o.ContentChars)
	}
	if o.MaxSearches == 0 {
		o.MaxSearches = 3
	}
	if o.Results == 0 {
		o.Results = 5
	}
	if o.ContentChars == 0 {
		o.ContentChars = 1000
	}
	// A query with these options must be valid whatever its text.
	q := search.Query{Text: "x", Count: o.Results, Locale: o.Locale, Location: o.Location, Domains: o.Domains}
	if err := q.Validate(); err != nil {
		return fieldError(Field("Search"), "%v", err)
	}
	return nil
}

// searchTool is the tool the model calls to search.
var searchTool = Tool{
	Name:        SearchToolName,
	Description: "Search the web. Returns numbered results; cite a result you use with its number in brackets, such as [1], right after the sentence that uses it.",
	Parameters: []byte(fmt.Sprintf(`{"type":"object","properties":{"query":{"type":"string","description":"What to search for","minLength":1,"maxLength":%d}},"required":["query"]}`,
		maxQueryChars)),
}

// searchQuery reads the query of a call of the search tool.
func searchQuery(call ToolCall) (string, error) {
	var args struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
		return "", fmt.Errorf("the arguments are not a JSON object with a query: %v", err)
	}
	if strings.TrimSpace(args.Query) == "" {
		return "", fmt.Errorf("the query is empty")
	}
	return args.Query, nil
}

// Text is what the model reads of the search, in the tool message that
// answers its call: the results numbered from First, each with its
// title, URL, date and text (cut to chars characters), and how to cite
// them; or that it failed, and why. A server that takes a search back
// from a client's history gives the model the same text.
func (c SearchCall) Text(chars int) string {
	switch {
	case c.Status == SearchFailed && c.Error == "":
		return "The search failed."
	case c.Status == SearchFailed:
		return "The search failed: " + c.Error
	case c.Status == SearchIncomplete:
		return "The search call was cut short by the output limit: no search ran."
	}
	if len(c.Results) == 0 {
		return fmt.Sprintf("No results for %q.", c.Query)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Results for %q:\n", c.Query)
	for i, r := range c.Results {
		fmt.Fprintf(&b, "\n[%d] %s\n%s\n", c.First+i, r.Title, r.URL)
		if !r.Published.IsZero() {
			fmt.Fprintf(&b, "Published %s\n", r.Published.Format("2006-01-02"))
		}
		b.WriteString(search.Truncate(r.Content, chars))
		b.WriteString("\n")
	}
	b.WriteString("\nCite a result you use with its number in brackets, such as [1].")
	return b.String()
}

// citer takes the citation markers ([n], for a source n the model has
// read) out of an answer as it streams, and ties each to the span it
// ends: the text since the previous marker (or since the answer began),
// without the spaces around it. A marker right after another cites the
// same span. It holds back what may still become a marker: a "[" and up
// to three digits, and the spaces before them.
type citer struct {
	sources []search.Result // numbered from 1
	out     int             // bytes of text released so far
	start   int             // where the current span starts
	open    bool            // the current span has text
	held    string
	prev    *Citation // the last citation, whose span a marker right after it shares
}

// push takes the next piece of text and returns what can be released and
// the citations it completes.
func (c *citer) push(s string) (string, []Citation) {
	text := c.held + s
	c.held = ""
	var out strings.Builder
	var cites []Citation
	for text != "" {
		i := strings.IndexByte(text, '[')
		if i < 0 {
			c.write(&out, text)
			break
		}
		c.write(&out, text[:i])
		text = text[i:]
		n, size, ok := marker(text)
		switch {
		case size < 0: // may still become a marker
			c.held, text = text, ""
		case ok && n >= 1 && n <= len(c.sources):
			cites = append(cites, c.cite(&out, n))
			text = text[size:]
		default:
			c.write(&out, text[:1])
			text = text[1:]
		}
	}
	// Spaces at the end wait too: a marker may follow them.
	released := out.String()
	trimmed := strings.TrimRight(released, " ")
	c.held = released[len(trimmed):] + c.held
	c.out -= len(released) - len(trimmed)
	return trimmed, cites
}

// write releases text, which holds no marker.
func (c *citer) write(out *strings.Builder, text string) {
	if !c.open {
		// A span starts at its first character other than a space.
		lead := len(text) - len(strings.TrimLeft(text, " .,;:!?)\n"))
		c.start = c.out + lead
		c.open = lead < len(text)
	}
	out.WriteString(text)
	c.out += len(text)
}

// cite records marker n at the current end of the text; out is the text
// this push releases, whose spaces before the marker are dropped.
func (c *citer) cite(out *strings.Builder, n int) Citation {
	s := out.String()
	trimmed := strings.TrimRight(s, " ")
	c.out -= len(s) - len(trimmed)
	out.Reset()
	out.WriteString(trimmed)
	src := c.sources[n-1]
	cite := Citation{Start: c.start, End: c.out, Source: n, URL: src.URL, Title: src.Title}
	switch {
	case !c.open && c.prev != nil:
		cite.Start, cite.End = c.prev.Start, c.prev.End
	case !c.open: // a marker with no text before it cites nothing
		cite.Start = c.out
	}
	c.prev, c.open = &cite, false
	return cite
}

// flush releases what is held at the end of the answer.
func (c *citer) flush() string {
	s := c.held
	c.held = ""
	c.out += len(s)
	return s
}

// marker reads a citation marker at the start of s, which starts with
// "[": its number and length ("[12]": 12, 4). ok is false when s does not
// start with one; size is then -1 when more text may still make one.
func marker(s string) (n, size int, ok bool) {
	j := 1
	for j < len(s) && j <= 4 && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	switch {
	case j == len(s) && j <= 4:
		return 0, -1, false // "[", "[1", "[12", "[123": more may come
	case j == 1 || j > 4 || s[j] != ']':
		return 0, 0, false
	}
	n, err := strconv.Atoi(s[1:j])
	return n, j + 1, err == nil
}
