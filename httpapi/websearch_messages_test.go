//go:build cgo

package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/search"
)

// webSearchParams is a messages request with the web search tool, forced
// to search and then to answer citedAnswer.
func webSearchParams(t *testing.T) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:        policy.Core25Mini,
		MaxTokens:    1000,
		Messages:     []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Which cities are in France?"))},
		Tools:        []anthropic.ToolUnionParam{{OfWebSearchTool20250305: &anthropic.WebSearchTool20250305Param{MaxUses: anthropic.Int(1)}}},
		ToolChoice:   anthropic.ToolChoiceParamOfTool("web_search"),
		Thinking:     anthropic.ThinkingConfigParamUnion{OfDisabled: &anthropic.ThinkingConfigDisabledParam{}},
		OutputConfig: anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: schemaMap(t, citedSchema)}},
		Temperature:  anthropic.Float(0),
	}
}

// The messages style over the real engine, searching SearXNG or a local
// index: the search's blocks, the cited span with its citation, the
// usage; the same blocks streamed; and the answer given back.
func TestWebSearchMessages(t *testing.T) {
	for _, tc := range []struct {
		name     string
		searcher func(*testing.T) search.Searcher
	}{
		{"searxng", searxng},
		{"index", func(t *testing.T) search.Searcher { return pinned(docsIndex(t)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.searcher(t)
			client := anthropicSDK(searchServer(t, s), key)
			ctx := context.Background()
			params := webSearchParams(t)

			m, err := client.Messages.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			checkSearchMessage(t, s, m)

			stream := client.Messages.NewStreaming(ctx, params)
			var acc anthropic.Message
			for stream.Next() {
				if err := acc.Accumulate(stream.Current()); err != nil {
					t.Fatal(err)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if acc.Usage.ServerToolUse.WebSearchRequests != 1 {
				t.Errorf("streamed usage %+v", acc.Usage)
			}
			if got, want := blocksJSON(t, acc.Content), blocksJSON(t, m.Content); !reflect.DeepEqual(got, want) {
				t.Errorf("streamed blocks\n got %v\nwant %v", got, want)
			}

			// The answer given back as the assistant's turn, with a new
			// question.
			next := params
			next.Messages = append(slices.Clone(params.Messages), m.ToParam(), anthropic.NewUserMessage(anthropic.NewTextBlock("And the largest?")))
			next.ToolChoice = anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{}}
			next.OutputConfig = anthropic.OutputConfigParam{}
			next.MaxTokens = 16
			m2, err := client.Messages.New(ctx, next)
			if err != nil {
				t.Fatal(err)
			}
			if m2.StopReason == "" || len(m2.Content) == 0 {
				t.Errorf("follow-up %s", m2.RawJSON())
			}
			// The model reads the results again: the turn given back
			// is longer than its text alone.
			textOnly := m.ToParam()
			textOnly.Content = slices.DeleteFunc(textOnly.Content, func(b anthropic.ContentBlockParamUnion) bool { return b.OfText == nil })
			count := func(assistant anthropic.MessageParam) int64 {
				msgs := append(slices.Clone(params.Messages), assistant, anthropic.NewUserMessage(anthropic.NewTextBlock("And the largest?")))
				n, err := client.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: policy.Core25Mini, Messages: msgs,
					Thinking: params.Thinking})
				if err != nil {
					t.Fatal(err)
				}
				return n.InputTokens
			}
			if with, without := count(m.ToParam()), count(textOnly); with < without+int64(len(citedAnswer)) {
				t.Errorf("the turn given back counts %d tokens, its text alone %d", with, without)
			}
		})
	}
}

// checkSearchMessage checks the blocks of an answer that searched once,
// with s, and cites its second result.
func checkSearchMessage(t *testing.T, s search.Searcher, m *anthropic.Message) {
	t.Helper()
	var uses, results, cited []int
	for i, b := range m.Content {
		switch b.Type {
		case "server_tool_use":
			uses = append(uses, i)
		case "web_search_tool_result":
			results = append(results, i)
		case "text":
			if len(b.Citations) > 0 {
				cited = append(cited, i)
			}
		}
	}
	if len(uses) != 1 || len(results) != 1 || results[0] != uses[0]+1 || len(cited) != 1 {
		t.Fatalf("blocks %s", m.RawJSON())
	}
	use := m.Content[uses[0]].AsServerToolUse()
	input, _ := use.Input.(map[string]any)
	query, _ := input["query"].(string)
	if use.Name != "web_search" || !strings.HasPrefix(use.ID, "srvtoolu_") || strings.TrimSpace(query) == "" {
		t.Fatalf("server_tool_use %s", use.RawJSON())
	}
	// The results are the search's: the backend asked again with the
	// model's query.
	want, err := s.Search(context.Background(), search.Query{Text: query, Count: 5})
	if err != nil {
		t.Fatal(err)
	}
	res := m.Content[results[0]].AsWebSearchToolResult()
	list := res.Content.AsWebSearchResultBlockArray()
	if res.ToolUseID != use.ID || len(list) != len(want) || len(list) < 2 {
		t.Fatalf("web_search_tool_result %s, want the results %+v", res.RawJSON(), want)
	}
	for i, r := range list {
		if r.URL != want[i].URL || r.Title != want[i].Title || r.EncryptedContent == "" {
			t.Errorf("result %d: %+v, want %+v", i, r, want[i])
		}
	}
	text := m.Content[cited[0]].AsText()
	loc := text.Citations[0].AsWebSearchResultLocation()
	if len(text.Citations) != 1 || loc.Type != "web_search_result_location" || loc.URL != want[1].URL || loc.Title != want[1].Title ||
		!strings.Contains(loc.CitedText, "Lyon is a city in France") || loc.EncryptedIndex == "" || !strings.Contains(text.Text, "Lyon is a city in France") {
		t.Errorf("cited block %s, want a citation of %s", text.RawJSON(), want[1].URL)
	}
	if m.Usage.ServerToolUse.WebSearchRequests != 1 {
		t.Errorf("usage %+v", m.Usage)
	}
}

// blocksJSON returns the blocks' JSON, each search's id made the same.
func blocksJSON(t *testing.T, blocks []anthropic.ContentBlockUnion) []any {
	t.Helper()
	var out []any
	for _, b := range blocks {
		var v map[string]any
		if err := json.Unmarshal([]byte(b.RawJSON()), &v); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"id", "tool_use_id"} {
			if _, ok := v[k]; ok {
				v[k] = "srvtoolu_"
			}
		}
		out = append(out, v)
	}
	return out
}

// Without a search backend, the web search tool is a 400 naming tools.
func TestWebSearchMessagesNoBackend(t *testing.T) {
	client := anthropicSDK(searchServer(t, nil), key)
	_, err := client.Messages.New(context.Background(), webSearchParams(t))
	var ae *anthropic.Error
	if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Type() != anthropic.ErrorTypeInvalidRequestError || !strings.Contains(ae.RawJSON(), "tools") {
		t.Errorf("got %v, want a 400 invalid_request_error naming tools", err)
	}
}
