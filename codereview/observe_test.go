package codereview_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/inferkit/inferkit/codereview"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// A month's analytics count the account's reviews, summaries and
// comments, and its reviewers' feedback as it stands (a dismissed
// comment accepted later counts as accepted); the observations give
// each request's model, size and tokens, the latest first; another
// account sees none of it; the metrics count the same requests.
func TestAnalyticsObservationsMetrics(t *testing.T) {
	p := newPlanServer(t, nil, nil)
	key := p.account(t, "growing", "growth", false)
	p.account(t, "other", "growth", false)
	var ids []string
	for range 2 {
		status, out := p.post(t, key, map[string]any{"diff": smallDiff, "summary": false})
		var rv struct{ ID string }
		if json.Unmarshal([]byte(out), &rv); status != 200 || rv.ID == "" {
			t.Fatalf("review: %d %s", status, out)
		}
		ids = append(ids, rv.ID)
	}
	if status, out := p.postTo(t, "summaries", key, map[string]any{"diff": smallDiff}); status != 200 {
		t.Fatalf("summary: %d %s", status, out)
	}
	if status, out := p.post(t, key, map[string]any{"diff": "not a diff"}); status != 400 {
		t.Fatalf("a bad diff: %d %s", status, out)
	}
	feedback := func(id string, accepted bool) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"comment": 0, "accepted": accepted})
		if status, out := call(t, "POST", p.url+"/v1/code-review/reviews/"+id+"/feedback", key, string(b)); status != 200 {
			t.Fatalf("feedback: %d %s", status, out)
		}
	}
	feedback(ids[0], true)
	feedback(ids[1], false)
	feedback(ids[1], true)

	months, err := p.h.Analytics(t.Context(), "growing")
	if err != nil {
		t.Fatal(err)
	}
	want := codereview.MonthStats{Month: "2026-12", Reviews: 2, Summaries: 1, Comments: 2, Accepted: 2}
	if len(months) != 1 || months[0] != want {
		t.Errorf("analytics %+v, want [%+v]", months, want)
	}
	obs, err := p.h.Observations(t.Context(), "growing")
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 3 || obs[0].Kind != "summary" || obs[2].ID != ids[0] || obs[2].Model != "m" || obs[2].Generations != 1 ||
		obs[2].PromptTokens != 10 || obs[2].OutputTokens != 2 || obs[2].Comments != 1 || obs[2].DiffBytes != len(smallDiff) || obs[2].Error != "" {
		t.Errorf("observations %+v", obs)
	}
	if m, _ := p.h.Analytics(t.Context(), "other"); len(m) != 0 {
		t.Errorf("another account's analytics %+v", m)
	}
	if o, _ := p.h.Observations(t.Context(), "other"); len(o) != 0 {
		t.Errorf("another account's observations %+v", o)
	}

	expected := `
# HELP inferkit_code_review_requests_total Code-review requests finished, by kind, model and outcome (ok or error).
# TYPE inferkit_code_review_requests_total counter
inferkit_code_review_requests_total{kind="review",model="m",outcome="ok"} 2
inferkit_code_review_requests_total{kind="summary",model="m",outcome="ok"} 1
# HELP inferkit_code_review_prompt_tokens_total Prompt tokens of code-review generations.
# TYPE inferkit_code_review_prompt_tokens_total counter
inferkit_code_review_prompt_tokens_total{kind="review",model="m"} 20
inferkit_code_review_prompt_tokens_total{kind="summary",model="m"} 10
`
	if err := testutil.GatherAndCompare(p.reg, strings.NewReader(expected), "inferkit_code_review_requests_total", "inferkit_code_review_prompt_tokens_total"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(p.reg, "inferkit_code_review_duration_seconds"); err != nil || n != 2 {
		t.Errorf("duration histograms: %d %v", n, err)
	}
}

// A paid plan's first review of the month charges the plan's price to
// the account's spend, once; a trial's charges nothing.
func TestReviewChargesPlanFee(t *testing.T) {
	lim := ratelimit.NewMemory()
	p := newPlanServer(t, lim, nil)
	paid, trial := p.account(t, "paid", "team", false), p.account(t, "trying", "team", true)
	for range 2 {
		for _, key := range []string{paid, trial} {
			if status, out := p.post(t, key, map[string]any{"diff": smallDiff}); status != 200 {
				t.Fatalf("review: %d %s", status, out)
			}
		}
	}
	now := *p.now.Load()
	for id, want := range map[string]ratelimit.Money{"paid": policy.Team.Price, "trying": 0} {
		u, err := lim.Usage(t.Context(), id, now)
		if err != nil || u.PlanFee != want || u.Spent != want {
			t.Errorf("%s: plan fee %s, spent %s (%v); want %s", id, u.PlanFee, u.Spent, err, want)
		}
	}
}
