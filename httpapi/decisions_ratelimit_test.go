package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/gif"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// Decisions count under the key's limits with their input tokens: the
// reservation estimates them, the settlement uses what the model read, and
// a tier too small for the estimate is refused in the chat style's shape.
func TestDecisionsRateLimited(t *testing.T) {
	serve := func(tier ratelimit.Tier) *httptest.Server {
		small, _ := policy.Model(policy.SystemOne340M)
		small.Path = "/m/enc.gguf"
		keys, err := httpapi.NewTieredKeys(httpapi.APIKey{Key: "sk-test", Tier: tier})
		if err != nil {
			t.Fatal(err)
		}
		h, err := httpapi.New(httpapi.Config{Engine: &scoringEngine{}, Models: []catalog.Model{small}, Keys: keys, Limiter: ratelimit.NewMemory()})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv
	}
	remaining := func(srv *httptest.Server) int {
		req, _ := http.NewRequest("GET", srv.URL+"/v1/system/models", nil)
		req.Header.Set("Authorization", "Bearer sk-test")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		n, err := strconv.Atoi(res.Header.Get("X-Ratelimit-Remaining-Input-Tokens"))
		if err != nil {
			t.Fatalf("remaining input tokens: %q", res.Header.Get("X-Ratelimit-Remaining-Input-Tokens"))
		}
		return n
	}

	srv := serve(ratelimit.Tier{Name: "t", Requests: 100, InputTokens: 10_000})
	code, out := call(t, srv, "POST", "/v1/system", "sk-test", decisionBody)
	if code != 200 {
		t.Fatalf("decision: %d %v", code, out)
	}
	used := int(out["usage"].(map[string]any)["input_tokens"].(float64))
	if used == 0 {
		t.Fatal("the decision reported no input tokens")
	}
	if got := remaining(srv); got != 10_000-used {
		t.Errorf("remaining input tokens %d, want %d after a decision that read %d", got, 10_000-used, used)
	}

	tiny := serve(ratelimit.Tier{Name: "tiny", Requests: 100, InputTokens: 50})
	code, out = call(t, tiny, "POST", "/v1/system", "sk-test", decisionBody)
	if code != http.StatusTooManyRequests || !strings.Contains(out["error"].(map[string]any)["type"].(string), "rate_limit") {
		t.Errorf("over the tier's input tokens: %d %v, want a 429 rate_limit error", code, out)
	}
	// System One's path refuses a key over its minute's tokens in its own
	// shape, with Retry-After.
	spent := serve(ratelimit.Tier{Name: "one", Requests: 100, InputTokens: 700})
	if code, out := call(t, spent, "POST", "/v1/systemone", "sk-test", decisionBody); code != 200 {
		t.Fatalf("first decision: %d %v", code, out)
	}
	code, h, out := callHeaders(t, spent, "POST", "/v1/systemone", "sk-test", decisionBody)
	if d, _ := out["detail"].(map[string]any); code != http.StatusTooManyRequests || d == nil || d["error_type"] != "rate_limit_error" || h.Get("Retry-After") == "" {
		t.Errorf("over the tier's input tokens on /v1/systemone: %d %v (Retry-After %q)", code, out, h.Get("Retry-After"))
	}
}

// A video entry is reserved as the most frames it may give, before any
// frame is sampled: a tier with room for a picture has none for a clip.
func TestDecisionVideoReservation(t *testing.T) {
	mm, _ := policy.Model(policy.SystemOne9B)
	mm.Path = "/m/9b.gguf"
	keys, err := httpapi.NewTieredKeys(httpapi.APIKey{Key: "sk-test", Tier: ratelimit.Tier{Name: "t", Requests: 100, InputTokens: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	eng := &scoringEngine{}
	h, err := httpapi.New(httpapi.Config{Engine: eng, Models: []catalog.Model{mm}, Keys: keys, Limiter: ratelimit.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ask := func(entry []byte) (int, map[string]any) {
		return call(t, srv, "POST", "/v1/systemone", "sk-test", `{"model": "system-one-9b", "state": "s", "questions": {"a": {"type": "noul"}}, "images": ["`+base64.StdEncoding.EncodeToString(entry)+`"]}`)
	}
	if code, out := ask([]byte("hi")); code != 200 {
		t.Fatalf("one picture: %d %v", code, out)
	}
	var clip bytes.Buffer
	frame := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.White})
	if err := gif.EncodeAll(&clip, &gif.GIF{Image: []*image.Paletted{frame, frame}, Delay: []int{10, 10}}); err != nil {
		t.Fatal(err)
	}
	calls := eng.calls
	if code, out := ask(clip.Bytes()); code != http.StatusTooManyRequests {
		t.Errorf("a clip of up to %d frames: %d %v, want a 429", decision.VideoFrames, code, out)
	}
	if eng.calls != calls {
		t.Error("the refused clip reached the engine")
	}
}

// A decision model's catalog calibration flattens its answers.
func TestDecisionCalibration(t *testing.T) {
	probability := func(calibration float64) float64 {
		small, _ := policy.Model(policy.SystemOne340M)
		small.Path, small.Calibration = "/m/enc.gguf", calibration
		keys, _ := httpapi.NewStaticKeys("sk-test")
		h, err := httpapi.New(httpapi.Config{Engine: &scoringEngine{}, Models: []catalog.Model{small}, Keys: keys})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		code, out := call(t, srv, "POST", "/v1/system", "sk-test", decisionBody)
		if code != 200 {
			t.Fatalf("%d %v", code, out)
		}
		topic := out["answers"].(map[string]any)["topic"].(map[string]any)
		return topic["probabilities"].(map[string]any)["shipping"].(float64)
	}
	sharp, flat := probability(0), probability(4)
	if !(sharp > flat && flat > 0.5) {
		t.Errorf("P(shipping) %v at calibration 1, %v at 4: want the higher temperature nearer 1/2", sharp, flat)
	}
}
