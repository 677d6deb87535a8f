package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/ratelimit"
)

// The system prompts of the generations.
const (
	reviewPrompt = "You are a careful code reviewer. Review the following git diff: point out bugs, risky changes and missing tests, each with the file and line it concerns. Be brief."
	// rulesPrompt introduces a custom ruleset, appended to reviewPrompt.
	rulesPrompt    = "\n\nAlso hold the diff to this team's own rules, and name the rule each finding breaks:\n"
	securityPrompt = "You are an application security reviewer. Examine the following git diff for security flaws only: injection, path traversal, unsafe deserialisation, missing authentication or authorisation checks, secrets or keys in the code, weak cryptography and unchecked input. Give each flaw's file and line, the risk and a fix; if there are none, say so."
	summaryPrompt  = "Summarise the following git diff in two or three sentences, for the people who review it."
	releasePrompt  = "Write release notes for the following changes, for the project's users: short lists under the headings Added, Changed and Fixed (leave out empty ones), one line per change, in plain words and without internal detail."
)

// Engine is what run needs of *inference.Engine.
type Engine interface {
	Generate(ctx context.Context, req inference.Request) (inference.Result, error)
}

// job is one use of the quotas and the generations it pays for.
type job struct {
	title string                 // what a refusal names
	quota ratelimit.QuotaRequest // Reviews, Summaries
	steps []step
}

// step is one generation.
type step struct {
	title, system, user string
}

// run reviews and summarises each diff under the account's plan: a
// review (with its security scan, under -security, and the custom rules
// of -rules) takes one review; a summary takes one summary; release notes
// over all diffs (-release-notes) take one summary. A refused quota is
// reported and the run goes on; a failed generation gives its job's quota
// back and ends the run. The plan is the one in force when run starts.
func run(ctx context.Context, o options, st standing, eng Engine, quotas ratelimit.Quotas, diffs []diff, w io.Writer, now func() time.Time) error {
	if !st.simulated {
		headline(w, st)
	}
	review := reviewPrompt
	if o.rules != "" {
		review += rulesPrompt + o.rules
	}
	do := func(name string, j job) error {
		q := j.quota
		q.Account, q.Plan, q.User = st.account, st.plan, o.user
		at := now()
		qs, err := quotas.UseQuota(ctx, q, at)
		var e *ratelimit.Error
		if errors.As(err, &e) && errors.Is(err, ratelimit.ErrQuotaExhausted) {
			refused(w, st, o.user, j.title, e, at)
			return nil
		}
		if err != nil {
			return err
		}
		texts := make([]string, len(j.steps))
		for i, s := range j.steps {
			res, err := eng.Generate(ctx, inference.Request{
				Model: "review", MaxTokens: o.maxTokens, ClampMaxTokens: true,
				Messages: []inference.Message{
					inference.Text(inference.RoleSystem, s.system),
					inference.Text(inference.RoleUser, s.user),
				},
			})
			if err != nil {
				// Give the quota back to the month it was taken from, at,
				// though the clock may have turned since, and without the
				// user, who stays counted there: in a new month the user
				// would count anew, and could be refused.
				back := q
				back.Reviews, back.Summaries, back.User = -q.Reviews, -q.Summaries, ""
				if _, berr := quotas.UseQuota(context.WithoutCancel(ctx), back, at); berr != nil {
					err = errors.Join(err, berr)
				}
				return fmt.Errorf("%s of %s: %w", s.title, name, err)
			}
			texts[i] = strings.TrimSpace(res.Text)
		}
		for i, s := range j.steps {
			if i == 0 {
				fmt.Fprintf(w, "-- %s (%s)\n%s\n", s.title, left(qs), texts[i])
			} else {
				fmt.Fprintf(w, "-- %s\n%s\n", s.title, texts[i])
			}
		}
		return nil
	}
	var all strings.Builder
	for _, d := range diffs {
		fmt.Fprintf(w, "== %s\n", d.name)
		fmt.Fprintf(&all, "== %s\n%s\n", d.name, d.text)
		rv := job{title: "Review", quota: ratelimit.QuotaRequest{Reviews: 1}, steps: []step{{"Review", review, d.text}}}
		if o.security {
			rv.title = "Review and security scan"
			rv.steps = append(rv.steps, step{"Security scan", securityPrompt, d.text})
		}
		sum := job{title: "Summary", quota: ratelimit.QuotaRequest{Summaries: 1}, steps: []step{{"Summary", summaryPrompt, d.text}}}
		for _, j := range []job{rv, sum} {
			if err := do(d.name, j); err != nil {
				return err
			}
		}
	}
	if o.releaseNotes {
		fmt.Fprintf(w, "== release notes of %d diffs\n", len(diffs))
		rn := job{title: "Release notes", quota: ratelimit.QuotaRequest{Summaries: 1}, steps: []step{{"Release notes", releasePrompt, all.String()}}}
		if err := do("all diffs", rn); err != nil {
			return err
		}
	}
	return nil
}

// headline says which plan a run is on.
func headline(w io.Writer, st standing) {
	switch st.state {
	case account.PlanTrialing:
		fmt.Fprintf(w, "account %s: %s plan, trialing until %s\n", st.account, title(st.plan.Name), st.sub.TrialEnds.UTC().Format(day))
	case account.PlanExpired:
		fmt.Fprintf(w, "account %s: %s plan (%s)\n", st.account, title(st.plan.Name), expiredNote(st))
	default:
		fmt.Fprintf(w, "account %s: %s plan\n", st.account, title(st.plan.Name))
	}
}

// refused says that a job's quota is used up, when it renews, and which
// plan has more.
func refused(w io.Writer, st standing, user, what string, e *ratelimit.Error, at time.Time) {
	fmt.Fprintf(w, "-- %s refused: the %s plan's quota of %d %s a month is used up for %s", what, st.plan.Name, e.Max, e.Limit, st.account)
	if e.Limit == ratelimit.LimitUsers {
		fmt.Fprintf(w, " (%s would be one more)", user)
	}
	fmt.Fprintf(w, "; it renews on %s.", ratelimit.NextMonth(at).Format(day))
	if more := moreQuota(st, e.Limit); more != "" {
		fmt.Fprint(w, " ", more)
	}
	fmt.Fprintln(w)
}

// left says what remains of the plan's quotas.
func left(st ratelimit.QuotaStatus) string {
	part := func(b ratelimit.Budget, what string) string {
		if b.Limit == 0 {
			return "unlimited " + what
		}
		return fmt.Sprintf("%d of %d %s left", b.Remaining, b.Limit, what)
	}
	return part(st.Reviews, "reviews") + ", " + part(st.Summaries, "summaries")
}
