package codereview

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// standing is where the caller's account stands when a request
// arrives: its id and the plan in force (a trial counts as its plan).
type standing struct {
	account, key string // the account's id, the key's
	plan         ratelimit.Plan
	plans        ratelimit.Plans
}

// standingOf finds the account of the key in header and its plan at
// now; ok is false without Accounts (no plans: every feature, no
// quotas).
func (h *Handler) standingOf(ctx context.Context, header http.Header, now time.Time) (standing, bool, error) {
	if h.accounts == nil {
		return standing{}, false, nil
	}
	secret := strings.TrimPrefix(header.Get("Authorization"), "Bearer ")
	if secret == "" {
		secret = header.Get("X-Api-Key")
	}
	p, err := h.accounts.Authenticate(ctx, secret)
	if err != nil {
		return standing{}, true, err
	}
	plan, _ := p.Account.PlanAt(now)
	return standing{account: p.Account.ID, key: p.Key.ID, plan: plan, plans: h.accounts.Plans()}, true, nil
}

// featuresOf names the plan features a request asks for: a model of
// its own among them, where the Handler has a review model.
func (h *Handler) featuresOf(req Request) []ratelimit.Feature {
	var out []ratelimit.Feature
	if h.model != "" && req.Model != h.model {
		out = append(out, policy.FeatureBringYourOwnModel)
	}
	if req.Security {
		out = append(out, policy.FeatureSecurityScan)
	}
	if req.Rules != "" {
		out = append(out, policy.FeatureCustomRulesets)
	}
	switch req.Kind {
	case KindReleaseNotes:
		out = append(out, policy.FeatureReleaseNotes)
	case KindDocumentation:
		out = append(out, policy.FeatureDocumentation)
	}
	return out
}

// FeatureError refuses a feature outside the account's plan: a 403
// naming the feature and the cheapest plan that has it.
type FeatureError struct {
	Feature ratelimit.Feature
	Plan    string // the account's
	Has     string // the cheapest plan that has it, or ""
}

func (e *FeatureError) Error() string {
	msg := fmt.Sprintf("%s is not in the %s plan", strings.ReplaceAll(string(e.Feature), "_", " "), e.Plan)
	if e.Has != "" {
		msg += fmt.Sprintf("; the %s plan has it", e.Has)
	}
	return msg
}

// check refuses the first feature of feats that st's plan lacks.
func (st standing) check(feats []ratelimit.Feature) error {
	for _, f := range feats {
		if st.plan.Has(f) {
			continue
		}
		e := &FeatureError{Feature: f, Plan: st.plan.Name}
		for _, p := range st.plans {
			if p.Has(f) {
				e.Has = p.Name
				break
			}
		}
		return e
	}
	return nil
}

// take takes a review's quotas (a review, and a summary with it) for
// user at now, and returns what gives them back when the review fails.
func (h *Handler) take(ctx context.Context, st standing, req Request, user string, now time.Time) (func(), error) {
	q := ratelimit.QuotaRequest{Account: st.account, Plan: st.plan, User: user, Reviews: 1}
	if req.Kind != KindReview {
		q.Reviews = 0 // a summary, release notes or documentation is one summary
	}
	if !req.NoSummary {
		q.Summaries = 1
	}
	// Through the accounts, which charge the plan's monthly fee at its
	// first use of the month.
	if _, err := h.accounts.UseQuota(ctx, h.quotas, q, now); err != nil {
		return nil, err
	}
	return func() {
		back := q
		back.Reviews, back.Summaries, back.User = -q.Reviews, -q.Summaries, ""
		h.quotas.UseQuota(context.WithoutCancel(ctx), back, now)
	}, nil
}

// quotaError answers a refused quota: 429 naming the quota, and when
// it resets (the first of next month, UTC).
func quotaError(w http.ResponseWriter, e *ratelimit.Error, now time.Time) {
	reset := ratelimit.NextMonth(now)
	w.Header().Set("Retry-After", fmt.Sprint(int(reset.Sub(now).Seconds())+1))
	writeError(w, http.StatusTooManyRequests, "quota_exceeded", "", fmt.Sprintf("the plan's quota of %d %s a month is used up for this account; it resets on %s",
		e.Max, e.Limit, reset.UTC().Format("2006-01-02")))
}

// admit readies a review of req under the key in header, for user
// ("" counts the key) at now: the account's settings applied (its
// model for a request that names none, else the Handler's; its rules
// before the request's), req checked, the plan's features checked, its
// quotas taken, and the memories of repository given to a review (plans
// with memories). It returns the Reviewer, who owns the review, and
// what gives the quotas back when the review fails; its error is one
// admitError answers.
func (h *Handler) admit(ctx context.Context, header http.Header, req *Request, user, repository string, now time.Time) (rv *Reviewer, owner string, giveBack func(), err error) {
	giveBack = func() {}
	st, planned, err := h.standingOf(ctx, header, now)
	if err != nil {
		return nil, "", nil, err
	}
	owner = ownerOf(st, planned, header)
	set, err := h.ledger.settingsOf(ctx, owner)
	if err != nil {
		return nil, "", nil, err
	}
	if req.Model == "" {
		req.Model = cmp.Or(set.Model, h.model)
	}
	if _, err := Check(*req); err != nil {
		return nil, "", nil, err
	}
	if set.Rules != "" && req.Kind == KindReview {
		req.Rules = strings.TrimSpace(set.Rules + "\n" + req.Rules)
	}
	if planned {
		if err := st.check(h.featuresOf(*req)); err != nil {
			return nil, "", nil, err
		}
	}
	if req.Kind == KindReview && (!planned || st.plan.Has(policy.FeatureMemories)) {
		if req.Memories, err = h.ledger.memoriesOf(ctx, owner, repository); err != nil {
			return nil, "", nil, err
		}
	}
	if planned && h.quotas != nil {
		if user == "" {
			user = "key:" + st.key
		}
		if giveBack, err = h.take(ctx, st, *req, user, now); err != nil {
			return nil, "", nil, err
		}
	}
	cfg := h.cfg
	cfg.Generator = HTTPGenerator{API: h.api, Header: header}
	if rv, err = New(cfg); err != nil {
		giveBack()
		return nil, "", nil, err
	}
	return rv, owner, giveBack, nil
}

// admitError answers admit's error: 401 for a key that is no
// account's, 403 for a feature outside the plan, 429 for a quota used
// up, 503 for accounts or quotas that cannot be read.
func admitError(w http.ResponseWriter, err error, now time.Time) {
	var fe *FeatureError
	var qe *ratelimit.Error
	var field *FieldError
	switch {
	case errors.As(err, &field):
		writeError(w, http.StatusBadRequest, "invalid_request_error", field.Field, err.Error())
	case errors.As(err, &fe):
		writeError(w, http.StatusForbidden, "permission_error", "", err.Error())
	case errors.As(err, &qe):
		quotaError(w, qe, now)
	case errors.Is(err, account.ErrInvalidKey):
		writeError(w, http.StatusUnauthorized, "invalid_api_key", "", "the API key is not valid")
	default:
		writeError(w, http.StatusServiceUnavailable, "server_error", "", "the accounts or quotas cannot be read: "+err.Error())
	}
}
