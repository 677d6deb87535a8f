package messages

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/search"
)

// An answer that searched twice, as the engine gives it: text before the
// first search, a span citing result 2, punctuation, a span citing
// results 1 and 2 (two markers in a row), a second search that failed,
// and text after it.
const (
	wsBefore = "Let me search."
	wsLyon   = "Lyon is a city in France"
	wsParis  = "Paris is the capital"
	wsAfter  = " Done."
)

var (
	wsResults = []search.Result{
		{URL: "https://example.org/paris", Title: "Paris", Content: "Paris is the capital of France.", Published: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)},
		{URL: "https://example.org/lyon", Title: "Lyon", Content: "Lyon is a city in France."},
	}
	wsFirst = inference.SearchCall{ID: "ws_first", Query: "cities of France", Status: inference.SearchCompleted,
		Results: wsResults, First: 1, At: len(wsBefore)}
	wsSecond = inference.SearchCall{ID: "ws_second", Query: "more cities", Status: inference.SearchFailed,
		Error: "search: the service is down", First: 3, At: len(wsBefore + wsLyon + ". " + wsParis + ".")}

	lyonStart  = len(wsBefore)
	parisStart = len(wsBefore + wsLyon + ". ")
	wsCiteLyon = inference.Citation{Start: lyonStart, End: lyonStart + len(wsLyon), Source: 2, URL: wsResults[1].URL, Title: "Lyon"}
	wsCiteP1   = inference.Citation{Start: parisStart, End: parisStart + len(wsParis), Source: 1, URL: wsResults[0].URL, Title: "Paris"}
	wsCiteP2   = inference.Citation{Start: parisStart, End: parisStart + len(wsParis), Source: 2, URL: wsResults[1].URL, Title: "Lyon"}

	resSearch = inference.Result{
		Text:         wsBefore + wsLyon + ". " + wsParis + "." + wsAfter,
		FinishReason: inference.FinishStop,
		Searches:     []inference.SearchCall{wsFirst, wsSecond},
		Citations:    []inference.Citation{wsCiteLyon, wsCiteP1, wsCiteP2},
		Usage:        inference.Usage{PromptTokens: 300, CachedTokens: 120, CompletionTokens: 40, WebSearches: 2},
	}
)

// searchEvents are the stream of resSearch as the engine writes it: each
// search announced and finished, each citation on the event whose text
// follows its marker.
func searchEvents() []inference.Event {
	searching := func(sc inference.SearchCall) *inference.SearchCall {
		sc.Status, sc.Results, sc.Error = inference.SearchSearching, nil, ""
		return &sc
	}
	first, second, final := wsFirst, wsSecond, resSearch
	return []inference.Event{
		{Text: "Let me "},
		{Text: "search."},
		{Search: searching(wsFirst)},
		{Search: &first},
		{Text: "Lyon is a city"},
		{Text: " in France"},
		{Text: ". Paris", Citations: []inference.Citation{wsCiteLyon}},
		{Text: " is the capital"},
		{Citations: []inference.Citation{wsCiteP1}},
		{Text: ".", Citations: []inference.Citation{wsCiteP2}},
		{Search: searching(wsSecond)},
		{Search: &second},
		{Text: wsAfter},
		{Final: &final},
	}
}

// searchToolJSON is a web search tool with every option.
const searchToolJSON = `{"type":"web_search_20250305","name":"web_search","max_uses":2,"allowed_domains":["example.org"],` +
	`"user_location":{"type":"approximate","city":"Lyon","region":"Auvergne-Rhône-Alpes","country":"FR","timezone":"Europe/Paris"}}`

// searchBody is a messages request with the web search tool.
const searchBody = `{"model":"core-2-5-pro","max_tokens":300,"tools":[` + searchToolJSON + `],` +
	`"tool_choice":{"type":"tool","name":"web_search"},"messages":[{"role":"user","content":"Cities of France?"}]}`

// followUp is a request that gives content back as the assistant's turn
// after searchBody's question, with a new question.
func followUp(t *testing.T, content []byte) []byte {
	t.Helper()
	return []byte(`{"model":"core-2-5-pro","max_tokens":300,"tools":[{"name":"get_time","input_schema":{"type":"object"}},` + searchToolJSON + `],` +
		`"tool_choice":{"type":"any"},"messages":[{"role":"user","content":"Cities of France?"},` +
		`{"role":"assistant","content":` + string(content) + `},{"role":"user","content":"And the largest?"}]}`)
}

// wsToolText is what the model read of the first search: the layout of
// the engine's tool message.
const wsToolText = `Results for "cities of France":

[1] Paris
https://example.org/paris
Published 2026-01-02
Paris is the capital of France.

[2] Lyon
https://example.org/lyon
Lyon is a city in France.

Cite a result you use with its number in brackets, such as [1].`

func TestGoldenMessagesWebSearch(t *testing.T) {
	req := formatstest.Parse(t, Parse, searchBody)
	formatstest.Golden(t, "message_websearch.json", formatstest.JSON(t, NewMessage(req, resSearch, formatstest.Options())))

	var b bytes.Buffer
	s := NewStream(&b, req, formatstest.Options())
	s.InputTokens = 300
	formatstest.Stream(t, s, searchEvents(), nil)
	formatstest.Golden(t, "messages_stream_websearch.sse", b.Bytes())

	// The request that gives the answer back, as the engine reads it.
	content, err := formats.Marshal(NewMessage(req, resSearch, formatstest.Options()).Content)
	if err != nil {
		t.Fatal(err)
	}
	next := formatstest.Parse(t, Parse, string(followUp(t, content)))
	formatstest.Golden(t, "messages_websearch_request.json", formatstest.JSON(t, struct {
		Search     *inference.SearchOptions
		ToolChoice formats.ToolChoice
		Messages   []inference.Message
	}{next.Search, next.ToolChoice, next.Messages}))

	// The canonical request written back in the messages style.
	written, err := formats.Marshal(NewRequest(req))
	if err != nil {
		t.Fatal(err)
	}
	if again := formatstest.Parse(t, Parse, string(written)); !reflect.DeepEqual(again.Search, req.Search) || again.ToolChoice != req.ToolChoice {
		t.Errorf("written back %s: search %+v, choice %+v", written, again.Search, again.ToolChoice)
	}
}

// The blocks of an answer that searched: the text before the search, the
// search's two blocks, each cited span a text block with its citations,
// and the text between and after in blocks of their own.
func TestMessageWebSearchBlocks(t *testing.T) {
	req := formatstest.Parse(t, Parse, searchBody)
	m := NewMessage(req, resSearch, formatstest.Options())
	type block struct{ typ, text, id string }
	var got []block
	for _, b := range m.Content {
		got = append(got, block{b.Type, b.Text, b.ID + b.ToolUseID})
	}
	want := []block{
		{"text", wsBefore, ""},
		{"server_tool_use", "", "srvtoolu_first"},
		{"web_search_tool_result", "", "srvtoolu_first"},
		{"text", wsLyon, ""},
		{"text", ". ", ""},
		{"text", wsParis, ""},
		{"text", ".", ""},
		{"server_tool_use", "", "srvtoolu_second"},
		{"web_search_tool_result", "", "srvtoolu_second"},
		{"text", " ", ""},
		{"text", "Done.", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("blocks\n got %q\nwant %q", got, want)
	}
	// Each cited block is its citation's span.
	for _, i := range []int{3, 5} {
		for _, c := range m.Content[i].Citations {
			if c.Type != "web_search_result_location" || c.EncryptedIndex == "" || !strings.Contains(resSearch.Text, m.Content[i].Text) {
				t.Errorf("block %d citation %+v", i, c)
			}
		}
	}
	if c := m.Content[3].Citations; len(c) != 1 || c[0].URL != wsResults[1].URL || c[0].CitedText != wsResults[1].Content {
		t.Errorf("Lyon's citations %+v", c)
	}
	if c := m.Content[5].Citations; len(c) != 2 || c[0].URL != wsResults[0].URL || c[1].URL != wsResults[1].URL {
		t.Errorf("Paris's citations %+v", c)
	}
	if r := m.Content[2].WebSearch; r == nil || len(r.Results) != 2 || r.Results[0].URL != wsResults[0].URL ||
		*r.Results[0].PageAge != "January 2, 2026" || r.Results[1].PageAge != nil {
		t.Errorf("results %+v", r)
	}
	if r := m.Content[8].WebSearch; r == nil || r.ErrorCode != "unavailable" {
		t.Errorf("failed search %+v", r)
	}
	if u := m.Usage.ServerToolUse; u == nil || u.WebSearchRequests != 2 {
		t.Errorf("usage %+v", m.Usage)
	}
	// A request without the tool keeps its usage as it was.
	if u := NewMessage(formatstest.Parse(t, Parse, formatstest.MessagesBody), formatstest.Thinking(), formatstest.Options()).Usage; u.ServerToolUse != nil {
		t.Errorf("usage without search %+v", u)
	}

	// Back to the engine's result: the spans are the blocks.
	back := m.Result()
	want2 := resSearch
	want2.Searches = slices.Clone(want2.Searches)
	want2.Searches[1].Error = "unavailable"
	if !reflect.DeepEqual(back, want2) {
		t.Errorf("result\n got %+v\nwant %+v", back, want2)
	}
}

// A stream builds the message's blocks, whether its events come in
// pieces or all in the final result; the SDK accumulates the stream into
// the message it decodes from the non-streamed body.
func TestMessagesStreamWebSearchMatches(t *testing.T) {
	req := formatstest.Parse(t, Parse, searchBody)
	body, err := formats.Marshal(NewMessage(req, resSearch, formatstest.Options()))
	if err != nil {
		t.Fatal(err)
	}
	var want anthropic.Message
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatal(err)
	}
	final := resSearch
	for name, events := range map[string][]inference.Event{"pieces": searchEvents(), "final only": {{Final: &final}}} {
		t.Run(name, func(t *testing.T) {
			sameStream(t, req, events, want)
		})
	}

	// With thinking, each turn's thinking comes after the search before
	// it, in a block of its own, in both forms.
	thinking := resSearch
	thinking.Reasoning = "First, search. " + "Lyon is in the results. " + "Nothing more."
	thinking.Searches = slices.Clone(resSearch.Searches)
	thinking.Searches[0].ReasoningAt = len("First, search. ")
	thinking.Searches[1].ReasoningAt = len("First, search. Lyon is in the results. ")
	body, err = formats.Marshal(NewMessage(req, thinking, formatstest.Options()))
	if err != nil {
		t.Fatal(err)
	}
	want = anthropic.Message{}
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatal(err)
	}
	var thoughts []string
	for _, b := range want.Content {
		if b.Type == "thinking" {
			thoughts = append(thoughts, b.Thinking)
		}
	}
	if len(thoughts) != 3 || thoughts[1] != "Lyon is in the results. " {
		t.Errorf("thinking blocks %q, want one a turn", thoughts)
	}
	// Each turn thinks first: the first at the start, the next ones once
	// the search before them has ended.
	events := []inference.Event{{Reasoning: thinking.Reasoning[:thinking.Searches[0].ReasoningAt]}}
	ended := 0
	for _, ev := range searchEvents() {
		if ev.Final != nil {
			ev.Final = &thinking
		}
		events = append(events, ev)
		if ev.Search != nil && ev.Search.Status != inference.SearchSearching {
			end := len(thinking.Reasoning)
			if ended+1 < len(thinking.Searches) {
				end = thinking.Searches[ended+1].ReasoningAt
			}
			events = append(events, inference.Event{Reasoning: thinking.Reasoning[thinking.Searches[ended].ReasoningAt:end]})
			ended++
		}
	}
	sameStream(t, req, events, want)
}

// sameStream checks that the stream of events builds want's blocks, as
// the SDK accumulates them.
func sameStream(t *testing.T, req formats.Request, events []inference.Event, want anthropic.Message) {
	t.Helper()
	{
		{
			var b bytes.Buffer
			formatstest.Stream(t, NewStream(&b, req, formatstest.Options()), events, nil)
			checkMessagesFrames(t, b.Bytes())
			f := &formatstest.Fake{Status: 200, ContentType: "text/event-stream", Body: b.Bytes()}
			srv := httptest.NewServer(f)
			defer srv.Close()
			s := formatstest.Anthropic(srv.URL).Messages.NewStreaming(context.Background(), formatstest.MessagesParams())
			var acc anthropic.Message
			citations := 0
			for s.Next() {
				ev := s.Current()
				if ev.Type == "content_block_delta" && ev.Delta.Type == "citations_delta" {
					citations++
				}
				if err := acc.Accumulate(ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if citations != 3 || acc.Usage.ServerToolUse.WebSearchRequests != 2 {
				t.Errorf("%d citations_delta, usage %+v", citations, acc.Usage)
			}
			sameBlocks(t, acc.Content, want.Content)
		}
	}
}

// sameBlocks checks that the SDK's blocks have the same JSON.
func sameBlocks(t *testing.T, got, want []anthropic.ContentBlockUnion) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d blocks, want %d", len(got), len(want))
	}
	for i := range got {
		var g, w map[string]any
		if err := json.Unmarshal([]byte(got[i].RawJSON()), &g); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(want[i].RawJSON()), &w); err != nil {
			t.Fatal(err)
		}
		// thinking_latency_ms is the blocking form's extension, which a
		// stream's thinking block does not carry.
		delete(w, "thinking_latency_ms")
		if !reflect.DeepEqual(g, w) {
			t.Errorf("block %d\n got %s\nwant %s", i, got[i].RawJSON(), want[i].RawJSON())
		}
	}
}

// The SDK reads the blocks with its typed accessors, and gives them back
// (ToParam) in a request that reads as the conversation the engine had.
func TestSDKMessagesWebSearch(t *testing.T) {
	f, url := formatstest.ServeGolden(t, 200, "message_websearch.json")
	params := formatstest.MessagesParams()
	params.Tools = []anthropic.ToolUnionParam{{OfWebSearchTool20250305: &anthropic.WebSearchTool20250305Param{
		MaxUses: anthropic.Int(2), AllowedDomains: []string{"example.org"},
		UserLocation: anthropic.UserLocationParam{City: anthropic.String("Lyon"), Country: anthropic.String("FR")}}}}
	params.ToolChoice = anthropic.ToolChoiceParamOfTool("web_search")
	m, err := formatstest.Anthropic(url).Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	req, err := Parse(f.Got)
	if err != nil {
		t.Fatalf("the SDK's request does not parse: %v\n%s", err, f.Got)
	}
	if o := req.Search; o == nil || !o.Force || o.MaxSearches != 2 || o.Domains[0] != "example.org" || o.Location.City != "Lyon" || len(req.Tools) != 0 {
		t.Errorf("search %+v, tools %+v", o, req.Tools)
	}

	use := m.Content[1].AsServerToolUse()
	results := m.Content[2].AsWebSearchToolResult()
	list := results.Content.AsWebSearchResultBlockArray()
	if use.ID != "srvtoolu_first" || use.Name != "web_search" || results.ToolUseID != use.ID || len(list) != 2 ||
		list[1].URL != wsResults[1].URL || list[0].PageAge != "January 2, 2026" || list[0].EncryptedContent == "" {
		t.Errorf("search blocks %+v %+v", use, list)
	}
	if q, _ := use.Input.(map[string]any); q["query"] != "cities of France" {
		t.Errorf("input %v", use.Input)
	}
	if e := m.Content[8].AsWebSearchToolResult().Content.AsResponseWebSearchToolResultError(); e.ErrorCode != "unavailable" {
		t.Errorf("failed search %+v", e)
	}
	cited := m.Content[3].AsText()
	loc := cited.Citations[0].AsWebSearchResultLocation()
	if cited.Text != wsLyon || loc.URL != wsResults[1].URL || loc.Title != "Lyon" || loc.CitedText != wsResults[1].Content || loc.EncryptedIndex == "" {
		t.Errorf("cited block %+v", cited)
	}
	if m.Usage.ServerToolUse.WebSearchRequests != 2 {
		t.Errorf("usage %+v", m.Usage)
	}

	// The answer given back with a new question.
	next := params
	next.Messages = append(slices.Clone(params.Messages), m.ToParam(), anthropic.NewUserMessage(anthropic.NewTextBlock("And the largest?")))
	if _, err := formatstest.Anthropic(url).Messages.New(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	got, err := Parse(f.Got)
	if err != nil {
		t.Fatalf("the SDK's follow-up does not parse: %v\n%s", err, f.Got)
	}
	checkSearchHistory(t, got.Messages[1:])
}

// checkSearchHistory checks the conversation of resSearch given back,
// from the assistant's turn on: the engine's own search turns.
func checkSearchHistory(t *testing.T, msgs []inference.Message) {
	t.Helper()
	type msg struct {
		role      inference.Role
		text      string
		calls     []inference.ToolCall
		toolCall  string
		toolName  string
		reasoning string
	}
	var got []msg
	for _, m := range msgs {
		got = append(got, msg{m.Role, wire.JoinText(m.Content), m.ToolCalls, m.ToolCallID, m.Name, m.Reasoning})
	}
	want := []msg{
		{role: inference.RoleAssistant, text: wsBefore, calls: []inference.ToolCall{{ID: "srvtoolu_first", Name: inference.SearchToolName, Arguments: `{"query":"cities of France"}`}}},
		{role: inference.RoleTool, text: wsToolText, toolCall: "srvtoolu_first", toolName: inference.SearchToolName},
		{role: inference.RoleAssistant, text: wsLyon + ". " + wsParis + ".", calls: []inference.ToolCall{{ID: "srvtoolu_second", Name: inference.SearchToolName, Arguments: `{"query":"more cities"}`}}},
		{role: inference.RoleTool, text: "The search failed: unavailable", toolCall: "srvtoolu_second", toolName: inference.SearchToolName},
		{role: inference.RoleAssistant, text: wsAfter},
		{role: inference.RoleUser, text: "And the largest?"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("history\n got %+v\nwant %+v", got, want)
	}
}

// A response's content given back as the assistant's turn reads as the
// engine's own search turns: the same tool calls, and the results as the
// model read them.
func TestMessagesWebSearchHistory(t *testing.T) {
	req := formatstest.Parse(t, Parse, searchBody)
	content, err := formats.Marshal(NewMessage(req, resSearch, formatstest.Options()).Content)
	if err != nil {
		t.Fatal(err)
	}
	next, err := Parse(followUp(t, content))
	if err != nil {
		t.Fatal(err)
	}
	checkSearchHistory(t, next.Messages[1:])
	// Custom tools beside the search: any is the usual required mode.
	if next.Search == nil || next.Search.Force || next.ToolChoice.Mode != "required" || len(next.Tools) != 1 {
		t.Errorf("search %+v, choice %+v, tools %+v", next.Search, next.ToolChoice, next.Tools)
	}
}

func TestMessagesWebSearchTool(t *testing.T) {
	body := func(tools, choice string) string {
		b := `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` + tools + `]`
		if choice != "" {
			b += `,"tool_choice":` + choice
		}
		return b + `}`
	}
	custom := `{"name":"get_time","input_schema":{"type":"object"}}`
	for _, tc := range []struct {
		name, body string
		want       inference.SearchOptions
		mode       string
	}{
		{"defaults", body(`{"type":"web_search_20250305","name":"web_search"}`, ""),
			inference.SearchOptions{Results: 5, ContentChars: 1000}, "auto"},
		{"every option", body(searchToolJSON, ""), inference.SearchOptions{MaxSearches: 2, Results: 5, ContentChars: 1000, Domains: []string{"example.org"},
			Location: &search.Location{City: "Lyon", Region: "Auvergne-Rhône-Alpes", Country: "FR", Timezone: "Europe/Paris"}}, "auto"},
		{"a newer type", body(`{"type":"web_search_20260209","name":"web_search"}`, ""), inference.SearchOptions{Results: 5, ContentChars: 1000}, "auto"},
		{"tool web_search", body(`{"type":"web_search_20250305","name":"web_search"},`+custom, `{"type":"tool","name":"web_search"}`),
			inference.SearchOptions{Force: true, Results: 5, ContentChars: 1000}, "auto"},
		{"any, the search alone", body(`{"type":"web_search_20250305","name":"web_search"}`, `{"type":"any"}`),
			inference.SearchOptions{Force: true, Results: 5, ContentChars: 1000}, "auto"},
		{"any, with custom tools", body(custom+`,{"type":"web_search_20250305","name":"web_search"}`, `{"type":"any"}`),
			inference.SearchOptions{Results: 5, ContentChars: 1000}, "required"},
		{"tool, a custom one", body(custom+`,{"type":"web_search_20250305","name":"web_search"}`, `{"type":"tool","name":"get_time"}`),
			inference.SearchOptions{Results: 5, ContentChars: 1000}, "function"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := formatstest.Parse(t, Parse, tc.body)
			if req.Search == nil || !reflect.DeepEqual(*req.Search, tc.want) || req.ToolChoice.Mode != tc.mode {
				t.Errorf("search %+v, choice %+v", req.Search, req.ToolChoice)
			}
			if slices.ContainsFunc(req.Tools, func(t inference.Tool) bool { return t.Name == inference.SearchToolName }) {
				t.Errorf("the search is among the custom tools: %+v", req.Tools)
			}
		})
	}
}

// Each wrong web search tool or search in history is a 400 naming its
// parameter.
func TestMessagesWebSearchErrors(t *testing.T) {
	withTools := func(tools string) string {
		return `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` + tools + `]}`
	}
	ws := func(extra string) string { return `{"type":"web_search_20250305","name":"web_search"` + extra + `}` }
	history := func(blocks string) string {
		return `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[` + blocks + `]}]}`
	}
	use := `{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}}`
	result := func(content string) string {
		return `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":` + content + `}`
	}
	// The content of the first search's result block, as a message
	// gives it.
	var first *WebSearchContent
	for _, b := range NewMessage(formatstest.Parse(t, Parse, searchBody), resSearch, formatstest.Options()).Content {
		if b.Type == "web_search_tool_result" && first == nil {
			first = b.WebSearch
		}
	}
	good, err := formats.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	badContent := strings.Replace(string(good), `"encrypted_content":"`, `"encrypted_content":"x`, 1)
	for _, tc := range []struct{ name, body, param string }{
		{"max_uses 0", withTools(ws(`,"max_uses":0`)), "tools[0].max_uses"},
		{"max_uses 11", withTools(ws(`,"max_uses":11`)), "tools[0].max_uses"},
		{"max_uses type", withTools(ws(`,"max_uses":"3"`)), "tools[0].max_uses"},
		{"blocked_domains", withTools(ws(`,"blocked_domains":["example.com"]`)), "tools[0].blocked_domains"},
		{"two search tools", withTools(ws(``) + `,` + ws(``)), "tools[1].type"},
		{"wrong name", withTools(`{"type":"web_search_20250305","name":"search"}`), "tools[0].name"},
		{"a custom tool of its name", withTools(ws(``) + `,{"name":"web_search"}`), "tools[1].name"},
		{"user_location type", withTools(ws(`,"user_location":{"type":"exact","city":"Lyon"}`)), "tools[0].user_location.type"},
		{"user_location country", withTools(ws(`,"user_location":{"type":"approximate","country":"France"}`)), "tools[0].user_location.country"},
		{"allowed domain", withTools(ws(`,"allowed_domains":["example.org","https://x/"]`)), "tools[0].allowed_domains[1]"},
		{"another server tool", withTools(`{"type":"web_fetch_20250910","name":"web_fetch"}`), "tools[0].type"},
		{"bad encrypted_content", history(use + `,` + result(badContent)), "messages[1].content[1].content[0].encrypted_content"},
		{"encrypted_content not base64", history(use + `,` + result(`[{"type":"web_search_result","url":"u","title":"t","encrypted_content":"%%%"}]`)), "messages[1].content[1].content[0].encrypted_content"},
		{"result without its use", history(result(string(good))), "messages[1].content[0].tool_use_id"},
		{"result content missing", history(use + `,{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1"}`), "messages[1].content[1].content"},
		{"result content kind", history(use + `,` + result(`"results"`)), "messages[1].content[1].content"},
		{"result error type", history(use + `,` + result(`{"type":"error","error_code":"unavailable"}`)), "messages[1].content[1].content.type"},
		{"result url type", history(use + `,` + result(`[{"type":"web_search_result","url":5}]`)), "messages[1].content[1].content[0].url"},
		{"server_tool_use name", history(`{"type":"server_tool_use","id":"s","name":"web_fetch","input":{}}`), "messages[1].content[0].name"},
		{"server_tool_use input", history(`{"type":"server_tool_use","id":"s","name":"web_search","input":"q"}`), "messages[1].content[0].input"},
		{"server_tool_use id", history(`{"type":"server_tool_use","name":"web_search","input":{"query":"q"}}`), "messages[1].content[0].id"},
		{"server_tool_use from the user", `{"model":"m","messages":[{"role":"user","content":[` + use + `]}]}`, "messages[0].content[0].type"},
		{"result from the user", `{"model":"m","messages":[{"role":"user","content":[` + result(string(good)) + `]}]}`, "messages[0].content[0].type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.body))
			var re *formats.RequestError
			if !errors.As(err, &re) || re.Param != tc.param || !strings.Contains(re.Message, strings.TrimSuffix(tc.param, ".type")) {
				t.Errorf("got %v (param %q), want a 400 naming %s", err, paramOf(re), tc.param)
			}
		})
	}
}

func paramOf(re *formats.RequestError) string {
	if re == nil {
		return ""
	}
	return re.Param
}
