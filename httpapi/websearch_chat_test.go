//go:build cgo

package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/search"
)

// chatSearchRequest asks the tiny model, through web_search_options, with
// its answer forced to cite the second result.
func chatSearchRequest() openai.ChatCompletionNewParams {
	var schema map[string]any
	json.Unmarshal([]byte(citedSchema), &schema)
	return openai.ChatCompletionNewParams{
		Model:               policy.Core25Mini,
		Messages:            []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Where is Lyon?")},
		MaxCompletionTokens: openai.Int(400),
		Temperature:         openai.Float(0),
		ReasoningEffort:     "none",
		WebSearchOptions:    openai.ChatCompletionNewParamsWebSearchOptions{SearchContextSize: "low"},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "answer", Schema: schema}}},
	}
}

// TestWebSearchChat drives chat's web_search_options with openai-go on
// both backends: the answer's url_citation annotation points at the
// second result, whole in a completion and in the stream's chunks.
func TestWebSearchChat(t *testing.T) {
	for _, backend := range []struct {
		name string
		s    func(t *testing.T) search.Searcher
		lyon string
	}{
		{"searxng", searxng, "https://example.org/lyon"},
		{"index", func(t *testing.T) search.Searcher { return pinned(docsIndex(t)) }, "https://docs.example.org/lyon.md"},
	} {
		t.Run(backend.name, func(t *testing.T) {
			client := openaiSDK(searchServer(t, backend.s(t)), key)
			ctx := context.Background()
			c, err := client.Chat.Completions.New(ctx, chatSearchRequest())
			if err != nil {
				t.Fatal(err)
			}
			msg := c.Choices[0].Message
			if want := `"Lyon is a city in France."`; msg.Content != want {
				t.Fatalf("content %q, want %q", msg.Content, want)
			}
			checkCitation := func(anns []openai.ChatCompletionMessageAnnotation, content string) {
				t.Helper()
				if len(anns) != 1 {
					t.Fatalf("annotations %+v, want one", anns)
				}
				a := anns[0]
				cited := string([]rune(content)[a.URLCitation.StartIndex:a.URLCitation.EndIndex])
				if a.Type != "url_citation" || a.URLCitation.URL != backend.lyon || a.URLCitation.Title != "Lyon" || !strings.Contains(cited, "Lyon is a city in France") {
					t.Errorf("annotation %+v citing %q", a, cited)
				}
			}
			checkCitation(msg.Annotations, msg.Content)
			if c.Usage.PromptTokens < 100 {
				t.Errorf("usage %+v: the prompt tokens count the results read", c.Usage)
			}

			// The stream brings the same text, and the annotation with the
			// chunk that completes it (a field the SDK keeps as extra).
			s := client.Chat.Completions.NewStreaming(ctx, chatSearchRequest())
			var text strings.Builder
			var anns []openai.ChatCompletionMessageAnnotation
			for s.Next() {
				chunk := s.Current()
				for _, ch := range chunk.Choices {
					text.WriteString(ch.Delta.Content)
					if f, ok := ch.Delta.JSON.ExtraFields["annotations"]; ok {
						var more []openai.ChatCompletionMessageAnnotation
						if err := json.Unmarshal([]byte(f.Raw()), &more); err != nil {
							t.Fatal(err)
						}
						anns = append(anns, more...)
					}
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if text.String() != msg.Content {
				t.Errorf("streamed %q, completion %q", text.String(), msg.Content)
			}
			checkCitation(anns, text.String())
		})
	}
}

// Without a search backend, web_search_options is a 400 that names it,
// and the catalog does not list web_search; with one, it does.
func TestWebSearchNeedsABackend(t *testing.T) {
	client := openaiSDK(searchServer(t, nil), key)
	_, err := client.Chat.Completions.New(context.Background(), chatSearchRequest())
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "web_search_options" {
		t.Fatalf("got %v, want a 400 naming web_search_options", err)
	}
	features := func(client openai.Client) string {
		m, err := client.Models.Get(context.Background(), policy.Core25Mini)
		if err != nil {
			t.Fatal(err)
		}
		return m.JSON.ExtraFields["supported_features"].Raw()
	}
	if f := features(client); strings.Contains(f, "web_search") {
		t.Errorf("without a backend, supported_features %s", f)
	}
	if f := features(openaiSDK(searchServer(t, searxng(t)), key)); !strings.Contains(f, `"web_search"`) {
		t.Errorf("with a backend, supported_features %s", f)
	}
}
