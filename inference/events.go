package inference

import (
	"context"
	"errors"
	"fmt"

	"github.com/inferkit/inferkit/internal/runner"
)

// streamJobs yields the events of jobs, the choices of one request, as
// the public Events, each with its job's index as Choice (see
// runner.Stream): tool calls get their ids as they come, and each final
// result carries the calls as its events did.
func streamJobs(ctx context.Context, jobs []*runner.Job, yield func(Event, error) bool) {
	calls := make([][]ToolCall, len(jobs))
	runner.Stream(ctx, jobs, func(i int, rev runner.Event, err error) bool {
		if err != nil {
			return yield(Event{Choice: i}, runnerError(err))
		}
		ev := Event{Text: rev.Text, Reasoning: rev.Reasoning, Choice: i,
			Logprobs: logprobs(rev.Logprobs), PromptLogprobs: logprobs(rev.PromptLogprobs)}
		if len(rev.Calls) > 0 {
			ev.ToolCalls = toolCalls(rev.Calls)
			calls[i] = append(calls[i], ev.ToolCalls...)
		}
		if rev.Final != nil {
			ev.Final = result(rev.Final, calls[i])
		}
		return yield(ev, nil)
	})
}

// result is the public Result of a runner's, whose tool calls were sent
// with their ids as calls.
func result(r *runner.Result, calls []ToolCall) *Result {
	return &Result{
		Text:           r.Text,
		Reasoning:      r.Reasoning,
		FinishReason:   finishReason(r.Finish),
		StopSequence:   r.StopSequence,
		StopToken:      r.StopToken,
		ToolCalls:      calls,
		Logprobs:       logprobs(r.Logprobs),
		PromptLogprobs: logprobs(r.PromptLogprobs),
		Usage: Usage{
			PromptTokens:     r.Usage.Prompt,
			CachedTokens:     r.Usage.Cached,
			CompletionTokens: r.Usage.Completion,
			ReasoningTokens:  r.Usage.Reasoning,
			DraftedTokens:    r.Usage.Drafted,
			AcceptedTokens:   r.Usage.Accepted,
		},
		Timings: Timings(r.Timings),
		callCut: r.CallCut,
	}
}

func finishReason(f runner.Finish) FinishReason {
	switch f {
	case runner.FinishLength:
		return FinishLength
	case runner.FinishStopSequence:
		return FinishStopSequence
	case runner.FinishToolCalls:
		return FinishToolCalls
	}
	return FinishStop
}

// logprobs are the public entries of a runner's; nil for none.
func logprobs(lps []runner.Logprob) []TokenLogprob {
	if lps == nil {
		return nil
	}
	out := make([]TokenLogprob, len(lps))
	for i, lp := range lps {
		out[i] = TokenLogprob{Token: lp.Token, Bytes: lp.Bytes, Logprob: lp.Logprob}
		if lp.Top != nil {
			out[i].Top = make([]TopLogprob, len(lp.Top))
			for k, t := range lp.Top {
				out[i].Top[k] = TopLogprob(t)
			}
		}
	}
	return out
}

// runnerError is the engine's error for a runner's: its sentinels become
// the engine's, so that callers branch on ErrClosed and ErrInvalidRequest.
func runnerError(err error) error {
	switch {
	case errors.Is(err, runner.ErrClosed):
		return ErrClosed
	case errors.Is(err, runner.ErrGrammar):
		return fmt.Errorf("%w: the output's grammar admits no further token", ErrInvalidRequest)
	case errors.Is(err, runner.ErrNoToken):
		return errors.New("inference: the model gave no token to sample")
	}
	return err
}
