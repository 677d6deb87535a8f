package chat

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/internal/formatstest"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/search"
)

func TestChatWebSearchOptions(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"web_search_options":{"search_context_size":"low",
		"user_location":{"type":"approximate","approximate":{"city":"Lyon","country":"FR","timezone":"Europe/Paris"}}}}`
	r, err := Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := &inference.SearchOptions{Force: true, Results: 3, ContentChars: 500, Location: &search.Location{City: "Lyon", Country: "FR", Timezone: "Europe/Paris"}}
	if !reflect.DeepEqual(r.Search, want) {
		t.Errorf("search %+v, want %+v", r.Search, want)
	}
	// Back to the wire and in again: the same request.
	again, err := Parse(formatstest.JSON(t, NewRequest(r)))
	if err != nil || !reflect.DeepEqual(again.Search, want) {
		t.Errorf("round trip: %+v, %v", again.Search, err)
	}
	r, err = Parse([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"web_search_options":{}}`))
	if err != nil || r.Search == nil || r.Search.Results != 5 || r.Search.ContentChars != 1000 || !r.Search.Force {
		t.Errorf("empty options: %+v, %v; want medium, forced", r.Search, err)
	}
}

// A chat answer that cites search results carries url_citation
// annotations in characters, whole in a completion and with the chunk
// that completes each in a stream.
func TestChatAnnotations(t *testing.T) {
	text := "Café ☕ is in Lyon. Paris too."
	cites := []inference.Citation{
		{Start: 0, End: strings.Index(text, "."), Source: 2, URL: "https://example.org/lyon", Title: "Lyon"},
		{Start: strings.Index(text, "Paris"), End: len(text) - 1, Source: 1, URL: "https://example.org/paris", Title: "Paris"},
	}
	res := inference.Result{Text: text, Citations: cites, FinishReason: inference.FinishStop}
	want := []Annotation{
		{Type: "url_citation", URLCitation: URLCitation{StartIndex: 0, EndIndex: 17, URL: "https://example.org/lyon", Title: "Lyon"}},
		{Type: "url_citation", URLCitation: URLCitation{StartIndex: 19, EndIndex: 28, URL: "https://example.org/paris", Title: "Paris"}},
	}
	c := NewCompletion(formats.Request{Request: inference.Request{Model: "m"}}, []inference.Result{res}, formats.Options{})
	if got := c.Choices[0].Message.Annotations; !reflect.DeepEqual(got, want) {
		t.Errorf("completion annotations %+v, want %+v", got, want)
	}

	var buf bytes.Buffer
	s := NewStream(&buf, formats.Request{Request: inference.Request{Model: "m"}}, formats.Options{})
	cut := strings.Index(text, " Paris")
	for _, ev := range []inference.Event{
		{Text: text[:cut], Citations: cites[:1]},
		{Text: text[cut:], Citations: cites[1:]},
		{Final: &res},
	} {
		if err := s.Event(ev); err != nil {
			t.Fatal(err)
		}
	}
	var got []Annotation
	for line := range strings.Lines(buf.String()) {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk Chunk
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatal(err)
		}
		for _, ch := range chunk.Choices {
			got = append(got, ch.Delta.Annotations...)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("streamed annotations %+v, want %+v", got, want)
	}
}

// A stored conversation keeps the searches as the model read them, so
// that previous_response_id continues with their results.
func TestTranscriptKeepsSearches(t *testing.T) {
	r := formats.Request{Request: inference.Request{Messages: []inference.Message{inference.Text(inference.RoleUser, "Lyon?")},
		Search: &inference.SearchOptions{ContentChars: 500}}}
	call := inference.SearchCall{ID: "ws_1", Query: "Lyon", Status: inference.SearchCompleted, First: 1, At: len("Let me look."),
		Results: []search.Result{{URL: "https://example.org/lyon", Title: "Lyon", Content: "Lyon is a city in France."}}}
	res := inference.Result{Text: "Let me look.In France.", Searches: []inference.SearchCall{call}}
	msgs := r.Transcript(res)
	if len(msgs) != 4 {
		t.Fatalf("%d messages, want the question, the call, its results and the reply", len(msgs))
	}
	if m := msgs[1]; m.Role != inference.RoleAssistant || m.Content[0].Text != "Let me look." || m.ToolCalls[0].Name != inference.SearchToolName ||
		m.ToolCalls[0].Arguments != `{"query":"Lyon"}` || m.ToolCalls[0].ID != "ws_1" {
		t.Errorf("call %+v", m)
	}
	if m := msgs[2]; m.Role != inference.RoleTool || m.ToolCallID != "ws_1" || m.Content[0].Text != call.Text(500) || !strings.Contains(m.Content[0].Text, "[1] Lyon") {
		t.Errorf("results %+v", m)
	}
	if m := msgs[3]; m.Content[0].Text != "In France." {
		t.Errorf("reply %+v", m)
	}
}
