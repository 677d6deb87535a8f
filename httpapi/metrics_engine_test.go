//go:build cgo

package httpapi_test

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/policy"
)

// chatUsage is the usage object of a chat completion or of a stream's
// usage chunk.
type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// On the real engine and a real tiny model, /metrics, read by
// Prometheus' text parser after real requests (two completions, a
// stream, a 400), counts those requests and exactly the tokens their
// responses report, and reads the engine's sequences and load time.
func TestMetricsRealEngine(t *testing.T) {
	path := tinyModel(t)
	var models []catalog.Model
	for _, id := range []string{policy.Core25Mini, policy.Core25Pro} {
		m, _ := policy.Model(id)
		m.Path = path
		models = append(models, m)
	}
	eng, err := inference.New(inference.Config{Models: models, Threads: 1, Parallel: 2, ContextTokens: 512,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	keys, _ := httpapi.NewStaticKeys(key)
	h, err := httpapi.New(httpapi.Config{Engine: eng, Models: models, Keys: keys, Logger: slog.New(slog.DiscardHandler),
		Metrics: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", http.StripPrefix("/api", h))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	post := func(body string) (int, []byte) {
		t.Helper()
		return send(t, "POST", srv.URL+"/api/v1/chat/completions", body)
	}
	const chat = `{"model":"core-2-5-mini","max_tokens":6,"temperature":0,"messages":[{"role":"user","content":"Tell me a story about a cat."}]}`
	var usages []chatUsage
	for range 2 { // the second reuses the first's prompt from the prefix cache
		status, b := post(chat)
		var resp struct{ Usage chatUsage }
		if err := json.Unmarshal(b, &resp); status != 200 || err != nil {
			t.Fatalf("chat: %d %v %s", status, err, b)
		}
		usages = append(usages, resp.Usage)
	}
	status, b := post(strings.Replace(chat, `{`, `{"stream":true,"stream_options":{"include_usage":true},`, 1))
	if status != 200 {
		t.Fatalf("stream: %d %s", status, b)
	}
	var streamed *chatUsage
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct{ Usage *chatUsage }
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		if chunk.Usage != nil {
			streamed = chunk.Usage
		}
	}
	if streamed == nil {
		t.Fatalf("the stream has no usage chunk:\n%s", b)
	}
	usages = append(usages, *streamed)
	if status, b := post(`{"model":"core-2-5-mini","temperature":-1,"messages":[{"role":"user","content":"Hi"}]}`); status != 400 {
		t.Fatalf("invalid temperature: %d %s", status, b)
	}

	res, err := http.Get(srv.URL + "/api/metrics") // no key
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d %s", res.StatusCode, body)
	}
	fams := parseMetrics(t, string(body))

	wantSample(t, fams, 3, "inferkit_http_requests_total", "route", "POST /v1/chat/completions", "status", "200", "tier", "default")
	wantSample(t, fams, 1, "inferkit_http_requests_total", "route", "POST /v1/chat/completions", "status", "400", "tier", "default")
	var prompt, cached, generated, first, perToken float64
	for _, u := range usages {
		prompt += float64(u.PromptTokens)
		cached += float64(u.PromptTokensDetails.CachedTokens)
		generated += float64(u.CompletionTokens)
		if u.CompletionTokens > 0 {
			first++
		}
		if u.CompletionTokens > 1 {
			perToken++
		}
	}
	if prompt == 0 || cached == 0 || generated == 0 {
		t.Fatalf("usages %+v: want prompt, cached and generated tokens", usages)
	}
	wantSample(t, fams, prompt, "inferkit_prompt_tokens_total", "model", policy.Core25Mini)
	wantSample(t, fams, cached, "inferkit_cached_tokens_total", "model", policy.Core25Mini)
	wantSample(t, fams, generated, "inferkit_generated_tokens_total", "model", policy.Core25Mini)
	wantSample(t, fams, cached/prompt, "inferkit_prefix_cache_hit_ratio", "model", policy.Core25Mini)
	wantSample(t, fams, 0, "inferkit_prompt_tokens_total", "model", policy.Core25Pro)
	wantSample(t, fams, first, "inferkit_time_to_first_token_seconds", "model", policy.Core25Mini)
	wantSample(t, fams, perToken, "inferkit_time_per_output_token_seconds", "model", policy.Core25Mini)
	for _, id := range []string{policy.Core25Mini, policy.Core25Pro} {
		wantSample(t, fams, 0, "inferkit_queue_depth", "model", id)
		wantSample(t, fams, 0, "inferkit_active_sequences", "model", id)
		wantSample(t, fams, 2, "inferkit_sequences", "model", id)
		if v, ok := sample(fams, "inferkit_model_load_seconds", "model", id); !ok || v <= 0 {
			t.Errorf("inferkit_model_load_seconds{model=%q} = %v, %v", id, v, ok)
		}
	}
}
