package console

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/inferkit/inferkit/codereview"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// CodeReviewSource reports an account's code reviews for the console's
// code-review pages; *codereview.Handler implements it. It is called
// from the requests' goroutines, concurrently.
type CodeReviewSource interface {
	// Analytics returns the account's reviews by month, the latest
	// first.
	Analytics(ctx context.Context, account string) ([]codereview.MonthStats, error)
	// Observations returns the account's latest requests, the latest
	// first.
	Observations(ctx context.Context, account string) ([]codereview.Observation, error)
}

var _ CodeReviewSource = (*codereview.Handler)(nil)

// analyticsPage is GET /code-review/analytics.
type analyticsPage struct {
	page
	CSRF    string
	Account accountView
	Months  []monthView
}

// monthView is a row of the analytics table.
type monthView struct {
	Month                                                     string
	Reviews, Summaries, Failed, Comments, Accepted, Dismissed string
	// AcceptedShare is the accepted comments' share of those with
	// feedback, "" for none.
	AcceptedShare string
}

// observabilityPage is GET /code-review/observability.
type observabilityPage struct {
	page
	CSRF    string
	Account accountView
	Rows    []observationView
}

// observationView is a row of the observability table.
type observationView struct {
	ID, Created, Kind, Model, Duration     string
	DiffBytes, Generations, Prompt, Output string
	Comments, NotReviewed, Error           string
}

// planned reads the session's account and refuses, with a 403 naming
// the feature and the plan that has it, a plan without feature f.
func (c *Console) planned(w http.ResponseWriter, r *http.Request, s session, f ratelimit.Feature) (accountView, bool) {
	now := c.now()
	a, err := c.accounts.Account(r.Context(), s.Account)
	if err != nil {
		c.serverError(w, r, err)
		return accountView{}, false
	}
	if plan, _ := a.PlanAt(now); !plan.Has(f) {
		c.fail(w, r, http.StatusForbidden, featureRefusal(f, plan, c.accounts.Plans()))
		return accountView{}, false
	}
	v := viewAccount(a, c.accounts.Billing(), now)
	v.Member = s.Member
	return v, true
}

// analytics serves the account's code-review analytics: reviews,
// comments, and accepted and dismissed comments per month (plans with
// analytics).
func (c *Console) analytics(w http.ResponseWriter, r *http.Request, s session) {
	av, ok := c.planned(w, r, s, policy.FeatureAnalytics)
	if !ok {
		return
	}
	months, err := c.codeReview.Analytics(r.Context(), s.Account)
	if err != nil {
		c.log.LogAttrs(r.Context(), slog.LevelError, "console: code-review analytics unavailable", slog.String("account", s.Account), slog.Any("error", err))
		c.serverError(w, r, err)
		return
	}
	p := analyticsPage{page: c.page("Code-review analytics"), CSRF: s.CSRF, Account: av}
	for _, m := range months {
		v := monthView{Month: m.Month, Reviews: count(m.Reviews), Summaries: count(m.Summaries), Failed: count(m.Failed),
			Comments: count(m.Comments), Accepted: count(m.Accepted), Dismissed: count(m.Dismissed)}
		if n := m.Accepted + m.Dismissed; n > 0 {
			v.AcceptedShare = strconv.FormatInt(m.Accepted*100/n, 10) + "%"
		}
		p.Months = append(p.Months, v)
	}
	c.render(w, r, http.StatusOK, "analytics.html", p)
}

// observability serves each of the account's latest code-review
// requests: its prompt's size, time, tokens and model (plans with LLM
// observability).
func (c *Console) observability(w http.ResponseWriter, r *http.Request, s session) {
	av, ok := c.planned(w, r, s, policy.FeatureLLMObservability)
	if !ok {
		return
	}
	obs, err := c.codeReview.Observations(r.Context(), s.Account)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	p := observabilityPage{page: c.page("Code-review observability"), CSRF: s.CSRF, Account: av}
	for _, o := range obs {
		p.Rows = append(p.Rows, observationView{ID: o.ID, Created: minute(o.Created), Kind: o.Kind, Model: o.Model,
			Duration: o.Duration.Round(time.Millisecond).String(), DiffBytes: count(int64(o.DiffBytes)),
			Generations: count(int64(o.Generations)), Prompt: count(int64(o.PromptTokens)), Output: count(int64(o.OutputTokens)),
			Comments: count(int64(o.Comments)), NotReviewed: count(int64(o.NotReviewed)), Error: o.Error})
	}
	c.render(w, r, http.StatusOK, "observability.html", p)
}

// signedInPage follows a single sign-on.
type signedInPage struct {
	page
	Member string
}
