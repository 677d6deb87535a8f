package wire

import (
	"strings"

	"github.com/inferkit/inferkit/inference"
)

// Progress tracks what a stream has sent, so that the final event sends
// only what the pieces before it left out: the engine's Final carries the
// whole output, which may or may not have come in pieces already. The
// zero value has sent nothing; one Progress follows one choice, and is
// not safe for concurrent use.
type Progress struct {
	// Text, Reasoning and Summary are what was sent of the answer, the
	// reasoning and its summary.
	Text, Reasoning, Summary strings.Builder
	calls                    int // tool calls sent
	logprobs                 int // log-probability entries sent
}

// NextSummary returns the piece of the reasoning's summary that ev adds.
func (p *Progress) NextSummary(ev inference.Event) string {
	piece := ev.Summary
	if ev.Final != nil {
		piece = rest(ev.Final.Summary, p.Summary.String())
	}
	p.Summary.WriteString(piece)
	return piece
}

// Next returns the reasoning, text, tool calls and log-probability
// entries that ev adds.
func (p *Progress) Next(ev inference.Event) (reasoning, text string, calls []inference.ToolCall, lps []inference.TokenLogprob) {
	if ev.Final != nil {
		reasoning = rest(ev.Final.Reasoning, p.Reasoning.String())
		text = rest(ev.Final.Text, p.Text.String())
		if len(ev.Final.ToolCalls) > p.calls {
			calls = ev.Final.ToolCalls[p.calls:]
		}
		if len(ev.Final.Logprobs) > p.logprobs {
			lps = ev.Final.Logprobs[p.logprobs:]
		}
	} else {
		reasoning, text, calls, lps = ev.Reasoning, ev.Text, ev.ToolCalls, ev.Logprobs
	}
	p.Reasoning.WriteString(reasoning)
	p.Text.WriteString(text)
	p.calls += len(calls)
	p.logprobs += len(lps)
	return reasoning, text, calls, lps
}

// rest returns what full holds beyond sent.
func rest(full, sent string) string {
	if strings.HasPrefix(full, sent) {
		return full[len(sent):]
	}
	return ""
}
