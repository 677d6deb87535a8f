package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/redistest"
	"github.com/inferkit/inferkit/policy"
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

// fake is an Engine that records what it is asked and answers "finding";
// when fails > 0, it fails once it has answered fails times.
type fake struct {
	mu    sync.Mutex
	reqs  []inference.Request
	fails int
}

func (f *fake) Generate(_ context.Context, req inference.Request) (inference.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fails > 0 && len(f.reqs) >= f.fails {
		return inference.Result{}, inference.ErrOverloaded
	}
	f.reqs = append(f.reqs, req)
	return inference.Result{Text: "finding"}, nil
}

// systems returns the system prompts the engine was given.
func (f *fake) systems() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.reqs {
		out = append(out, r.Messages[0].Content[0].Text)
	}
	return out
}

// cli runs command lines as main does, on a fake engine and a clock the
// test moves. Every call opens and closes its store, as separate runs of
// the command do.
type cli struct {
	t     *testing.T
	now   time.Time
	eng   *fake
	loads int             // how many runs loaded the model
	log   strings.Builder // the runs' standard error
}

func newCLI(t *testing.T, now time.Time) *cli {
	return &cli{t: t, now: now, eng: &fake{}}
}

// run runs a command line with sampleDiff on standard input and returns
// its standard output.
func (c *cli) run(args ...string) (string, error) {
	c.t.Helper()
	o, err := parseFlags(args, func(string) string { return "ann" }, io.Discard)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	e := env{
		stdin: strings.NewReader(sampleDiff), stdout: &out, stderr: &c.log,
		now: func() time.Time { return c.now },
		engine: func(options) (Engine, func(), error) {
			c.loads++
			return c.eng, func() {}, nil
		},
	}
	err = execute(context.Background(), o, e)
	return out.String(), err
}

// must runs a command line that must succeed and returns its output.
func (c *cli) must(args ...string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("%q: %v", args, err)
	}
	return out
}

// refused runs a command line that must fail with exactly want, without
// loading the model.
func (c *cli) refused(want string, args ...string) {
	c.t.Helper()
	loads := c.loads
	_, err := c.run(args...)
	if err == nil || err.Error() != want {
		c.t.Fatalf("%q:\n got %v\nwant %s", args, err, want)
	}
	if c.loads != loads {
		c.t.Fatalf("%q loaded the model before refusing", args)
	}
}

// contains fails the test unless out has every one of wants.
func contains(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("missing %q in:\n%s", w, out)
		}
	}
}

const (
	securityOnFree = "the free plan lacks security scan; Team (49 USD a month, 14-day trial), Growth (199 USD a month, 14-day trial) and Enterprise (custom price) include it: run `codereview trial team`"
	rulesOnFree    = "the free plan lacks custom rulesets; Growth (199 USD a month, 14-day trial) and Enterprise (custom price) include it: run `codereview trial growth`"
)

// TestTrial follows an account through a Team trial on a bbolt file: on
// Free, then trialing with Team's features and quotas, used, expired back
// to Free (features and quotas) with messages that name the expiry, a
// second trial refused, and a subscription.
func TestTrial(t *testing.T) {
	start := time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)
	c := newCLI(t, start)
	st := []string{"-accounts", filepath.Join(t.TempDir(), "accounts.db"), "-account", "acme"}
	with := func(args ...string) []string { return append(slices.Clone(st), args...) }

	contains(t, c.must(with("plan")...),
		"account acme: Free (no charge), active", "features: none of the paid ones",
		"this month: 0 of 25 reviews, 0 of 50 summaries, 0 of 1 users; renews on 2026-12-01")
	c.refused(securityOnFree, with("-security", "-")...)
	c.refused(rulesOnFree, with("-rules", writeRules(t), "-")...)
	if got := c.log.String(); got != "codereview: created account acme, on the Free plan\n" {
		t.Errorf("the account's creation was told as %q", got)
	}

	contains(t, c.must(with("trial", "team")...),
		"account acme: Team (49 USD a month, 14-day trial), trialing until 2026-11-24; then Free unless subscribed",
		"features: security scan (-security), release notes (-release-notes)\n",
		"this month: 0 of 250 reviews, 0 of 500 summaries, 0 of 10 users")

	// Use during the trial: Team's features work, Team's quotas count.
	c.now = start.Add(24 * time.Hour)
	out := c.must(with("-security", "-release-notes", "-")...)
	contains(t, out, "account acme: Team plan, trialing until 2026-11-24\n",
		"-- Review (249 of 250 reviews left, 500 of 500 summaries left)\nfinding\n-- Security scan\nfinding\n",
		"-- Summary (249 of 250 reviews left, 499 of 500 summaries left)",
		"== release notes of 1 diffs\n-- Release notes (249 of 250 reviews left, 498 of 500 summaries left)")
	if got, want := c.eng.systems(), []string{reviewPrompt, securityPrompt, summaryPrompt, releasePrompt}; !slices.Equal(got, want) {
		t.Errorf("prompts %q, want %q", got, want)
	}
	contains(t, c.must(with("plan")...), "this month: 1 of 250 reviews, 2 of 500 summaries, 1 of 10 users")
	c.refused("the team plan lacks custom rulesets; Growth (199 USD a month, 14-day trial) and Enterprise (custom price) include it: run `codereview trial growth`",
		with("-rules", writeRules(t), "-")...)
	c.refused("account acme already had its Team trial (one per plan per account); it runs until 2026-11-24; a subscription (`codereview subscribe team`) puts it on Team",
		with("trial", "team")...)

	// The trial ends at 12:00 on its 14th day: Free again, its features
	// and quotas, this month's use still counted.
	c.now = start.Add(14*24*time.Hour - time.Second)
	contains(t, c.must(with("plan")...), "trialing until 2026-11-24")
	c.now = start.Add(14 * 24 * time.Hour)
	contains(t, c.must(with("plan")...),
		"account acme: Free (no charge) (the Team trial ended on 2026-11-24; the account is on Free)",
		"features: none of the paid ones",
		"this month: 1 of 25 reviews, 2 of 50 summaries, 1 of 1 users")
	c.refused("the Team trial ended on 2026-11-24; the account is on Free, which lacks security scan; Team (49 USD a month, 14-day trial), Growth (199 USD a month, 14-day trial) and Enterprise (custom price) include it: run `codereview trial growth`, or subscribe to Team (`codereview subscribe team`)",
		with("-security", "-")...)
	c.refused("the Team trial ended on 2026-11-24; the account is on Free, which lacks release notes; Team (49 USD a month, 14-day trial), Growth (199 USD a month, 14-day trial) and Enterprise (custom price) include it: run `codereview trial growth`, or subscribe to Team (`codereview subscribe team`)",
		with("-release-notes", "-")...)
	c.refused("account acme already had its Team trial (one per plan per account); it ended on 2026-11-24; a subscription (`codereview subscribe team`) puts it on Team",
		with("trial", "team")...)
	out = c.must(with("-user", "bob", "-")...)
	contains(t, out, "account acme: Free plan (the Team trial ended on 2026-11-24; the account is on Free)",
		"-- Review refused: the free plan's quota of 1 users a month is used up for acme (bob would be one more); it renews on 2026-12-01. Team (49 USD a month, 14-day trial) has 10 users a month: subscribe to Team (`codereview subscribe team`).")
	contains(t, c.must(with("-")...), "-- Review (23 of 25 reviews left, 48 of 50 summaries left)")

	// A subscription (what a payment system calls) makes Team active.
	c.now = start.Add(15 * 24 * time.Hour)
	contains(t, c.must(with("subscribe", "team")...),
		"account acme: Team (49 USD a month, 14-day trial), active since 2026-11-25",
		"this month: 2 of 250 reviews, 3 of 500 summaries, 1 of 10 users")
	contains(t, c.must(with("-security", "-")...), "account acme: Team plan\n", "-- Security scan\n")
}

// writeRules writes a ruleset file and returns its path.
func writeRules(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.txt")
	if err := os.WriteFile(path, []byte("R1: every exported name has a doc comment.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFeatureGates runs each gated flag on each plan (simulated with
// -plan): a plan without the feature refuses it before loading the model,
// saying which plans have it; a plan with it does the extra work.
func TestFeatureGates(t *testing.T) {
	rules := writeRules(t)
	gates := []struct {
		flags   []string
		feature ratelimit.Feature
		prompt  string // a system prompt the engine must see
	}{
		{[]string{"-security"}, policy.FeatureSecurityScan, securityPrompt},
		{[]string{"-release-notes"}, policy.FeatureReleaseNotes, releasePrompt},
		{[]string{"-rules", rules}, policy.FeatureCustomRulesets, reviewPrompt + rulesPrompt + "R1: every exported name has a doc comment."},
	}
	for _, g := range gates {
		for _, p := range plans {
			t.Run(fmt.Sprintf("%s/%s", g.feature, p.Name), func(t *testing.T) {
				c := newCLI(t, time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC))
				args := append([]string{"-plan", p.Name}, g.flags...)
				out, err := c.run(append(args, "-")...)
				if !p.Has(g.feature) {
					if err == nil || !strings.HasPrefix(err.Error(), "the "+p.Name+" plan lacks "+featureName(g.feature)+"; ") ||
						!strings.HasSuffix(err.Error(), " to simulate it (or keep the plan in a store with -accounts)") || c.loads != 0 {
						t.Fatalf("not refused clearly before loading the model (%d loads): %v", c.loads, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(c.eng.systems(), g.prompt) {
					t.Errorf("the engine never saw %q; it saw %q\n%s", g.prompt, c.eng.systems(), out)
				}
			})
		}
	}
}

// TestQuotaExhausted reviews 26 diffs on a stored Free plan: the 26th
// review is refused, saying which plan has more, and the summaries (50)
// all run.
func TestQuotaExhausted(t *testing.T) {
	ctx := context.Background()
	now := func() time.Time { return time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC) }
	o, err := parseFlags([]string{"-accounts", filepath.Join(t.TempDir(), "a.db"), "-account", "acme"}, func(string) string { return "ann" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s, err := openStore(ctx, o, now)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	st, err := s.standing(ctx, o, now())
	if err != nil {
		t.Fatal(err)
	}
	var diffs []diff
	for i := range 26 {
		diffs = append(diffs, diff{fmt.Sprint(i), sampleDiff})
	}
	var out strings.Builder
	if err := run(ctx, o, st, &fake{}, s.quotas, diffs, &out, now); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if n := strings.Count(got, "-- Review ("); n != 25 {
		t.Errorf("%d reviews, want 25", n)
	}
	if n := strings.Count(got, "-- Summary ("); n != 26 {
		t.Errorf("%d summaries, want 26", n)
	}
	contains(t, got, "== 25\n-- Review refused: the free plan's quota of 25 reviews a month is used up for acme; it renews on 2026-12-01. Team (49 USD a month, 14-day trial) has 250 reviews a month: run `codereview trial team`.\n")
}

// TestRestart keeps the plan and the month's use, seats included, in the
// bbolt file across runs.
func TestRestart(t *testing.T) {
	c := newCLI(t, time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC))
	st := []string{"-accounts", filepath.Join(t.TempDir(), "accounts.db"), "-account", "acme"}
	with := func(args ...string) []string { return append(slices.Clone(st), args...) }
	c.must(with("subscribe", "growth")...)
	c.must(with("-rules", writeRules(t), "-")...)
	c.must(with("-user", "bob", "-")...)
	c.now = c.now.Add(time.Hour)
	contains(t, c.must(with("plan")...),
		"account acme: Growth (199 USD a month, 14-day trial), active since 2026-11-10",
		"features: security scan (-security), release notes (-release-notes), analytics, custom rulesets (-rules), memories, documentation, fine-tuning, context integrations; codereview offers those with a flag",
		"this month: 2 of 2000 reviews, 2 of 4000 summaries, 2 of 50 users")
}

// TestRedis keeps the plan in redisaccount and the quotas in redislimit.
func TestRedis(t *testing.T) {
	sock := redistest.Start(t)
	c := newCLI(t, time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC))
	with := func(args ...string) []string { return append([]string{"-redis", sock, "-account", "acme"}, args...) }
	c.refused(securityOnFree, with("-security", "-")...)
	c.must(with("trial", "team")...)
	contains(t, c.must(with("-security", "-")...), "-- Security scan\n")
	contains(t, c.must(with("plan")...), "trialing until 2026-11-24", "this month: 1 of 250 reviews, 1 of 500 summaries, 1 of 10 users")
	c.refused("account acme already had its Team trial (one per plan per account); it runs until 2026-11-24; a subscription (`codereview subscribe team`) puts it on Team",
		with("trial", "team")...)
}

// TestRunUnderQuota reviews three diffs with a real tiny model on a plan
// of two reviews and three summaries: the third review is refused, the
// summaries all run, and a new month renews the quota.
func TestRunUnderQuota(t *testing.T) {
	path := inferencetest.Model(t, inferencetest.Options{Seed: 1})
	eng, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "review", Path: path}}, Threads: 1, Parallel: 1, ContextTokens: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	o := options{account: "acme", user: "ann", maxTokens: 8}
	st := standing{account: "acme", plan: ratelimit.Plan{Name: "tiny", Reviews: 2, Summaries: 3, Users: 1}, simulated: true}
	diffs := []diff{{"one", sampleDiff}, {"two", sampleDiff}, {"three", sampleDiff}}
	quotas := ratelimit.NewMemory()
	now := time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	var out strings.Builder
	if err := run(context.Background(), o, st, eng, quotas, diffs, &out, clock); err != nil {
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
	if err := run(context.Background(), o, st, eng, quotas, diffs[:1], &out, clock); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "quota of 1 users a month is used up for acme (bob would be one more)") {
		t.Errorf("a second user was not refused:\n%s", out.String())
	}
	// Next month.
	now = ratelimit.NextMonth(now)
	out.Reset()
	if err := run(context.Background(), o, st, eng, quotas, diffs[:1], &out, clock); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "-- Review (1 of 2 reviews left") {
		t.Errorf("the new month did not renew the quota:\n%s", out.String())
	}
}

// TestFailedReviewGivesQuotaBack fails the review's generation, and then
// its security scan after the review's: either way the review is given
// back.
func TestFailedReviewGivesQuotaBack(t *testing.T) {
	for _, tc := range []struct {
		name     string
		security bool
		eng      Engine
	}{{"review", false, failing{}}, {"security scan", true, &fake{fails: 1}}} {
		t.Run(tc.name, func(t *testing.T) {
			quotas := ratelimit.NewMemory()
			o := options{account: "a", user: "ann", maxTokens: 8, security: tc.security}
			st := standing{account: "a", plan: ratelimit.Plan{Name: "one", Reviews: 1, Features: []ratelimit.Feature{policy.FeatureSecurityScan}}}
			now := func() time.Time { return time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC) }
			var out strings.Builder
			err := run(context.Background(), o, st, tc.eng, quotas, []diff{{"d", sampleDiff}}, &out, now)
			if !errors.Is(err, inference.ErrOverloaded) {
				t.Fatalf("a failed %s reported %v", tc.name, err)
			}
			if strings.Contains(out.String(), "-- Review") {
				t.Errorf("a review whose job failed was printed:\n%s", out.String())
			}
			qs, err := quotas.UseQuota(context.Background(), ratelimit.QuotaRequest{Account: "a", Plan: st.plan, User: "ann", Reviews: 1}, now())
			if err != nil || qs.Reviews.Remaining != 0 {
				t.Fatalf("the quota was not given back: %+v, %v", qs, err)
			}
		})
	}
}

// TestFailedReviewGivesBackAcrossMonths: a generation that fails after
// the month turned gives the review back to the month it was taken from,
// though the new month's one user is someone else.
func TestFailedReviewGivesBackAcrossMonths(t *testing.T) {
	ctx := context.Background()
	quotas := ratelimit.NewMemory()
	plan := ratelimit.Plan{Name: "one", Reviews: 1, Users: 1}
	st := standing{account: "a", plan: plan, simulated: true}
	nov := time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC)
	dec := ratelimit.NextMonth(nov)
	if _, err := quotas.UseQuota(ctx, ratelimit.QuotaRequest{Account: "a", Plan: plan, User: "bob"}, dec); err != nil {
		t.Fatal(err)
	}
	calls := 0
	clock := func() time.Time { // the review takes its quota in November and fails in December
		calls++
		if calls == 1 {
			return nov
		}
		return dec
	}
	o := options{account: "a", user: "ann", maxTokens: 8}
	var out strings.Builder
	err := run(ctx, o, st, failing{}, quotas, []diff{{"d", sampleDiff}}, &out, clock)
	if !errors.Is(err, inference.ErrOverloaded) || errors.Is(err, ratelimit.ErrQuotaExhausted) {
		t.Fatalf("a review that failed in the next month reported %v, want the engine's error alone", err)
	}
	qs, err := quotas.UseQuota(ctx, ratelimit.QuotaRequest{Account: "a", Plan: plan, User: "ann", Reviews: 1}, nov)
	if err != nil || qs.Reviews.Remaining != 0 {
		t.Fatalf("November's review was not given back: %+v, %v", qs, err)
	}
}

// failing is an engine that always fails.
type failing struct{}

func (failing) Generate(context.Context, inference.Request) (inference.Result, error) {
	return inference.Result{}, inference.ErrOverloaded
}

func TestParseFlags(t *testing.T) {
	ann := func(string) string { return "ann" }
	o, err := parseFlags([]string{"-plan", "team", "-account", "acme", "HEAD~2..HEAD"}, ann, io.Discard)
	if err != nil || o.plan.Name != policy.Team.Name || o.account != "acme" || o.user != "ann" || o.source != "HEAD~2..HEAD" || o.command != "" {
		t.Fatalf("%+v %v", o, err)
	}
	// Flags after the command and its argument.
	o, err = parseFlags([]string{"-accounts", "a.db", "trial", "growth", "-account", "acme"}, ann, io.Discard)
	if err != nil || o.command != cmdTrial || o.target != "growth" || o.account != "acme" || o.accountsPath != "a.db" {
		t.Fatalf("%+v %v", o, err)
	}
	o, err = parseFlags([]string{"subscribe", "-redis", "/tmp/r.sock", "Enterprise"}, ann, io.Discard)
	if err != nil || o.command != cmdSubscribe || o.target != "enterprise" || o.redis != "/tmp/r.sock" || o.account != "default" {
		t.Fatalf("%+v %v", o, err)
	}
	o, err = parseFlags([]string{"-security", "--", "-"}, ann, io.Discard)
	if err != nil || o.source != "-" || !o.security {
		t.Fatalf("%+v %v", o, err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"-plan", "gold"}, "unknown plan"},
		{[]string{"a..b", "c..d"}, "at most one revision range"},
		{[]string{"-max-tokens", "0"}, "-max-tokens 0"},
		{[]string{"-accounts", "a.db", "-redis", "r:6379"}, "not both"},
		{[]string{"-accounts", "a.db", "-plan", "team"}, "-plan simulates a plan without a store"},
		{[]string{"plan"}, "give -accounts PATH or -redis ADDR"},
		{[]string{"-accounts", "a.db", "plan", "team"}, "takes no argument"},
		{[]string{"-accounts", "a.db", "trial"}, "wants one plan"},
		{[]string{"-accounts", "a.db", "trial", "enterprise"}, "the enterprise plan has no trial"},
		{[]string{"-accounts", "a.db", "subscribe", "gold"}, "unknown plan"},
		{[]string{"-accounts", "a.db", "-security", "plan"}, "-security is for reviews"},
		{[]string{"-rules", empty}, "holds no rules"},
		{[]string{"-rules", empty + ".absent"}, "no such file"},
	} {
		if _, err := parseFlags(bad.args, ann, io.Discard); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.args, err, bad.want)
		}
	}
	if _, err := parseFlags([]string{"-"}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "-user is empty") {
		t.Errorf("no user: %v", err)
	}
	var help strings.Builder
	if _, err := parseFlags([]string{"-h"}, ann, &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatal(err)
	}
	contains(t, help.String(), "codereview trial team|growth", "what a payment system", "-release-notes", "it does not")
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
