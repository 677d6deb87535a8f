//go:build cgo

package inference_test

import (
	"context"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/inference"
)

func TestReasoningSummary(t *testing.T) {
	e := tinyThinker(t)
	zero := 0.0
	// The prompt opens a thinking section, which a budget closes after 12
	// tokens; the model then answers.
	req := inference.Request{Model: "tiny", Prompt: "<|im_start|>user\nWhy is the sky blue?<|im_end|>\n<|im_start|>assistant\n<think>\n",
		MaxTokens: 48, Temperature: &zero, ThinkingBudget: 12, IgnoreEOS: true}
	plain, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Reasoning == "" || plain.Summary != "" {
		t.Fatalf("without a summary: reasoning %q, summary %q", plain.Reasoning, plain.Summary)
	}

	req.Summary = inference.SummaryConcise
	var summary, text strings.Builder
	var res inference.Result
	for ev, err := range e.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Summary != "" && text.Len() > 0 {
			t.Fatal("a summary piece after the answer began")
		}
		if ev.Summary != "" && summary.Len() == 0 && ev.Reasoning != "" {
			t.Fatal("a summary piece with the reasoning")
		}
		summary.WriteString(ev.Summary)
		text.WriteString(ev.Text)
		if ev.Final != nil {
			res = *ev.Final
		}
	}
	if res.Summary == "" || res.Summary != summary.String() {
		t.Fatalf("summary %q, streamed %q", res.Summary, summary.String())
	}
	if res.Reasoning == "" || res.Usage.ReasoningTokens <= res.Usage.CompletionTokens-plain.Usage.CompletionTokens {
		t.Errorf("reasoning %q, usage %+v", res.Reasoning, res.Usage)
	}
	// The summary's tokens count: at most its bound generated, and the
	// reasoning read again as its prompt.
	extra := res.Usage.CompletionTokens - plain.Usage.CompletionTokens
	if extra <= 0 || extra > inference.MaxSummaryTokens(inference.SummaryConcise) ||
		res.Usage.ReasoningTokens-plain.Usage.ReasoningTokens != extra || res.Usage.PromptTokens <= plain.Usage.PromptTokens {
		t.Errorf("usage %+v, without the summary %+v", res.Usage, plain.Usage)
	}

	// A request that does not think has nothing to summarise.
	req.Prompt = "<|im_start|>user\nWhy?<|im_end|>\n<|im_start|>assistant\n"
	none, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if none.Summary != "" || none.Reasoning != "" {
		t.Errorf("no thinking: summary %q", none.Summary)
	}

	req.Summary = "short"
	if _, err := e.Generate(context.Background(), req); err == nil || !strings.Contains(err.Error(), "Summary") {
		t.Errorf("summary level short: %v", err)
	}
}
