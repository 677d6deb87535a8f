package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// An invalid request is a 400 naming its field on every tier, before any
// reservation: a 429 would tell the client that waiting helps. Output
// limits beyond what the model can write are refused, not priced.
func TestInvalidBeforeAdmission(t *testing.T) {
	long := strings.Repeat("word ", 5000) // more than the fake's 4,096-token context
	tests := []struct {
		name, path, body string
		param, code      string
	}{
		{"prompt longer than the context", "/v1/chat/completions",
			`{"model":"core-2-5-mini","messages":[{"role":"user","content":"` + long + `"}]}`, "messages", "context_length_exceeded"},
		{"max_tokens 60,000,000", "/v1/chat/completions",
			`{"model":"core-2-5-mini","max_tokens":60000000,"messages":[{"role":"user","content":"Hi"}]}`, "max_tokens", "invalid_value"},
		{"max_tokens 2^31-1", "/v1/chat/completions",
			`{"model":"core-2-5-mini","max_tokens":2147483647,"messages":[{"role":"user","content":"Hi"}]}`, "max_tokens", "invalid_value"},
		{"max_tokens 2^40, messages", "/v1/messages",
			`{"model":"core-2-5-mini","max_tokens":1099511627776,"messages":[{"role":"user","content":"Hi"}]}`, "", "invalid_request_error"},
		{"max_output_tokens 2^40", "/v1/responses",
			`{"model":"core-2-5-mini","max_output_tokens":1099511627776,"input":"Hi"}`, "max_output_tokens", "invalid_value"},
		{"max_tokens past the context of a model without an output limit", "/v1/chat/completions",
			`{"model":"core-2-5-pro","max_tokens":5000,"messages":[{"role":"user","content":"Hi"}]}`, "max_tokens", "context_length_exceeded"},
	}
	for _, tier := range []ratelimit.Tier{policy.Default, policy.Tier3} {
		e := limitedEnv(t, tier, func(cfg *httpapi.Config, _ *fakeEngine) {
			for i := range cfg.Models {
				if cfg.Models[i].ID == policy.Core25Pro {
					cfg.Models[i].MaxOutput = 0
				}
			}
		})
		for _, tt := range tests {
			w := do(e.h, "POST", tt.path, key, tt.body)
			typ, code, param, _ := errorOf(t, w.Body.Bytes())
			if code == "" {
				code = typ // messages
			}
			if w.Code != http.StatusBadRequest || param != tt.param || code != tt.code {
				t.Errorf("%s, tier %s: %d param %q code %q, want 400 param %q code %q\n%s", tt.name, tier.Name, w.Code, param, code, tt.param, tt.code, w.Body)
			}
			if tt.path == "/v1/messages" && !strings.Contains(w.Body.String(), "max_tokens") {
				t.Errorf("%s: the message does not name max_tokens: %s", tt.name, w.Body)
			}
		}
		if n := e.eng.calls(); n != 0 {
			t.Errorf("tier %s: the engine ran %d refused requests", tier.Name, n)
		}
	}
}

// A decision that breaks a rule of the API is a 400 on every tier, even
// when its size alone is over the tier's limit.
func TestInvalidDecisionBeforeAdmission(t *testing.T) {
	small, _ := policy.Model(policy.SystemOne340M)
	small.Path = "/m/enc.gguf"
	state := strings.Repeat("a", 100_004)
	body := `{"model":"system-one-340m","state":"` + state + `","questions":{"q":{"type":"noul","instructions":"Is it?"}}}`
	for _, tier := range []ratelimit.Tier{policy.Default, policy.Tier3} {
		keys, err := httpapi.NewTieredKeys(httpapi.APIKey{Key: key, Tier: tier})
		if err != nil {
			t.Fatal(err)
		}
		h, err := httpapi.New(httpapi.Config{Engine: &scoringEngine{}, Models: []catalog.Model{small}, Keys: keys, Limiter: ratelimit.NewMemory()})
		if err != nil {
			t.Fatal(err)
		}
		w := do(h, "POST", "/v1/system", key, body)
		if _, _, param, _ := errorOf(t, w.Body.Bytes()); w.Code != http.StatusBadRequest || param != "state" {
			t.Errorf("tier %s: %d param %q, want 400 naming state\n%.300s", tier.Name, w.Code, param, w.Body)
		}
	}
}
