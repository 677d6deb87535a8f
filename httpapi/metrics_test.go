package httpapi_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// scrape gets GET /metrics from h, without an API key, and parses it with
// Prometheus' own text-format parser.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET /metrics Content-Type %q", ct)
	}
	return parseMetrics(t, w.Body.String())
}

// parseMetrics parses a /metrics body in the Prometheus text format.
func parseMetrics(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v\n%s", err, body)
	}
	return fams
}

// sample returns the value of the metric name whose labels are exactly
// labels (name=value pairs): a counter's or gauge's value, a histogram's
// sample count. It reports false when there is none.
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		var got []string
		for _, l := range m.GetLabel() {
			got = append(got, l.GetName(), l.GetValue())
		}
		if !sameLabels(got, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// sameLabels compares two lists of name, value pairs in any order.
func sameLabels(a, b []string) bool {
	pairs := func(l []string) []string {
		var p []string
		for i := 0; i+1 < len(l); i += 2 {
			p = append(p, l[i]+"="+l[i+1])
		}
		slices.Sort(p)
		return p
	}
	return slices.Equal(pairs(a), pairs(b))
}

// wantSample fails the test unless the metric exists with the value want.
func wantSample(t *testing.T, fams map[string]*dto.MetricFamily, want float64, name string, labels ...string) {
	t.Helper()
	got, ok := sample(fams, name, labels...)
	switch {
	case !ok:
		t.Errorf("%s%v: absent", name, labels)
	case got != want:
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

// statsEngine is the fake engine with a Stats method, as
// *inference.Engine has.
type statsEngine struct {
	*fakeEngine
	stats []inference.ModelStats
}

func (s statsEngine) Stats() []inference.ModelStats { return s.stats }

// metricsEnv is a Handler on the fake engine, with metrics, with key on
// the default tier and otherKey on tier2.
func metricsEnv(t *testing.T, edit func(*httpapi.Config, *fakeEngine)) *env {
	t.Helper()
	return newEnv(t, func(cfg *httpapi.Config, f *fakeEngine) {
		keys, err := httpapi.NewTieredKeys(httpapi.APIKey{Key: key}, httpapi.APIKey{Key: otherKey, Tier: policy.Tier2})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Keys, cfg.Metrics = keys, prometheus.NewRegistry()
		if edit != nil {
			edit(cfg, f)
		}
	})
}

// /metrics counts the requests made, by route pattern, status and tier,
// the usage of the generations, and reads the engine's queue, sequences
// and load times when it scrapes.
func TestMetricsCounts(t *testing.T) {
	e := metricsEnv(t, func(cfg *httpapi.Config, f *fakeEngine) {
		f.result.Usage = inference.Usage{PromptTokens: 5, CachedTokens: 3, CompletionTokens: 4}
		f.result.Timings = inference.Timings{Queued: 10 * time.Millisecond, Prefill: 20 * time.Millisecond, Decode: 30 * time.Millisecond}
		f.models[0].LoadTime = 1500 * time.Millisecond
		cfg.Engine = statsEngine{f, []inference.ModelStats{{ID: "core-2-5-mini", Queued: 3, Active: 2, Sequences: 4}}}
	})
	requests := []struct {
		method, path, key, body string
		status                  int
	}{
		{"POST", "/v1/chat/completions", key, chatBody, 200},
		{"POST", "/v1/chat/completions", key, withModel(chatBody, "mini"), 200}, // an alias counts under its id
		{"POST", "/v1/chat/completions", otherKey, streaming(chatBody), 200},
		{"POST", "/v1/messages", otherKey, messagesBody, 200},
		{"POST", "/v1/chat/completions", key, withModel(chatBody, "nope"), 400},
		{"POST", "/v1/chat/completions", wrongKey, chatBody, 401},
		{"GET", "/v1/models", key, "", 200},
		{"GET", "/v1/nope", key, "", 404},
		{"GET", "/v1/chat/completions", "", "", 405},
		{"GET", "/healthz", "", "", 200},
	}
	for _, r := range requests {
		if w := do(e.h, r.method, r.path, r.key, r.body); w.Code != r.status {
			t.Fatalf("%s %s: %d, want %d: %s", r.method, r.path, w.Code, r.status, w.Body)
		}
	}
	fams := scrape(t, e.h)
	const req = "inferkit_http_requests_total"
	for _, c := range []struct {
		want                float64
		route, status, tier string
	}{
		{2, "POST /v1/chat/completions", "200", "default"},
		{1, "POST /v1/chat/completions", "200", "tier2"},
		{1, "POST /v1/messages", "200", "tier2"},
		{1, "POST /v1/chat/completions", "400", "default"},
		{1, "POST /v1/chat/completions", "401", "none"},
		{1, "GET /v1/models", "200", "default"},
		{1, "unrouted", "404", "none"}, // no route, so no authentication
		{1, "unrouted", "405", "none"},
		{1, "GET /healthz", "200", "none"},
	} {
		wantSample(t, fams, c.want, req, "route", c.route, "status", c.status, "tier", c.tier)
	}
	var total float64
	for _, m := range fams[req].GetMetric() {
		total += m.GetCounter().GetValue()
	}
	if total != float64(len(requests)) { // the scrape counts once it is answered
		t.Errorf("%v requests counted, want %d", total, len(requests))
	}

	// Four generations on core-2-5-mini, none on core-2-5-pro.
	wantSample(t, fams, 4*5, "inferkit_prompt_tokens_total", "model", "core-2-5-mini")
	wantSample(t, fams, 4*3, "inferkit_cached_tokens_total", "model", "core-2-5-mini")
	wantSample(t, fams, 4*4, "inferkit_generated_tokens_total", "model", "core-2-5-mini")
	wantSample(t, fams, 0, "inferkit_prompt_tokens_total", "model", "core-2-5-pro")
	wantSample(t, fams, 3.0/5, "inferkit_prefix_cache_hit_ratio", "model", "core-2-5-mini")
	if _, ok := sample(fams, "inferkit_prefix_cache_hit_ratio", "model", "core-2-5-pro"); ok {
		t.Error("a hit ratio for a model without prompt tokens")
	}
	wantSample(t, fams, 4, "inferkit_time_to_first_token_seconds", "model", "core-2-5-mini")
	wantSample(t, fams, 4, "inferkit_time_per_output_token_seconds", "model", "core-2-5-mini")
	ttft := fams["inferkit_time_to_first_token_seconds"].GetMetric()
	for _, m := range ttft {
		if m.GetLabel()[0].GetValue() == "core-2-5-mini" {
			if got, want := m.GetHistogram().GetSampleSum(), 4*0.030; got < want-1e-9 || got > want+1e-9 {
				t.Errorf("TTFT sum %v, want %v (queue and prefill)", got, want)
			}
		}
	}
	tpot := fams["inferkit_time_per_output_token_seconds"].GetMetric()
	for _, m := range tpot {
		if m.GetLabel()[0].GetValue() == "core-2-5-mini" {
			if got, want := m.GetHistogram().GetSampleSum(), 4*0.010; got < want-1e-9 || got > want+1e-9 {
				t.Errorf("time per output token sum %v, want %v (decode over the tokens after the first)", got, want)
			}
		}
	}
	wantSample(t, fams, 3, "inferkit_queue_depth", "model", "core-2-5-mini")
	wantSample(t, fams, 2, "inferkit_active_sequences", "model", "core-2-5-mini")
	wantSample(t, fams, 4, "inferkit_sequences", "model", "core-2-5-mini")
	wantSample(t, fams, 1.5, "inferkit_model_load_seconds", "model", "core-2-5-mini")
	if _, ok := sample(fams, "inferkit_model_load_seconds", "model", "core-2-5-pro"); ok {
		t.Error("a load time for a model that reports none")
	}
}

// Two Handlers, each with its own registry, count only their own
// requests; a registry that already holds a Handler's metrics is refused.
func TestMetricsHandlersIsolated(t *testing.T) {
	a, b := metricsEnv(t, nil), metricsEnv(t, nil)
	for range 3 {
		if w := do(a.h, "POST", "/v1/chat/completions", key, chatBody); w.Code != 200 {
			t.Fatalf("a: %d %s", w.Code, w.Body)
		}
	}
	if w := do(b.h, "POST", "/v1/chat/completions", key, chatBody); w.Code != 200 {
		t.Fatalf("b: %d %s", w.Code, w.Body)
	}
	route := []string{"route", "POST /v1/chat/completions", "status", "200", "tier", "default"}
	wantSample(t, scrape(t, a.h), 3, "inferkit_http_requests_total", route...)
	wantSample(t, scrape(t, b.h), 1, "inferkit_http_requests_total", route...)
	wantSample(t, scrape(t, a.h), 3*5, "inferkit_prompt_tokens_total", "model", "core-2-5-mini")
	wantSample(t, scrape(t, b.h), 1*5, "inferkit_prompt_tokens_total", "model", "core-2-5-mini")

	reg := prometheus.NewRegistry()
	keys, _ := httpapi.NewStaticKeys(key)
	if _, err := httpapi.New(httpapi.Config{Engine: newFake(), Models: testCatalog(), Keys: keys, Metrics: reg}); err != nil {
		t.Fatal(err)
	}
	if _, err := httpapi.New(httpapi.Config{Engine: newFake(), Models: testCatalog(), Keys: keys, Metrics: reg}); err == nil {
		t.Error("a second Handler on the same registry: no error")
	}
}

// Without Config.Metrics there is no /metrics route; the health routes
// are there all the same.
func TestMetricsOff(t *testing.T) {
	e := newEnv(t, nil)
	if w := do(e.h, "GET", "/metrics", "", ""); w.Code != 404 {
		t.Errorf("GET /metrics without metrics: %d %s", w.Code, w.Body)
	}
	if w := do(e.h, "GET", "/metrics", key, ""); w.Code != 404 {
		t.Errorf("GET /metrics with a key, without metrics: %d %s", w.Code, w.Body)
	}
	if w := do(e.h, "GET", "/healthz", "", ""); w.Code != 200 {
		t.Errorf("GET /healthz without metrics: %d %s", w.Code, w.Body)
	}
}

// The operations routes take no key, are neither rate limited nor
// wrapped in the middleware, answer 405 to other methods, and /readyz
// follows Config.Ready.
func TestHealthAndReadiness(t *testing.T) {
	var notReady error
	tight := ratelimit.Tier{Name: "tight", Requests: 1}
	var wrapped int
	e := newEnv(t, func(cfg *httpapi.Config, _ *fakeEngine) {
		keys, _ := httpapi.NewTieredKeys(httpapi.APIKey{Key: key, Tier: tight})
		cfg.Keys, cfg.Limiter, cfg.Metrics = keys, ratelimit.NewMemory(), prometheus.NewRegistry()
		cfg.Ready = func() error { return notReady }
		cfg.Middleware = []func(http.Handler) http.Handler{func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { wrapped++; next.ServeHTTP(w, r) })
		}}
	})
	for range 3 {
		for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
			for _, k := range []string{"", wrongKey, key} {
				w := do(e.h, "GET", p, k, "")
				if w.Code != 200 {
					t.Fatalf("GET %s (key %q): %d %s", p, k, w.Code, w.Body)
				}
				if w.Header().Get("X-Ratelimit-Limit-Requests") != "" {
					t.Errorf("GET %s: rate-limit headers %v", p, w.Header())
				}
			}
		}
	}
	if w := do(e.h, "GET", "/healthz", "", ""); decode(t, w.Body.Bytes())["status"] != "ok" {
		t.Errorf("/healthz body %s", w.Body)
	}
	if w := do(e.h, "GET", "/readyz", "", ""); decode(t, w.Body.Bytes())["status"] != "ready" {
		t.Errorf("/readyz body %s", w.Body)
	}
	if wrapped != 0 {
		t.Errorf("the middleware wrapped %d operations requests", wrapped)
	}
	// The key's one request a minute is still there.
	if w := do(e.h, "POST", "/v1/chat/completions", key, chatBody); w.Code != 200 {
		t.Fatalf("chat after the probes: %d %s", w.Code, w.Body)
	}
	if w := do(e.h, "POST", "/v1/chat/completions", key, chatBody); w.Code != 429 {
		t.Fatalf("second chat: %d, want 429 (the limit applies to API routes)", w.Code)
	}

	notReady = errors.New("models loading")
	w := do(e.h, "GET", "/readyz", "", "")
	if w.Code != 503 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("/readyz not ready: %d %q %s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	if typ, code, _, msg := errorOf(t, w.Body.Bytes()); typ != "api_error" || code != "not_ready" || !strings.Contains(msg, "models loading") {
		t.Errorf("/readyz not ready body %s", w.Body)
	}
	if w := do(e.h, "GET", "/healthz", "", ""); w.Code != 200 {
		t.Errorf("/healthz while not ready: %d", w.Code)
	}

	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		w := do(e.h, "POST", p, "", "")
		if w.Code != 405 || w.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("POST %s: %d Allow %q", p, w.Code, w.Header().Get("Allow"))
		}
	}
	fams := scrape(t, e.h)
	wantSample(t, fams, 10, "inferkit_http_requests_total", "route", "GET /readyz", "status", "200", "tier", "none")
	wantSample(t, fams, 1, "inferkit_http_requests_total", "route", "GET /readyz", "status", "503", "tier", "none")
	wantSample(t, fams, 1, "inferkit_http_requests_total", "route", "POST /v1/chat/completions", "status", "429", "tier", "tight")
	wantSample(t, fams, 3, "inferkit_http_requests_total", "route", "unrouted", "status", "405", "tier", "none")
}

// Register leaves the operations routes out, so that a host keeps its
// own; RegisterOperations puts them on a caller's mux, here a separate
// one as for an internal listener, and they count on the same metrics.
func TestRegisterOperations(t *testing.T) {
	e := metricsEnv(t, nil)
	api, ops := http.NewServeMux(), http.NewServeMux()
	e.h.Register(api)
	api.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("mine")) })
	e.h.RegisterOperations(ops)
	if w := do(api, "GET", "/healthz", "", ""); w.Body.String() != "mine" {
		t.Errorf("the host's own /healthz: %d %s", w.Code, w.Body)
	}
	for _, p := range []string{"/readyz", "/metrics"} {
		if w := do(api, "GET", p, key, ""); w.Code != 404 {
			t.Errorf("GET %s on Register's mux: %d", p, w.Code)
		}
	}
	if w := do(api, "POST", "/v1/chat/completions", key, chatBody); w.Code != 200 {
		t.Fatalf("chat: %d %s", w.Code, w.Body)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if w := do(ops, "GET", p, "", ""); w.Code != 200 {
			t.Errorf("GET %s on RegisterOperations' mux: %d", p, w.Code)
		}
	}
	fams := scrape(t, ops)
	wantSample(t, fams, 1, "inferkit_http_requests_total", "route", "POST /v1/chat/completions", "status", "200", "tier", "default")
	wantSample(t, fams, 1, "inferkit_http_requests_total", "route", "GET /readyz", "status", "200", "tier", "none")
}

// A decision's input tokens count as its model's prompt tokens, under
// the route it came by.
func TestMetricsDecisions(t *testing.T) {
	small, _ := policy.Model(policy.SystemOne340M)
	small.Path = "/m/enc.gguf"
	keys, _ := httpapi.NewStaticKeys(key)
	h, err := httpapi.New(httpapi.Config{Engine: &scoringEngine{}, Models: []catalog.Model{{ID: "chat", Path: "/m/chat.gguf"}, small},
		Keys: keys, Metrics: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	var input float64
	for _, p := range []string{"/v1/system", "/v1/systemone"} {
		w := do(h, "POST", p, key, decisionBody)
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", p, w.Code, w.Body)
		}
		var res decision.Response
		if err := jsonUnmarshal(w.Body.Bytes(), &res); err != nil || res.Usage.InputTokens == 0 {
			t.Fatalf("%s: usage %+v, %v", p, res.Usage, err)
		}
		input += float64(res.Usage.InputTokens)
	}
	fams := scrape(t, h)
	wantSample(t, fams, input, "inferkit_prompt_tokens_total", "model", policy.SystemOne340M)
	wantSample(t, fams, 0, "inferkit_cached_tokens_total", "model", policy.SystemOne340M)
	wantSample(t, fams, 0, "inferkit_prompt_tokens_total", "model", "chat")
	wantSample(t, fams, 1, "inferkit_http_requests_total", "route", "POST /v1/systemone", "status", "200", "tier", "default")
	wantSample(t, fams, 1, "inferkit_http_requests_total", "route", "POST /v1/system", "status", "200", "tier", "default")
}
