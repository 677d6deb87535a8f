//go:build cgo

package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/inferkit/inferkit/policy"
)

// A reasoning item carries a summary of the thinking when one is asked
// for, and no text when none is; the summary's tokens are counted.
func TestSDKReasoningSummary(t *testing.T) {
	client := openaiSDK(toolServer(t), key)
	ctx := context.Background()
	params := responses.ResponseNewParams{
		Model:           policy.Core25Pro,
		Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the weather in Oslo?")},
		Tools:           responsesTools(t),
		ToolChoice:      responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsRequired)},
		MaxOutputTokens: openai.Int(4 * toolTokens), // thinking takes up to three quarters
		Temperature:     openai.Float(0),
		Reasoning:       shared.ReasoningParam{Effort: shared.ReasoningEffortLow},
	}
	plain, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if rs := plain.Output[0].AsReasoning(); plain.Output[0].Type != "reasoning" || len(rs.Summary) != 0 || len(rs.Content) != 0 {
		t.Fatalf("no summary asked: %s", plain.Output[0].RawJSON())
	}

	params.Reasoning.Summary = shared.ReasoningSummaryConcise
	r, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	rs := r.Output[0].AsReasoning()
	if len(rs.Summary) != 1 || rs.Summary[0].Type != "summary_text" || rs.Summary[0].Text == "" || len(rs.Content) != 0 {
		t.Fatalf("a concise summary: %s", r.Output[0].RawJSON())
	}
	t.Logf("summary: %q", rs.Summary[0].Text)
	extra := r.Usage.OutputTokensDetails.ReasoningTokens - plain.Usage.OutputTokensDetails.ReasoningTokens
	if extra <= 0 || extra > 64 || r.Usage.OutputTokens-plain.Usage.OutputTokens != extra || r.Usage.InputTokens <= plain.Usage.InputTokens {
		t.Errorf("usage %+v, without a summary %+v", r.Usage, plain.Usage)
	}

	// Streamed, the summary comes in its own events, before the calls.
	s := client.Responses.NewStreaming(ctx, params)
	var deltas strings.Builder
	var done string
	var final responses.Response
	called := false
	for s.Next() {
		ev := s.Current()
		switch ev.Type {
		case "response.reasoning_summary_text.delta":
			if called {
				t.Error("a summary piece after a call")
			}
			deltas.WriteString(ev.Delta)
		case "response.reasoning_summary_text.done":
			done = ev.Text
		case "response.output_item.added":
			called = called || ev.Item.Type == "function_call"
		case "response.completed":
			final = ev.Response
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if got := final.Output[0].AsReasoning().Summary; deltas.Len() == 0 || deltas.String() != done || len(got) != 1 || got[0].Text != done {
		t.Errorf("streamed summary %q, done %q, in the response %+v", deltas.String(), done, got)
	}
}
