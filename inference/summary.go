package inference

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// SummaryLevel asks for a summary of a model's thinking
// (Request.Summary): how long it may be.
type SummaryLevel string

// The summaries a request may ask for; the zero value asks for none.
const (
	SummaryNone     SummaryLevel = ""
	SummaryConcise  SummaryLevel = "concise"
	SummaryAuto     SummaryLevel = "auto"
	SummaryDetailed SummaryLevel = "detailed"
)

// summaryTokens bounds the tokens a summary of each level generates.
var summaryTokens = map[SummaryLevel]int{SummaryConcise: 64, SummaryAuto: 128, SummaryDetailed: 256}

// summarySentences is what the summary's instruction asks of each level.
var summarySentences = map[SummaryLevel]string{
	SummaryConcise:  "in one or two sentences",
	SummaryAuto:     "in a few sentences",
	SummaryDetailed: "in a short paragraph that keeps every step that mattered",
}

// MaxSummaryTokens is the most tokens a summary of level l may generate.
func MaxSummaryTokens(l SummaryLevel) int { return summaryTokens[l] }

// checkSummary checks a request's summary level.
func checkSummary(l SummaryLevel) error {
	if _, ok := summaryTokens[l]; !ok && l != SummaryNone {
		return fieldError(Field("Summary"), "%q is not concise, auto or detailed", l)
	}
	return nil
}

// summaryRequest is the request that summarises reasoning, the thinking
// of a request on model: a short greedy generation without thinking, the
// reasoning given as data (never control tokens).
func summaryRequest(model string, l SummaryLevel, reasoning string) Request {
	zero := 0.0
	return Request{
		Model: model,
		Messages: []Message{
			Text(RoleSystem, fmt.Sprintf("Summarize the reasoning the user gives %s, for a reader who wants to know how the answer was reached. Write only the summary.", summarySentences[l])),
			Text(RoleUser, reasoning),
		},
		MaxTokens:      summaryTokens[l],
		ClampMaxTokens: true,
		Temperature:    &zero,
		NoThinking:     true,
	}
}

// summaryState is what summaries knows of one choice.
type summaryState struct {
	reasoning strings.Builder
	asked     bool   // the summary ran, or there was nothing to summarise
	text      string // the summary
	usage     Usage  // its tokens
}

// summaries wraps yield so that each of a request's choices gets the
// summary of its thinking as soon as the thinking ends, at its first
// answer event: the summary runs meanwhile (the answer goes on in its
// sequence), its pieces are yielded as Event.Summary, and the choice's
// Final carries it and counts its tokens.
func (e *Engine) summaries(ctx context.Context, req Request, choices int, yield func(Event, error) bool) func(Event, error) bool {
	states := make([]summaryState, choices)
	return func(ev Event, err error) bool {
		if err != nil {
			return yield(ev, err)
		}
		c := &states[ev.Choice]
		c.reasoning.WriteString(ev.Reasoning)
		if !c.asked && (ev.Text != "" || len(ev.ToolCalls) > 0 || ev.Final != nil) {
			c.asked = true
			reasoning := c.reasoning.String()
			if ev.Final != nil {
				reasoning = ev.Final.Reasoning
			}
			if reasoning != "" {
				var ok bool
				if c.text, c.usage, ok, err = e.summarize(ctx, req.Model, req.Summary, reasoning, ev.Choice, yield); err != nil {
					yield(Event{Choice: ev.Choice}, err)
					return false // an error is the stream's last pair
				}
				if !ok {
					return false
				}
			}
		}
		if ev.Final != nil {
			res := *ev.Final
			res.Summary = c.text
			res.Usage.PromptTokens += c.usage.PromptTokens
			res.Usage.CachedTokens += c.usage.CachedTokens
			res.Usage.CompletionTokens += c.usage.CompletionTokens
			res.Usage.ReasoningTokens += c.usage.CompletionTokens
			ev.Final = &res
		}
		return yield(ev, nil)
	}
}

// summarize generates the summary of reasoning, yielding its pieces as
// choice's Summary events; ok is false when the reader stopped. Reasoning
// too long for the context is summarised by its end: the text is halved,
// from the front, until it fits.
func (e *Engine) summarize(ctx context.Context, model string, l SummaryLevel, reasoning string, choice int, yield func(Event, error) bool) (text string, usage Usage, ok bool, err error) {
	var p *Prepared
	for {
		p, err = e.Prepare(ctx, summaryRequest(model, l, reasoning))
		if !errors.Is(err, ErrContextLength) || len(reasoning) < 2 {
			break
		}
		cut := len(reasoning) / 2
		for cut < len(reasoning) && !utf8.RuneStart(reasoning[cut]) {
			cut++
		}
		reasoning = reasoning[cut:]
	}
	if err != nil {
		return "", Usage{}, false, fmt.Errorf("inference: summarizing the reasoning: %w", err)
	}
	for ev, err := range e.Run(ctx, p) {
		if err != nil {
			return "", Usage{}, false, fmt.Errorf("inference: summarizing the reasoning: %w", err)
		}
		if ev.Final != nil {
			return ev.Final.Text, ev.Final.Usage, true, nil
		}
		if ev.Text != "" && !yield(Event{Choice: choice, Summary: ev.Text}, nil) {
			return "", Usage{}, false, nil
		}
	}
	return "", Usage{}, false, errors.New("inference: the summary's stream ended without a result")
}
