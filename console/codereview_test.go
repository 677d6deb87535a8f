package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/codereview"
	"github.com/inferkit/inferkit/console"
)

// reviews is a CodeReviewSource of fixed answers.
type reviews struct{}

func (reviews) Analytics(ctx context.Context, account string) ([]codereview.MonthStats, error) {
	return []codereview.MonthStats{{Month: "2026-03", Reviews: 12, Summaries: 3, Comments: 40, Accepted: 9, Dismissed: 3}}, nil
}

func (reviews) Observations(ctx context.Context, account string) ([]codereview.Observation, error) {
	return []codereview.Observation{{ID: "cr_X1", Kind: "review", Model: "core-2-5-mini", Created: time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC),
		Duration: 1500 * time.Millisecond, DiffBytes: 2048, Generations: 3, PromptTokens: 1234, OutputTokens: 56, Comments: 2}}, nil
}

// The code-review pages by plan: analytics from Growth, LLM
// observability on Enterprise, a 403 naming the feature and the plan
// that has it below; a trial counts as its plan.
func TestCodeReviewPagesByPlan(t *testing.T) {
	pages := []struct {
		path, feature, has string
		shows              []string
	}{
		{"/code-review/analytics", "analytics", "Growth", []string{"2026-03", "<td>12</td>", "<td>40</td>", "<td>9</td>", "<td>3</td>", "75%"}},
		{"/code-review/observability", "llm_observability", "Enterprise", []string{"cr_X1", "core-2-5-mini", "1.5s", "2,048", "1,234", "<td>56</td>"}},
	}
	allowed := map[string][]bool{ // by plan: analytics, observability
		"free": {false, false}, "team": {false, false}, "growth": {true, false}, "enterprise": {true, true}, "growth-trial": {true, false},
	}
	for plan, want := range allowed {
		t.Run(plan, func(t *testing.T) {
			f := newFixture(t, console.Config{CodeReview: reviews{}})
			var err error
			if name, ok := strings.CutSuffix(plan, "-trial"); ok {
				_, err = f.accounts.StartTrial(t.Context(), f.account.ID, name)
			} else {
				_, err = f.accounts.Subscribe(t.Context(), f.account.ID, plan)
			}
			if err != nil {
				t.Fatal(err)
			}
			a := f.agent()
			a.login()
			for i, p := range pages {
				resp, page := a.get(p.path)
				switch {
				case want[i] && resp.StatusCode != http.StatusOK:
					t.Errorf("%s: %d, want 200", p.path, resp.StatusCode)
				case want[i]:
					for _, s := range p.shows {
						if !strings.Contains(page, s) {
							t.Errorf("%s does not show %q:\n%s", p.path, s, page)
						}
					}
				case resp.StatusCode != http.StatusForbidden || !strings.Contains(page, "("+p.feature+") is not in the") || !strings.Contains(page, "the "+p.has+" plan has it"):
					t.Errorf("%s: %d, want 403 naming %s and %s:\n%s", p.path, resp.StatusCode, p.feature, p.has, page)
				}
			}
		})
	}
}
