package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/formats/internal/wire"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/search"
	"github.com/openai/openai-go/v3"
	oresponses "github.com/openai/openai-go/v3/responses"
)

// searchResponsesBody asks for a forced web search, with every option of
// the tool, and gives back a search of an earlier response.
const searchResponsesBody = `{"model":"core-2-5-pro","input":[
	{"role":"user","content":"Where is Lyon?"},
	{"type":"web_search_call","id":"ws_old","status":"completed","action":{"type":"search","query":"Lyon","sources":[{"type":"url","url":"https://example.org/lyon"}]}},
	{"type":"message","role":"assistant","content":[{"type":"output_text","text":"In France.","annotations":[{"type":"url_citation","start_index":0,"end_index":10,"url":"https://example.org/lyon","title":"Lyon"}]}]},
	{"role":"user","content":"Tell me more, en français."}],
	"tools":[{"type":"web_search","search_context_size":"high","user_location":{"type":"approximate","city":"Lyon","country":"FR","timezone":"Europe/Paris"},"filters":{"allowed_domains":["example.org"]}}],
	"tool_choice":{"type":"web_search"},"max_tool_calls":2,"include":["web_search_call.action.sources"],"reasoning":{"effort":"none"}}`

// The result of a request that searched twice at the same point, the
// second search failing, with text before and after that is not ASCII, and
// two citations of the first search's results.
var (
	searchPre  = "Voyons… "
	searchPost = "Lyon est une ville de France.\nLe café ☕ y est bon."
	searchLyon = inference.SearchCall{ID: "ws_1", Query: "Lyon France", Status: inference.SearchCompleted, First: 1, At: len(searchPre),
		Results: []search.Result{
			{URL: "https://example.org/paris", Title: "Paris", Content: "Paris is the capital of France."},
			{URL: "https://example.org/lyon", Title: "Lyon", Content: "Lyon is a city in France."},
		}}
	searchFailed = inference.SearchCall{ID: "ws_2", Query: "café Lyon", Status: inference.SearchFailed, Error: "timeout", First: 3, At: len(searchPre)}
	citeLyon     = inference.Citation{Start: len(searchPre), End: len(searchPre) + len("Lyon est une ville de France."), Source: 2,
		URL: "https://example.org/lyon", Title: "Lyon"}
	citeCafe = inference.Citation{Start: len(searchPre) + len("Lyon est une ville de France.\n"), End: len(searchPre + searchPost), Source: 1,
		URL: "https://example.org/paris", Title: "Paris"}
	respSearch = inference.Result{
		Text: searchPre + searchPost, FinishReason: inference.FinishStop, StopToken: 151645,
		Searches:  []inference.SearchCall{searchLyon, searchFailed},
		Citations: []inference.Citation{citeLyon, citeCafe},
		Usage:     inference.Usage{PromptTokens: 240, CachedTokens: 30, CompletionTokens: 40, WebSearches: 2},
	}
)

// respSearchEvents are the stream of respSearch as the engine sends it.
func respSearchEvents() []inference.Event {
	started := func(sc inference.SearchCall) *inference.SearchCall {
		sc.Status, sc.Error, sc.Results = inference.SearchSearching, "", nil
		return &sc
	}
	final := respSearch
	return []inference.Event{
		{Text: searchPre},
		{Search: started(searchLyon)},
		{Search: &searchLyon},
		{Search: started(searchFailed)},
		{Search: &searchFailed},
		{Text: "Lyon est une ville "},
		{Text: "de France.", Citations: []inference.Citation{citeLyon}},
		{Text: "\nLe café ☕ y est bon.", Citations: []inference.Citation{citeCafe}},
		{Final: &final},
	}
}

func TestGoldenResponsesWebSearch(t *testing.T) {
	req := formatstest.Parse(t, Parse, searchResponsesBody)
	formatstest.Golden(t, "responses_websearch_request.json", formatstest.JSON(t, req))
	resp := formatstest.JSON(t, NewResponse(req, respSearch, formatstest.Options()))
	formatstest.Golden(t, "response_websearch.json", resp)

	var b bytes.Buffer
	formatstest.Stream(t, NewStream(&b, req, formatstest.Options()), respSearchEvents(), nil)
	formatstest.Golden(t, "responses_stream_websearch.sse", b.Bytes())

	// The stream's last response is the blocking one.
	frames := formatstest.SSEFrames(t, b.Bytes())
	var last struct {
		Type     string
		Response json.RawMessage
	}
	if err := json.Unmarshal([]byte(frames[len(frames)-1].Data), &last); err != nil {
		t.Fatal(err)
	}
	var streamed, blocking any
	if err := json.Unmarshal(last.Response, &streamed); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(resp, &blocking); err != nil {
		t.Fatal(err)
	}
	if last.Type != "response.completed" || !reflect.DeepEqual(streamed, blocking) {
		t.Errorf("%s response differs from the blocking one:\n%s\n%s", last.Type, last.Response, resp)
	}
}

// TestSDKResponsesWebSearch reads the goldens with the SDK's types.
func TestSDKResponsesWebSearch(t *testing.T) {
	r := checkResponseObject(t, "response_websearch.json", formatstest.ReadGolden(t, "response_websearch.json"))
	checkSearchResponse(t, r)
	if tool := r.Tools[0].AsWebSearch(); tool.Type != "web_search" || tool.SearchContextSize != "high" || tool.UserLocation.City != "Lyon" ||
		tool.UserLocation.Country != "FR" || len(tool.Filters.AllowedDomains) != 1 || r.ToolChoice.AsHostedTool().Type != "web_search" {
		t.Errorf("tools %s, tool_choice %s", r.JSON.Tools.Raw(), r.JSON.ToolChoice.Raw())
	}
	if r.MaxToolCalls != 2 || r.ToolUsage.WebSearch.NumRequests != 2 || r.Usage.InputTokens != 240 {
		t.Errorf("max_tool_calls %d, tool_usage %s, usage %s", r.MaxToolCalls, r.JSON.ToolUsage.Raw(), r.JSON.Usage.Raw())
	}

	_, url := formatstest.ServeGolden(t, 200, "responses_stream_websearch.sse")
	s := formatstest.OpenAI(url).Responses.NewStreaming(context.Background(), oresponses.ResponseNewParams{Model: "m",
		Input: oresponses.ResponseNewParamsInputUnion{OfString: openai.String("Lyon?")}})
	seen := map[string]int{}
	var text strings.Builder
	var final oresponses.Response
	for s.Next() {
		switch ev := s.Current().AsAny().(type) {
		case oresponses.ResponseWebSearchCallInProgressEvent:
			seen[string(ev.Type)]++
		case oresponses.ResponseWebSearchCallSearchingEvent:
			seen[string(ev.Type)]++
		case oresponses.ResponseWebSearchCallCompletedEvent:
			seen[string(ev.Type)]++
		case oresponses.ResponseOutputTextAnnotationAddedEvent:
			seen[string(ev.Type)]++
			if a := ev.Annotation.AsURLCitation(); a.URL == "" || ev.OutputIndex != 3 || ev.ItemID != "msg_test3" {
				t.Errorf("annotation event %s", ev.RawJSON())
			}
		case oresponses.ResponseTextDeltaEvent:
			text.WriteString(ev.Delta)
		case oresponses.ResponseCompletedEvent:
			final = ev.Response
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"response.web_search_call.in_progress": 2, "response.web_search_call.searching": 2,
		"response.web_search_call.completed": 2, "response.output_text.annotation.added": 2}
	if !reflect.DeepEqual(seen, want) || text.String() != respSearch.Text {
		t.Errorf("events %v, text %q", seen, text.String())
	}
	checkSearchResponse(t, final)
}

// checkSearchResponse checks the output of respSearch as the SDK reads it:
// the text before the searches, both searches, and the text after them
// with its citations, whose character offsets pick the cited sentences.
func checkSearchResponse(t *testing.T, r oresponses.Response) {
	t.Helper()
	if len(r.Output) != 4 || r.OutputText() != respSearch.Text {
		t.Fatalf("output %s", r.JSON.Output.Raw())
	}
	if m := r.Output[0].AsMessage(); m.Content[0].Text != searchPre || len(m.Content[0].Annotations) != 0 {
		t.Errorf("output[0] %s", r.Output[0].RawJSON())
	}
	for i, want := range []struct{ id, status, query, sources string }{
		{"ws_1", "completed", "Lyon France", "https://example.org/paris https://example.org/lyon"},
		{"ws_2", "failed", "café Lyon", ""},
	} {
		ws := r.Output[1+i].AsWebSearchCall()
		action := ws.Action.AsSearch()
		var sources []string
		for _, s := range action.Sources {
			sources = append(sources, s.URL)
		}
		if ws.ID != want.id || string(ws.Status) != want.status || ws.Action.Type != "search" || action.Query != want.query ||
			strings.Join(sources, " ") != want.sources {
			t.Errorf("output[%d] %s", 1+i, r.Output[1+i].RawJSON())
		}
	}
	part := r.Output[3].AsMessage().Content[0]
	runes := []rune(part.Text)
	var cited []string
	for _, a := range part.Annotations {
		c := a.AsURLCitation()
		if c.Type != "url_citation" || c.StartIndex < 0 || c.EndIndex > int64(len(runes)) || c.StartIndex > c.EndIndex {
			t.Fatalf("annotation %s of %q", a.RawJSON(), part.Text)
		}
		cited = append(cited, c.Title+": "+string(runes[c.StartIndex:c.EndIndex]))
	}
	if part.Text != searchPost || strings.Join(cited, " | ") != "Lyon: Lyon est une ville de France. | Paris: Le café ☕ y est bon." {
		t.Errorf("output[3] %q cites %q", part.Text, cited)
	}
}

// TestResponsesWebSearchRequest checks how the web search tool, the tool
// choice and max_tool_calls become the engine's search options.
func TestResponsesWebSearchRequest(t *testing.T) {
	body := func(extra string) string { return `{"model":"m","input":"hi"` + extra + `}` }
	tool := func(t string) string { return `,"tools":[` + t + `]` }
	cases := []struct {
		name, body string
		want       *inference.SearchOptions // nil: no search
		choice     string
	}{
		{"default", body(tool(`{"type":"web_search"}`)), &inference.SearchOptions{Results: 5, ContentChars: 1000}, "auto"},
		{"preview low", body(tool(`{"type":"web_search_preview_2025_03_11","search_context_size":"low","search_content_types":["text"]}`)),
			&inference.SearchOptions{Results: 3, ContentChars: 500}, "auto"},
		{"dated high", body(tool(`{"type":"web_search_2025_08_26","search_context_size":"high","user_location":null,"filters":null}`)),
			&inference.SearchOptions{Results: 8, ContentChars: 2000}, "auto"},
		{"location and domains", body(tool(`{"type":"web_search","user_location":{"country":"US","region":"California"},"filters":{"allowed_domains":["example.org","docs.example.com"]}}`)),
			&inference.SearchOptions{Results: 5, ContentChars: 1000, Location: &search.Location{Country: "US", Region: "California"},
				Domains: []string{"example.org", "docs.example.com"}}, "auto"},
		{"empty location", body(tool(`{"type":"web_search","user_location":{"type":"approximate"}}`)),
			&inference.SearchOptions{Results: 5, ContentChars: 1000}, "auto"},
		{"forced", body(tool(`{"type":"web_search"}`) + `,"tool_choice":{"type":"web_search"}`),
			&inference.SearchOptions{Results: 5, ContentChars: 1000, Force: true}, "auto"},
		{"forced by the preview's type", body(tool(`{"type":"web_search"}`) + `,"tool_choice":{"type":"web_search_preview"}`),
			&inference.SearchOptions{Results: 5, ContentChars: 1000, Force: true}, "auto"},
		{"required, search only", body(tool(`{"type":"web_search"}`) + `,"tool_choice":"required"`),
			&inference.SearchOptions{Results: 5, ContentChars: 1000, Force: true}, "auto"},
		{"required, with a function", body(tool(`{"type":"web_search"},{"type":"function","name":"f"}`) + `,"tool_choice":"required"`),
			&inference.SearchOptions{Results: 5, ContentChars: 1000}, "required"},
		{"none", body(tool(`{"type":"web_search"}`) + `,"tool_choice":"none"`), nil, "none"},
		{"max_tool_calls", body(tool(`{"type":"web_search"}`) + `,"max_tool_calls":2`),
			&inference.SearchOptions{Results: 5, ContentChars: 1000, MaxSearches: 2}, "auto"},
		{"max_tool_calls over 10", body(tool(`{"type":"web_search"}`) + `,"max_tool_calls":25`),
			&inference.SearchOptions{Results: 5, ContentChars: 1000, MaxSearches: 10}, "auto"},
		{"max_tool_calls 0", body(tool(`{"type":"web_search"}`) + `,"max_tool_calls":0`), nil, "auto"},
		{"include", body(tool(`{"type":"web_search"}`) + `,"include":["web_search_call.action.sources","web_search_call.results"]`),
			&inference.SearchOptions{Results: 5, ContentChars: 1000}, "auto"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := formatstest.Parse(t, Parse, tc.body)
			if !reflect.DeepEqual(r.Search, tc.want) || r.ToolChoice.Mode != tc.choice {
				t.Errorf("Search %+v, tool choice %q; want %+v, %q", r.Search, r.ToolChoice.Mode, tc.want, tc.choice)
			}
			if in := r.Inference(); !reflect.DeepEqual(in.Search, tc.want) {
				t.Errorf("the engine gets %+v", in.Search)
			}
			// What the response echoes and NewRequest writes
			// reads back as the same request.
			b, err := formats.Marshal(NewRequest(r))
			if err != nil {
				t.Fatal(err)
			}
			if back := formatstest.Parse(t, Parse, string(b)); !reflect.DeepEqual(back.Search, r.Search) || back.ToolChoice != r.ToolChoice {
				t.Errorf("%s reads back as %+v, %+v", b, back.Search, back.ToolChoice)
			}
		})
	}
}

func TestResponsesWebSearchRequestErrors(t *testing.T) {
	body := func(extra string) string { return `{"model":"m","input":"hi"` + extra + `}` }
	for _, tc := range []struct{ name, body, param string }{
		{"unknown tool", body(`,"tools":[{"type":"file_search"}]`), "tools[0].type"},
		{"search_context_size", body(`,"tools":[{"type":"web_search","search_context_size":"huge"}]`), "tools[0].search_context_size"},
		{"two search tools", body(`,"tools":[{"type":"web_search"},{"type":"web_search_preview"}]`), "tools[1].type"},
		{"choice without the tool", body(`,"tool_choice":{"type":"web_search"}`), "tool_choice"},
		{"preview choice without the tool", body(`,"tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"web_search_preview_2025_03_11"}`), "tool_choice"},
		{"user_location type", body(`,"tools":[{"type":"web_search","user_location":{"type":"exact","city":"Lyon"}}]`), "tools[0].user_location.type"},
		{"user_location not an object", body(`,"tools":[{"type":"web_search","user_location":"Lyon"}]`), "tools[0].user_location"},
		{"country", body(`,"tools":[{"type":"web_search","user_location":{"country":"France"}}]`), "tools[0].user_location.country"},
		{"domain", body(`,"tools":[{"type":"web_search","filters":{"allowed_domains":["example.org","https://x.org/"]}}]`), "tools[0].filters.allowed_domains[1]"},
		{"the search tool's name", body(`,"tools":[{"type":"function","name":"web_search"},{"type":"web_search"}]`), "tools[0].name"},
		{"forced with no calls", body(`,"tools":[{"type":"web_search"}],"tool_choice":{"type":"web_search"},"max_tool_calls":0`), "max_tool_calls"},
		{"item type", `{"model":"m","input":[{"type":"file_search_call"}]}`, "input[0].type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.body))
			e := formats.ErrorOf(err)
			if err == nil || e.Status != 400 || e.Param != tc.param || !strings.Contains(e.Message, tc.param) {
				t.Errorf("%s gives %v, want a 400 naming %s", tc.body, err, tc.param)
			}
		})
	}
}

// TestResponsesWebSearchHistory checks web_search_call items given back:
// each a call of the search tool by an assistant turn (the one before it
// when it has no call answered yet, as for function_call items), and a
// tool result that says the results are not kept and where they came
// from.
func TestResponsesWebSearchHistory(t *testing.T) {
	r := formatstest.Parse(t, Parse, `{"model":"m","input":[{"role":"user","content":"Lyon?"},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Let me look."}]},
		{"type":"web_search_call","id":"ws_a","status":"completed","action":{"type":"search","query":"Lyon","sources":[{"type":"url","url":"https://a.org"},{"type":"url","url":"https://b.org"}]}},
		{"type":"web_search_call","status":"failed","action":{"type":"search","queries":["x","y"]}},
		{"type":"web_search_call","id":"ws_c","status":"completed","action":{"type":"open_page","url":"https://c.org"}},
		{"type":"message","role":"assistant","content":"In France."}]}`)
	type msg struct {
		role, text, callID string
		calls              []inference.ToolCall
	}
	call := func(id, args string) []inference.ToolCall {
		return []inference.ToolCall{{ID: id, Name: inference.SearchToolName, Arguments: args}}
	}
	want := []msg{
		{role: "user", text: "Lyon?"},
		{role: "assistant", text: "Let me look.", calls: call("ws_a", `{"query":"Lyon"}`)},
		{role: "tool", text: "The results of this search are not kept. They came from: https://a.org, https://b.org", callID: "ws_a"},
		{role: "assistant", calls: call("ws_input_3", `{"query":"x; y"}`)},
		{role: "tool", text: "The search failed.", callID: "ws_input_3"},
		{role: "assistant", calls: call("ws_c", `{"query":"https://c.org"}`)},
		{role: "tool", text: "The results of this search are not kept.", callID: "ws_c"},
		{role: "assistant", text: "In France."},
	}
	var got []msg
	for _, m := range r.Messages {
		if m.Role == inference.RoleTool && m.Name != inference.SearchToolName {
			t.Errorf("tool message named %q", m.Name)
		}
		got = append(got, msg{string(m.Role), wire.JoinText(m.Content), m.ToolCallID, m.ToolCalls})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("messages\n got %+v\nwant %+v", got, want)
	}
}
