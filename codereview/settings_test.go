package codereview_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// An account's settings apply to every review: its ruleset (Growth)
// is read by a review that gives no rules, its model (Enterprise)
// reviews a request that names none; each is refused with a 403 on a
// plan without it, and a model the catalog lacks with a 400 naming the
// field.
func TestSettings(t *testing.T) {
	p := newPlanServer(t, nil, nil)
	settings := func(key, method, body string) (int, string) {
		t.Helper()
		return call(t, method, p.url+"/v1/code-review/settings", key, body)
	}
	free, growth, enterprise := p.account(t, "f", "free", false), p.account(t, "g", "growth", false), p.account(t, "e", "enterprise", false)
	for _, tc := range []struct {
		name, key, body string
		status          int
		says            string
	}{
		{"rules on Free", free, `{"rules":"No globals."}`, 403, "custom rulesets is not in the free plan; the growth plan has it"},
		{"a model on Growth", growth, `{"model":"mine"}`, 403, "bring your own model is not in the growth plan; the enterprise plan has it"},
		{"a model the catalog lacks", enterprise, `{"model":"nope"}`, 400, `"param":"model"`},
		{"rules too long", growth, `{"rules":"` + strings.Repeat("x", 8001) + `"}`, 400, `"param":"rules"`},
		{"an unknown field", growth, `{"rulez":"x"}`, 400, "rulez"},
		{"clearing on Free", free, `{}`, 200, `"rules":""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, out := settings(tc.key, "PUT", tc.body); status != tc.status || !strings.Contains(out, tc.says) {
				t.Errorf("%d %s, want %d saying %q", status, out, tc.status, tc.says)
			}
		})
	}

	if status, out := settings(growth, "PUT", `{"rules":"Every exported name has a doc comment."}`); status != 200 {
		t.Fatalf("rules on Growth: %d %s", status, out)
	}
	if status, out := settings(growth, "GET", ""); status != 200 || !strings.Contains(out, "Every exported name has a doc comment.") {
		t.Errorf("GET settings: %d %s", status, out)
	}
	if status, out := p.post(t, growth, map[string]any{"diff": smallDiff}); status != 200 || !strings.Contains(p.api.lastSystem(), "Every exported name has a doc comment.") {
		t.Errorf("a review on Growth: %d %s; it read %q", status, out, p.api.lastSystem())
	}
	if status, out := p.post(t, free, map[string]any{"diff": smallDiff}); status != 200 || strings.Contains(p.api.lastSystem(), "doc comment") {
		t.Errorf("another account's review read Growth's rules: %d %s", status, out)
	}

	if status, out := settings(enterprise, "PUT", `{"model":"mine"}`); status != 200 {
		t.Fatalf("a model on Enterprise: %d %s", status, out)
	}
	for body, want := range map[string]string{`{}`: "mine", `{"model":"m"}`: "m"} {
		var b map[string]any
		json.Unmarshal([]byte(body), &b)
		b["diff"] = smallDiff
		status, out := p.post(t, enterprise, b)
		var rv struct{ Model string }
		if json.Unmarshal([]byte(out), &rv); status != 200 || rv.Model != want {
			t.Errorf("a review %s on Enterprise: %d %s, want model %s", body, status, out, want)
		}
	}
}
