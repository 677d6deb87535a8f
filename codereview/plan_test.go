package codereview_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/codereview"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// stubAPI answers chat completions as the API does: under a review's
// schema, one comment on the first line it admits; a summary without.
// It keeps the last system prompt.
type stubAPI struct {
	calls  atomic.Int64
	mu     sync.Mutex
	system string
}

func (s *stubAPI) lastSystem() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.system
}

func (s *stubAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if id, ok := strings.CutPrefix(r.URL.Path, "/v1/models/"); ok && r.Method == http.MethodGet {
		if id != "m" && id != "mine" {
			w.WriteHeader(http.StatusNotFound)
		}
		return
	}
	s.calls.Add(1)
	var body struct {
		Messages       []map[string]string `json:"messages"`
		ResponseFormat *struct {
			JSONSchema struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	content := "A summary."
	if body.ResponseFormat != nil {
		s.mu.Lock()
		s.system = body.Messages[0]["content"]
		s.mu.Unlock()
		content = firstLineComment(body.ResponseFormat.JSONSchema.Schema)
	}
	b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": content}, "finish_reason": "stop"}},
		"usage": map[string]int{"prompt_tokens": 10, "completion_tokens": 2}})
	w.Write(b)
}

// firstLineComment is an answer under a piece's schema: a comment on
// the first line it admits.
func firstLineComment(schema json.RawMessage) string {
	type props = map[string]struct {
		Enum []any `json:"enum"`
	}
	var s struct {
		Properties struct {
			Comments struct {
				Items struct {
					Properties props `json:"properties"`
					AnyOf      []struct {
						Properties props `json:"properties"`
					} `json:"anyOf"`
				} `json:"items"`
			} `json:"comments"`
		} `json:"properties"`
	}
	json.Unmarshal(schema, &s)
	p := s.Properties.Comments.Items.Properties
	if p == nil {
		p = s.Properties.Comments.Items.AnyOf[0].Properties
	}
	b, _ := json.Marshal(map[string]any{"comments": []any{map[string]any{"path": p["path"].Enum[0], "line": p["line"].Enum[0], "side": p["side"].Enum[0],
		"severity": "minor", "category": "style", "body": "Name the constant."}}})
	return string(b)
}

const smallDiff = "--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n package x\n-var a = 1\n+var a = 2\n"

// planServer serves the review API over accounts on a clock that the
// test moves, with one account per plan name given (a key each).
type planServer struct {
	url   string
	keys  map[string]string // by account
	now   *atomic.Pointer[time.Time]
	accts *account.Accounts
	api   *stubAPI
	h     *codereview.Handler
	reg   *prometheus.Registry
}

func newPlanServer(t *testing.T, quotas ratelimit.Quotas, repos map[string]string) *planServer {
	t.Helper()
	ctx := context.Background()
	start := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	now := &atomic.Pointer[time.Time]{}
	now.Store(&start)
	clock := func() time.Time { return *now.Load() }
	accts, err := account.New(ctx, account.Config{Store: account.NewMemory(), PasswordIterations: 1000, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	api := &stubAPI{}
	reg := prometheus.NewRegistry()
	h, err := codereview.NewHandler(codereview.HandlerConfig{API: api, Accounts: accts, Quotas: quotas, Now: clock, Model: "m", Repositories: repos, Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &planServer{url: srv.URL, keys: map[string]string{}, now: now, accts: accts, api: api, h: h, reg: reg}
}

// account creates an account on plan (free, team, growth, enterprise;
// trial: its trial) and returns its key.
func (p *planServer) account(t *testing.T, id, plan string, trial bool) string {
	t.Helper()
	ctx := context.Background()
	if _, err := p.accts.CreateAccount(ctx, account.NewAccount{ID: id, Name: id}); err != nil {
		t.Fatal(err)
	}
	var err error
	switch {
	case trial:
		_, err = p.accts.StartTrial(ctx, id, plan)
	case plan != "free":
		_, err = p.accts.Subscribe(ctx, id, plan)
	}
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := p.accts.CreateKey(ctx, id, "ci")
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

func (p *planServer) post(t *testing.T, key string, body map[string]any) (int, string) {
	t.Helper()
	return p.postTo(t, "reviews", key, body)
}

func (p *planServer) postTo(t *testing.T, route, key string, body map[string]any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	return call(t, "POST", p.url+"/v1/code-review/"+route, key, string(b))
}

// call sends body to url by method under key, and returns the answer's
// status and body.
func call(t *testing.T, method, url, key, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res.StatusCode, string(out)
}

// Each plan feature of a review, on each plan: allowed, or a 403 that
// names the feature and the plan that has it.
func TestPlanFeatures(t *testing.T) {
	p := newPlanServer(t, nil, nil)
	features := []struct {
		name, route string
		body        map[string]any
		has         string // the cheapest plan with it
	}{
		{"review", "reviews", map[string]any{}, ""},
		{"summary", "summaries", map[string]any{}, ""},
		{"security scan", "reviews", map[string]any{"security": true}, "team"},
		{"release notes", "release-notes", map[string]any{}, "team"},
		{"custom rulesets", "reviews", map[string]any{"rules": "No globals."}, "growth"},
		{"documentation", "documentation", map[string]any{}, "growth"},
		{"bring your own model", "reviews", map[string]any{"model": "mine"}, "enterprise"},
	}
	feature := map[string]ratelimit.Feature{"security scan": policy.FeatureSecurityScan, "release notes": policy.FeatureReleaseNotes,
		"custom rulesets": policy.FeatureCustomRulesets, "documentation": policy.FeatureDocumentation, "bring your own model": policy.FeatureBringYourOwnModel}
	for _, plan := range []string{"free", "team", "growth", "enterprise"} {
		key := p.account(t, "acct-"+plan, plan, false)
		pl, _ := map[string]ratelimit.Plan{"free": policy.Free, "team": policy.Team, "growth": policy.Growth, "enterprise": policy.Enterprise}[plan], 0
		for _, f := range features {
			t.Run(plan+"/"+f.name, func(t *testing.T) {
				body := map[string]any{"model": "m", "diff": smallDiff}
				for k, v := range f.body {
					body[k] = v
				}
				status, out := p.postTo(t, f.route, key, body)
				allowed := f.has == "" || pl.Has(feature[f.name])
				switch {
				case allowed && status != 200:
					t.Errorf("%d %s, want 200", status, out)
				case !allowed && (status != 403 || !strings.Contains(out, f.name) || !strings.Contains(out, "the "+f.has+" plan has it")):
					t.Errorf("%d %s, want a 403 naming %s and the %s plan", status, out, f.name, f.has)
				}
			})
		}
	}
}

// A trial counts as its plan until it ends, on the accounts' clock:
// then the account is on Free, and the feature is refused.
func TestTrialEnds(t *testing.T) {
	p := newPlanServer(t, nil, nil)
	key := p.account(t, "trialist", "team", true)
	scan := map[string]any{"model": "m", "diff": smallDiff, "security": true}
	if status, out := p.post(t, key, scan); status != 200 {
		t.Fatalf("during the trial: %d %s", status, out)
	}
	later := p.now.Load().Add(15 * 24 * time.Hour)
	p.now.Store(&later)
	if status, out := p.post(t, key, scan); status != 403 || !strings.Contains(out, "free plan") {
		t.Errorf("after the trial: %d %s", status, out)
	}
}

// The monthly reviews quota is reached exactly, with requests at once:
// of 30 concurrent reviews on Free (25 a month) 25 pass, and the others
// get a 429 naming the quota and the day it resets; seats count the
// distinct people: Free has one.
func TestQuotasUnderConcurrency(t *testing.T) {
	p := newPlanServer(t, ratelimit.NewMemory(), nil)
	key := p.account(t, "busy", "free", false)
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			status, out := p.post(t, key, map[string]any{"model": "m", "diff": smallDiff, "summary": false, "user": "ada"})
			switch {
			case status == 200:
				ok.Add(1)
			case status == 429 && strings.Contains(out, "25 reviews a month") && strings.Contains(out, "resets on 2027-01-01"):
				refused.Add(1)
			default:
				t.Errorf("%d %s", status, out)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 25 || refused.Load() != 5 {
		t.Errorf("%d passed and %d refused, want 25 and 5", ok.Load(), refused.Load())
	}
	other := p.account(t, "seats", "free", false)
	if status, out := p.post(t, other, map[string]any{"model": "m", "diff": smallDiff, "summary": false, "user": "ada"}); status != 200 {
		t.Fatalf("the first person: %d %s", status, out)
	}
	if status, out := p.post(t, other, map[string]any{"model": "m", "diff": smallDiff, "summary": false, "user": "grace"}); status != 429 || !strings.Contains(out, fmt.Sprint("users")) {
		t.Errorf("a second person on Free: %d %s", status, out)
	}
	// Summaries count in their own quota (Free: 50), not in reviews.
	sums := p.account(t, "sums", "free", false)
	for i := range 50 {
		if status, out := p.postTo(t, "summaries", sums, map[string]any{"model": "m", "diff": smallDiff}); status != 200 {
			t.Fatalf("summary %d: %d %s", i+1, status, out)
		}
	}
	if status, out := p.postTo(t, "summaries", sums, map[string]any{"model": "m", "diff": smallDiff}); status != 429 || !strings.Contains(out, "50 summaries") {
		t.Errorf("summary 51: %d %s", status, out)
	}
	if status, out := p.post(t, sums, map[string]any{"model": "m", "diff": smallDiff, "summary": false}); status != 200 {
		t.Errorf("a review after the summaries: %d %s", status, out)
	}
}
