//go:build cgo

package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/inferkit/inferkit/policy"
)

// searchResponseParams asks for a forced web search and, through
// citedSchema, an answer that cites the second result, without thinking.
func searchResponseParams(t *testing.T, input string) responses.ResponseNewParams {
	t.Helper()
	var schema map[string]any
	if err := json.Unmarshal([]byte(citedSchema), &schema); err != nil {
		t.Fatal(err)
	}
	return responses.ResponseNewParams{
		Model:       policy.Core25Mini,
		Input:       responses.ResponseNewParamsInputUnion{OfString: openai.String(input)},
		Tools:       []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}},
		ToolChoice:  responses.ResponseNewParamsToolChoiceUnion{OfHostedTool: &responses.ToolChoiceTypesParam{Type: "web_search"}},
		Include:     []responses.ResponseIncludable{responses.ResponseIncludableWebSearchCallActionSources},
		Reasoning:   shared.ReasoningParam{Effort: shared.ReasoningEffortNone},
		Temperature: openai.Float(0),
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "answer", Schema: schema}}},
	}
}

// checkCitedResponse checks a response to searchResponseParams with the
// SDK's typed accessors: a completed web_search_call with its query and
// sources, then the message whose url_citation covers the cited sentence
// and names the second result, lyonURL. It returns the message's text.
func checkCitedResponse(t *testing.T, r responses.Response, lyonURL string) string {
	t.Helper()
	if r.Status != "completed" || len(r.Output) != 2 || r.ToolUsage.WebSearch.NumRequests != 1 {
		t.Fatalf("status %s, tool_usage %s, output %s", r.Status, r.JSON.ToolUsage.Raw(), r.JSON.Output.Raw())
	}
	ws := r.Output[0].AsWebSearchCall()
	search := ws.Action.AsSearch()
	if r.Output[0].Type != "web_search_call" || ws.Status != responses.ResponseFunctionWebSearchStatusCompleted || !strings.HasPrefix(ws.ID, "ws_") ||
		ws.Action.Type != "search" || search.Query == "" || len(search.Sources) != 2 || search.Sources[1].URL != lyonURL {
		t.Errorf("web_search_call %s", r.Output[0].RawJSON())
	}
	msg := r.Output[1].AsMessage()
	if r.Output[1].Type != "message" || len(msg.Content) != 1 || len(msg.Content[0].Annotations) != 1 {
		t.Fatalf("message %s", r.Output[1].RawJSON())
	}
	text := msg.Content[0].Text
	cite := msg.Content[0].Annotations[0].AsURLCitation()
	runes := []rune(text)
	if cite.Type != "url_citation" || cite.URL != lyonURL || cite.StartIndex < 0 || cite.StartIndex > cite.EndIndex || cite.EndIndex > int64(len(runes)) ||
		!strings.Contains(string(runes[cite.StartIndex:cite.EndIndex]), "Lyon is a city in France") || strings.Contains(text, "[2]") {
		t.Errorf("annotation %s of %q", msg.Content[0].Annotations[0].RawJSON(), text)
	}
	if r.OutputText() != text || r.Usage.InputTokens <= 0 {
		t.Errorf("output_text %q, usage %s", r.OutputText(), r.JSON.Usage.Raw())
	}
	return text
}

// TestResponsesWebSearch runs a forced search through the responses style
// on SearXNG and on a local index, blocking and streamed, and gives the
// output back as the next request's input.
func TestResponsesWebSearch(t *testing.T) {
	for _, tc := range []struct {
		name, lyonURL string
		backend       func(*testing.T) string
	}{
		{"searxng", "https://example.org/lyon", func(t *testing.T) string { return searchServer(t, searxng(t)) }},
		{"index", "https://docs.example.org/lyon.md", func(t *testing.T) string {
			return searchServer(t, pinned(docsIndex(t)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := openaiSDK(tc.backend(t), key)
			ctx := context.Background()
			params := searchResponseParams(t, "Name a city in France.")
			r, err := client.Responses.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			text := checkCitedResponse(t, *r, tc.lyonURL)
			if tool := r.Tools[0].AsWebSearch(); len(r.Tools) != 1 || tool.Type != "web_search" || r.ToolChoice.AsHostedTool().Type != "web_search" {
				t.Errorf("tools %s, tool_choice %s", r.JSON.Tools.Raw(), r.JSON.ToolChoice.Raw())
			}

			// Streamed: every event parses, the search's and the
			// annotation's are there, and the text is the blocking one.
			s := client.Responses.NewStreaming(ctx, params)
			seen := map[string]int{}
			var deltas strings.Builder
			var final responses.Response
			for s.Next() {
				switch ev := s.Current().AsAny().(type) {
				case responses.ResponseWebSearchCallInProgressEvent:
					seen[string(ev.Type)]++
				case responses.ResponseWebSearchCallSearchingEvent:
					seen[string(ev.Type)]++
				case responses.ResponseWebSearchCallCompletedEvent:
					seen[string(ev.Type)]++
				case responses.ResponseOutputTextAnnotationAddedEvent:
					seen[string(ev.Type)]++
					if ev.Annotation.AsURLCitation().URL != tc.lyonURL || ev.OutputIndex != 1 {
						t.Errorf("annotation event %s", ev.RawJSON())
					}
				case responses.ResponseTextDeltaEvent:
					deltas.WriteString(ev.Delta)
				case responses.ResponseCompletedEvent:
					final = ev.Response
				case nil:
					t.Errorf("the SDK does not know event %s", s.Current().Type)
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			for _, typ := range []string{"response.web_search_call.in_progress", "response.web_search_call.searching",
				"response.web_search_call.completed", "response.output_text.annotation.added"} {
				if seen[typ] != 1 {
					t.Errorf("%s seen %d times", typ, seen[typ])
				}
			}
			if deltas.String() != text || checkCitedResponse(t, final, tc.lyonURL) != text {
				t.Errorf("streamed %q, want %q", deltas.String(), text)
			}

			// The output given back as input: the search and the cited
			// answer are history, and the model answers on.
			next := responses.ResponseNewParams{
				Model:           policy.Core25Mini,
				Reasoning:       shared.ReasoningParam{Effort: shared.ReasoningEffortNone},
				MaxOutputTokens: openai.Int(8),
				Temperature:     openai.Float(0),
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
					{OfMessage: &responses.EasyInputMessageParam{Role: responses.EasyInputMessageRoleUser,
						Content: responses.EasyInputMessageContentUnionParam{OfString: openai.String("Name a city in France.")}}},
				}},
			}
			for _, it := range r.Output {
				switch it.Type {
				case "web_search_call":
					p := it.AsWebSearchCall().ToParam()
					next.Input.OfInputItemList = append(next.Input.OfInputItemList, responses.ResponseInputItemUnionParam{OfWebSearchCall: &p})
				case "message":
					p := it.AsMessage().ToParam()
					next.Input.OfInputItemList = append(next.Input.OfInputItemList, responses.ResponseInputItemUnionParam{OfOutputMessage: &p})
				}
			}
			next.Input.OfInputItemList = append(next.Input.OfInputItemList, responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
				Role: responses.EasyInputMessageRoleUser, Content: responses.EasyInputMessageContentUnionParam{OfString: openai.String("Another?")}}})
			r2, err := client.Responses.New(ctx, next)
			if err != nil {
				t.Fatal(err)
			}
			// The prompt holds the answer and the note on the search.
			history := len(text) + len("The results of this search are not kept.")
			if r2.Usage.InputTokens <= int64(history) || len(r2.Output) == 0 || r2.ToolUsage.WebSearch.NumRequests != 0 {
				t.Errorf("follow-up: input tokens %d after %d, output %s", r2.Usage.InputTokens, r.Usage.InputTokens, r2.JSON.Output.Raw())
			}
		})
	}
}

// A search of the index for the model's own query finds nothing: the
// search completes with no sources, and the answer's [2], which cites no
// result, stays text.
func TestResponsesWebSearchNoHit(t *testing.T) {
	client := openaiSDK(searchServer(t, docsIndex(t)), key)
	r, err := client.Responses.New(context.Background(), searchResponseParams(t, "Name a city in France."))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Output) != 2 {
		t.Fatalf("output %s", r.JSON.Output.Raw())
	}
	ws, msg := r.Output[0].AsWebSearchCall(), r.Output[1].AsMessage()
	if ws.Status != "completed" || ws.Action.AsSearch().Query == "" || len(ws.Action.AsSearch().Sources) != 0 ||
		len(msg.Content[0].Annotations) != 0 || msg.Content[0].Text != `"Lyon is a city in France [2]."` {
		t.Errorf("output %s", r.JSON.Output.Raw())
	}
}

// An engine without a search backend refuses the web search tool with a
// 400 that names tools.
func TestResponsesWebSearchWithoutBackend(t *testing.T) {
	client := openaiSDK(searchServer(t, nil), key)
	for _, stream := range []bool{false, true} {
		params := searchResponseParams(t, "Name a city in France.")
		var err error
		if stream {
			s := client.Responses.NewStreaming(context.Background(), params)
			for s.Next() {
				t.Errorf("event %s", s.Current().Type)
			}
			err = s.Err()
		} else {
			_, err = client.Responses.New(context.Background(), params)
		}
		var oe *openai.Error
		if !errors.As(err, &oe) || oe.StatusCode != 400 || !strings.HasPrefix(oe.Param, "tools") {
			t.Errorf("stream %v: %v, want a 400 naming tools", stream, err)
		}
	}
}
