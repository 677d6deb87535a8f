package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/ratelimit"
)

const sampleDiff = `diff --git a/add.go b/add.go
--- a/add.go
+++ b/add.go
@@ -1,3 +1,3 @@
 func add(a, b int) int {
-	return a + b
+	return a - b
 }
`

// TestRunUnderQuota reviews three diffs with a real tiny model on a plan
// of two reviews and three summaries: the third review is refused, the
// summaries all run, and a new month renews the quota.
func TestRunUnderQuota(t *testing.T) {
	path := inferencetest.Model(t, inferencetest.Options{Seed: 1})
	eng, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "review", Path: path}}, Threads: 1, Parallel: 1, Context: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	o := options{account: "acme", user: "ann", plan: ratelimit.Plan{Name: "tiny", Reviews: 2, Summaries: 3, Users: 1}, maxTokens: 8}
	diffs := []diff{{"one", sampleDiff}, {"two", sampleDiff}, {"three", sampleDiff}}
	quotas := ratelimit.NewMemory()
	now := time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	var out strings.Builder
	if err := run(context.Background(), o, eng, quotas, diffs, &out, clock); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if n := strings.Count(got, "-- Review (1 of 2 reviews left") + strings.Count(got, "-- Review (0 of 2 reviews left"); n != 2 {
		t.Errorf("%d reviews ran, want 2:\n%s", n, got)
	}
	if !strings.Contains(got, "-- Review refused: the tiny plan's quota of 2 reviews a month is used up for acme; it renews on 2026-12-01.") {
		t.Errorf("no clear refusal:\n%s", got)
	}
	if n := strings.Count(got, "-- Summary ("); n != 3 {
		t.Errorf("%d summaries, want 3:\n%s", n, got)
	}
	// Another user is past the plan's one user.
	o.user = "bob"
	out.Reset()
	if err := run(context.Background(), o, eng, quotas, diffs[:1], &out, clock); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "quota of 1 users a month is used up") {
		t.Errorf("a second user was not refused:\n%s", out.String())
	}
	// Next month.
	now = ratelimit.NextMonth(now)
	out.Reset()
	if err := run(context.Background(), o, eng, quotas, diffs[:1], &out, clock); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "-- Review (1 of 2 reviews left") {
		t.Errorf("the new month did not renew the quota:\n%s", out.String())
	}
}

// failing is an engine that always fails.
type failing struct{}

func (failing) Generate(context.Context, inference.Request) (inference.Result, error) {
	return inference.Result{}, inference.ErrOverloaded
}

func TestFailedReviewGivesQuotaBack(t *testing.T) {
	quotas := ratelimit.NewMemory()
	o := options{account: "a", user: "ann", plan: ratelimit.Plan{Name: "one", Reviews: 1}, maxTokens: 8}
	now := func() time.Time { return time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC) }
	if err := run(context.Background(), o, failing{}, quotas, []diff{{"d", sampleDiff}}, io.Discard, now); err == nil {
		t.Fatal("a failed review reported no error")
	}
	st, err := quotas.UseQuota(context.Background(), ratelimit.QuotaRequest{Account: "a", Plan: o.plan, User: "ann", Reviews: 1}, now())
	if err != nil || st.Reviews.Remaining != 0 {
		t.Fatalf("the quota was not given back: %+v, %v", st, err)
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"-plan", "team", "-account", "acme", "HEAD~2..HEAD"}, func(string) string { return "ann" }, io.Discard)
	if err != nil || o.plan.Name != ratelimit.Team.Name || o.account != "acme" || o.user != "ann" || o.source != "HEAD~2..HEAD" {
		t.Fatalf("%+v %v", o, err)
	}
	for _, bad := range [][]string{{"-plan", "gold"}, {"a..b", "c..d"}, {"-max-tokens", "0"}} {
		if _, err := parseFlags(bad, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestReadDiffsStdin(t *testing.T) {
	diffs, err := readDiffs(context.Background(), "-", strings.NewReader(sampleDiff))
	if err != nil || len(diffs) != 1 || diffs[0].text != sampleDiff {
		t.Fatalf("%+v %v", diffs, err)
	}
	if _, err := readDiffs(context.Background(), "-", strings.NewReader("  \n")); err == nil {
		t.Fatal("an empty diff was accepted")
	}
}
