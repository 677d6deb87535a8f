package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// day is how dates are written.
const day = "2006-01-02"

// plans are the spec's plans, cheapest first: where a refusal looks for
// a plan that has what the account's lacks.
var plans = []ratelimit.Plan{policy.Free, policy.Team, policy.Growth, policy.Enterprise}

// offered are the plan features this command offers, each behind a flag;
// the spec's other features (analytics, memories, documentation,
// fine-tuning, context integrations, SSO, self-hosting, bring your own
// model, LLM observability) belong to a hosted service and are not.
var offered = []gate{
	{policy.FeatureSecurityScan, "-security", func(o options) bool { return o.security }},
	{policy.FeatureReleaseNotes, "-release-notes", func(o options) bool { return o.releaseNotes }},
	{policy.FeatureCustomRulesets, "-rules", func(o options) bool { return o.rules != "" }},
}

// gate is a plan feature behind a flag.
type gate struct {
	feature ratelimit.Feature
	flag    string
	wanted  func(options) bool // whether the options ask for it
}

// standing is an account's plan at the start of a run.
type standing struct {
	// account is the account's id.
	account string
	// plan is the plan in force, and state where it stands.
	plan  ratelimit.Plan
	state account.PlanState
	// sub is the subscription as stored; zero in a simulation.
	sub account.Subscription
	// simulated: no store, the plan is the -plan flag's.
	simulated bool
}

// standing returns where the options' account stands at now: its stored
// plan (the account created on Free if the store lacks it), or the -plan
// flag's without a store.
func (s store) standing(ctx context.Context, o options, now time.Time) (standing, error) {
	if s.accounts == nil {
		return standing{account: o.account, plan: o.plan, state: account.PlanActive, simulated: true}, nil
	}
	a, err := s.account(ctx, o.account)
	if err != nil {
		return standing{}, err
	}
	p, state := a.PlanAt(now)
	return standing{account: a.ID, plan: p, state: state, sub: a.Plan}, nil
}

// title capitalises a plan's name: "team" is "Team".
func title(name string) string {
	if name == "" {
		return name
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

// featureName is how a feature is written for people.
func featureName(f ratelimit.Feature) string {
	switch f {
	case policy.FeatureSSO:
		return "SSO"
	case policy.FeatureLLMObservability:
		return "LLM observability"
	case policy.FeatureFineTuning:
		return "fine-tuning"
	}
	return strings.ReplaceAll(string(f), "_", " ")
}

// offer names a plan with its price and trial: "Team (49 USD a month,
// 14-day trial)".
func offer(p ratelimit.Plan) string {
	var price string
	switch {
	case p.Price > 0:
		price = p.Price.String() + " USD a month"
	case p.Name == policy.Enterprise.Name:
		price = "custom price"
	default:
		price = "no charge"
	}
	if p.Trial > 0 {
		price += fmt.Sprintf(", %d-day trial", p.Trial/(24*time.Hour))
	}
	return title(p.Name) + " (" + price + ")"
}

// expiredNote says that the account's trial ended, or "" if it did not.
func expiredNote(st standing) string {
	if st.state != account.PlanExpired {
		return ""
	}
	return fmt.Sprintf("the %s trial ended on %s; the account is on %s",
		title(st.sub.Plan), st.sub.TrialEnds.UTC().Format(day), title(st.plan.Name))
}

// howToGet says how the account gets onto one of the plans: a trial not
// yet used, else a subscription to the first; or, without a store, the
// -plan flag that simulates it.
func howToGet(st standing, ps []ratelimit.Plan) string {
	if st.simulated {
		return fmt.Sprintf("pass -plan %s to simulate it (or keep the plan in a store with -accounts)", ps[0].Name)
	}
	subscribe := fmt.Sprintf("subscribe to %s (`codereview subscribe %s`)", title(ps[0].Name), ps[0].Name)
	for _, p := range ps {
		if p.Trial > 0 && !slices.Contains(st.sub.Trials, p.Name) {
			step := fmt.Sprintf("run `codereview trial %s`", p.Name)
			if p.Name != ps[0].Name {
				step += ", or " + subscribe
			}
			return step
		}
	}
	return subscribe
}

// list joins words as a sentence does: "a", "a and b", "a, b and c".
func list(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// lacks is the refusal of a feature the account's plan does not include:
// it names the plan, the feature, the plans that include it with their
// price and trial, and how to get one.
func lacks(st standing, f ratelimit.Feature) error {
	var with []ratelimit.Plan
	var offers []string
	for _, p := range plans {
		if p.Has(f) {
			with = append(with, p)
			offers = append(offers, offer(p))
		}
	}
	msg := fmt.Sprintf("the %s plan lacks %s", st.plan.Name, featureName(f))
	if note := expiredNote(st); note != "" {
		msg = fmt.Sprintf("%s, which lacks %s", note, featureName(f))
	}
	if len(with) == 0 {
		return errors.New(msg)
	}
	verb := "include"
	if len(with) == 1 {
		verb = "includes"
	}
	return fmt.Errorf("%s; %s %s it: %s", msg, list(offers), verb, howToGet(st, with))
}

// checkFeatures refuses the features the options ask for that the plan
// lacks, before any model work.
func checkFeatures(st standing, o options) error {
	var errs []error
	for _, f := range offered {
		if f.wanted(o) && !st.plan.Has(f.feature) {
			errs = append(errs, lacks(st, f.feature))
		}
	}
	return errors.Join(errs...)
}

// quotaOf returns a plan's monthly quota of a limit (LimitReviews,
// LimitSummaries or LimitUsers); 0 is no limit.
func quotaOf(p ratelimit.Plan, limit string) int64 {
	switch limit {
	case ratelimit.LimitReviews:
		return p.Reviews
	case ratelimit.LimitSummaries:
		return p.Summaries
	case ratelimit.LimitUsers:
		return p.Users
	}
	return -1
}

// moreQuota says which plan has more of a used-up quota and how to get
// it, or "" if none has.
func moreQuota(st standing, limit string) string {
	have := quotaOf(st.plan, limit)
	if have <= 0 {
		return ""
	}
	for _, p := range plans {
		n := quotaOf(p, limit)
		if n > 0 && n <= have {
			continue
		}
		amount := fmt.Sprintf("%d %s a month", n, limit)
		if n == 0 {
			amount = "unlimited " + limit
		}
		return fmt.Sprintf("%s has %s: %s.", offer(p), amount, howToGet(st, []ratelimit.Plan{p}))
	}
	return ""
}

// showPlan writes the account's plan, its state, price, features and
// this month's use of its quotas.
func showPlan(ctx context.Context, s store, o options, w io.Writer, now time.Time) error {
	st, err := s.standing(ctx, o, now)
	if err != nil {
		return err
	}
	qs, err := s.quotas.UseQuota(ctx, ratelimit.QuotaRequest{Account: st.account, Plan: st.plan}, now)
	if err != nil {
		return err
	}
	switch st.state {
	case account.PlanTrialing:
		fmt.Fprintf(w, "account %s: %s, trialing until %s; then Free unless subscribed\n",
			st.account, offer(st.plan), st.sub.TrialEnds.UTC().Format(day))
	case account.PlanExpired:
		fmt.Fprintf(w, "account %s: %s (%s)\n", st.account, offer(st.plan), expiredNote(st))
	default:
		since := ""
		if !st.sub.Since.IsZero() {
			since = " since " + st.sub.Since.UTC().Format(day)
		}
		fmt.Fprintf(w, "account %s: %s, active%s\n", st.account, offer(st.plan), since)
	}
	var feats []string
	unoffered := false
	for _, f := range st.plan.Features {
		i := slices.IndexFunc(offered, func(g gate) bool { return g.feature == f })
		if i < 0 {
			feats = append(feats, featureName(f))
			unoffered = true
			continue
		}
		feats = append(feats, fmt.Sprintf("%s (%s)", featureName(f), offered[i].flag))
	}
	switch {
	case len(feats) == 0:
		fmt.Fprintln(w, "features: none of the paid ones")
	case unoffered:
		fmt.Fprintf(w, "features: %s; codereview offers those with a flag\n", strings.Join(feats, ", "))
	default:
		fmt.Fprintf(w, "features: %s\n", strings.Join(feats, ", "))
	}
	fmt.Fprintf(w, "this month: %s; renews on %s\n", used(qs), ratelimit.NextMonth(now).Format(day))
	return nil
}

// used says how much of each quota the month has used.
func used(qs ratelimit.QuotaStatus) string {
	part := func(b ratelimit.Budget, what string) string {
		if b.Limit == 0 {
			return "unlimited " + what
		}
		return fmt.Sprintf("%d of %d %s", b.Limit-b.Remaining, b.Limit, what)
	}
	return part(qs.Reviews, "reviews") + ", " + part(qs.Summaries, "summaries") + ", " + part(qs.Users, "users")
}

// startTrial starts the trial of o.target for the account and shows the
// plan; a trial the account had before is refused.
func startTrial(ctx context.Context, s store, o options, w io.Writer, now time.Time) error {
	a, err := s.account(ctx, o.account)
	if err != nil {
		return err
	}
	if _, err := s.accounts.StartTrial(ctx, a.ID, o.target); errors.Is(err, account.ErrTrialUsed) {
		msg := fmt.Sprintf("account %s already had its %s trial (one per plan per account)", a.ID, title(o.target))
		if a.Plan.Plan == o.target && !a.Plan.TrialEnds.IsZero() {
			verb := "ended on"
			if _, state := a.PlanAt(now); state == account.PlanTrialing {
				verb = "runs until"
			}
			msg += fmt.Sprintf("; it %s %s", verb, a.Plan.TrialEnds.UTC().Format(day))
		}
		return fmt.Errorf("%s; a subscription (`codereview subscribe %s`) puts it on %s", msg, o.target, title(o.target))
	} else if errors.Is(err, account.ErrSubscribed) {
		cur, _ := a.PlanAt(now)
		return fmt.Errorf("account %s is subscribed to %s: a trial is for accounts on Free; `codereview subscribe %s` changes the plan",
			a.ID, offer(cur), o.target)
	} else if err != nil {
		return err
	}
	return showPlan(ctx, s, o, w, now)
}

// subscribe puts the account on o.target, paid, and shows the plan.
func subscribe(ctx context.Context, s store, o options, w io.Writer, now time.Time) error {
	a, err := s.account(ctx, o.account)
	if err != nil {
		return err
	}
	if _, err := s.accounts.Subscribe(ctx, a.ID, o.target); err != nil {
		return err
	}
	return showPlan(ctx, s, o, w, now)
}
