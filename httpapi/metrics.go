package httpapi

import (
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// The metrics a Handler exports when Config.Metrics is set. Every name
// starts with inferkit_; model labels hold catalog ids (aliases resolve
// to their entry), so that their number is bounded by the catalog.
//
//	inferkit_http_requests_total{route,status,tier}      counter
//	inferkit_prompt_tokens_total{model}                  counter
//	inferkit_cached_tokens_total{model}                  counter
//	inferkit_generated_tokens_total{model}               counter
//	inferkit_drafted_tokens_total{model}                 counter
//	inferkit_accepted_draft_tokens_total{model}          counter
//	inferkit_prefix_cache_hit_ratio{model}               gauge
//	inferkit_time_to_first_token_seconds{model}          histogram
//	inferkit_time_per_output_token_seconds{model}        histogram
//	inferkit_queue_depth{model}                          gauge
//	inferkit_active_sequences{model}                     gauge
//	inferkit_sequences{model}                            gauge
//	inferkit_model_load_seconds{model}                   gauge
//
// route is the route's pattern, such as "POST /v1/chat/completions", or
// "unrouted" for a request no route serves (a 404 or 405); status is the
// status the access log records (499 for a client that went away); tier
// is the Name of the key's ratelimit.Tier ("default" for the zero Tier,
// "unnamed" for a Tier without a name), or "none" for a request that no
// key authenticated (a 401, an operations route, an unrouted request).
// The tiers' names should therefore be few, as the spec's are.
//
// The token counters add up the usage of every finished generation (the
// usage a response reports) and of every decision (its input tokens as
// prompt tokens, none cached); a generation that fails or whose client
// leaves counts no tokens. The hit ratio is the cached tokens over the
// prompt tokens since the Handler was made, absent until a model has had
// prompt tokens: rate(inferkit_cached_tokens_total) over
// rate(inferkit_prompt_tokens_total) gives it over a window.
//
// Time to first token is the time a generation waited for a sequence
// and prefilled its prompt (inference.Timings Queued and Prefill), for
// generations that produced a token; time per output token is the decode
// time over the tokens after the first, for generations of two tokens or
// more. Both are observed once per finished generation, after its
// response's usage is known: nothing is recorded per token.
//
// The queue, sequence and load gauges are read from the engine at each
// scrape (nothing updates them while requests run): queue depth, active
// sequences and sequences per model from a Stats method of the engine,
// when it has one (see Config.Metrics), and the load time from
// inference.ModelInfo.LoadTime, for models that report one. Their model
// label is the engine's entry id; catalog entries that share one model
// file share its queue and sequences, and each reports them, so a sum
// over models counts such a file once per entry. A remote model
// (catalog.Model.Remote) reports its requests in flight as active
// sequences, and each replica of its upstream by model and url: healthy,
// in flight, requests and failures.
const metricsNamespace = "inferkit"

// statser is the optional method of an Engine that reports its queues and
// sequences; *inference.Engine has it.
type statser interface {
	Stats() []inference.ModelStats
}

// metrics is a Handler's collector. Its per-model counters are made in
// New for every catalog model, and only their atomic values change: a
// request costs one label lookup for the request counter and, for a
// generation, a few atomic adds. It is safe for concurrent use; a nil
// *metrics records nothing.
type metrics struct {
	engine   Engine
	requests *prometheus.CounterVec
	ttft     *prometheus.HistogramVec
	tpot     *prometheus.HistogramVec
	models   map[string]*modelUsage // by catalog id; read-only after New
	ids      []string               // the keys of models, sorted

	prompt, cached, generated, ratio *prometheus.Desc
	searches, drafted, accepted      *prometheus.Desc
	queue, active, sequences, load   *prometheus.Desc
	// The replicas of remote models' upstreams, by model and URL.
	upHealthy, upActive, upServed, upFailed *prometheus.Desc
}

// modelUsage is the running totals of one catalog model.
type modelUsage struct {
	prompt, cached, generated atomic.Int64
	searches, drafted         atomic.Int64
	accepted                  atomic.Int64
	ttft, tpot                prometheus.Observer
}

// newMetrics returns the collector of a Handler serving models on engine.
func newMetrics(engine Engine, models []catalog.Model) *metrics {
	m := &metrics{
		engine: engine,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: metricsNamespace, Name: "http_requests_total",
			Help: "HTTP requests answered, by route pattern, status and rate-limit tier."}, []string{"route", "status", "tier"}),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: metricsNamespace, Name: "time_to_first_token_seconds",
			Help:    "Time from a generation's arrival in the engine's queue to its first token: queue wait and prefill.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}, []string{"model"}),
		tpot: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: metricsNamespace, Name: "time_per_output_token_seconds",
			Help:    "Decode time per generated token after the first, one observation per generation.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 13)}, []string{"model"}),
		models:    map[string]*modelUsage{},
		prompt:    desc("prompt_tokens_total", "Prompt tokens of finished generations and decisions."),
		cached:    desc("cached_tokens_total", "Prompt tokens served from the prefix cache without being decoded again."),
		generated: desc("generated_tokens_total", "Tokens generated, reasoning included."),
		ratio:     desc("prefix_cache_hit_ratio", "Cached prompt tokens over prompt tokens since the server started."),
		searches:  desc("web_searches_total", "Web searches that generations ran (their results count as prompt tokens)."),
		drafted:   desc("drafted_tokens_total", "Tokens drafted for the model to verify (speculative decoding)."),
		accepted:  desc("accepted_draft_tokens_total", "Drafted tokens the model accepted: generated tokens that saved a decode step."),
		queue:     desc("queue_depth", "Requests waiting for a free sequence of the model."),
		active:    desc("active_sequences", "Sequences of the model serving a request."),
		sequences: desc("sequences", "Sequences the model decodes at once."),
		load:      desc("model_load_seconds", "Time the engine took to load the model."),
		upHealthy: replicaDesc("upstream_healthy", "1 while a replica of a remote model's upstream takes requests, else 0."),
		upActive:  replicaDesc("upstream_in_flight", "Requests in flight on a replica of a remote model's upstream."),
		upServed:  replicaDesc("upstream_requests_total", "Requests a replica of a remote model's upstream started streaming."),
		upFailed:  replicaDesc("upstream_failures_total", "Requests that failed on a replica of a remote model's upstream."),
	}
	for _, cm := range models {
		m.models[cm.ID] = &modelUsage{ttft: m.ttft.WithLabelValues(cm.ID), tpot: m.tpot.WithLabelValues(cm.ID)}
		m.ids = append(m.ids, cm.ID)
	}
	slices.Sort(m.ids)
	return m
}

// replicaDesc describes a metric of one replica of a remote model.
func replicaDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(metricsNamespace, "", name), help, []string{"model", "url"}, nil)
}

func desc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(metricsNamespace, "", name), help, []string{"model"}, nil)
}

// Describe sends the descriptions of every metric.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	m.requests.Describe(ch)
	m.ttft.Describe(ch)
	m.tpot.Describe(ch)
	for _, d := range []*prometheus.Desc{m.prompt, m.cached, m.generated, m.ratio, m.searches, m.drafted, m.accepted, m.queue, m.active, m.sequences, m.load, m.upHealthy, m.upActive, m.upServed, m.upFailed} {
		ch <- d
	}
}

// Collect sends the current values: the counters and histograms, the
// ratios computed from the counters, and the engine's gauges read now.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	m.requests.Collect(ch)
	m.ttft.Collect(ch)
	m.tpot.Collect(ch)
	for _, id := range m.ids {
		u := m.models[id]
		prompt, cached := u.prompt.Load(), u.cached.Load()
		ch <- prometheus.MustNewConstMetric(m.prompt, prometheus.CounterValue, float64(prompt), id)
		ch <- prometheus.MustNewConstMetric(m.cached, prometheus.CounterValue, float64(cached), id)
		ch <- prometheus.MustNewConstMetric(m.generated, prometheus.CounterValue, float64(u.generated.Load()), id)
		ch <- prometheus.MustNewConstMetric(m.searches, prometheus.CounterValue, float64(u.searches.Load()), id)
		ch <- prometheus.MustNewConstMetric(m.drafted, prometheus.CounterValue, float64(u.drafted.Load()), id)
		ch <- prometheus.MustNewConstMetric(m.accepted, prometheus.CounterValue, float64(u.accepted.Load()), id)
		if prompt > 0 {
			ch <- prometheus.MustNewConstMetric(m.ratio, prometheus.GaugeValue, float64(cached)/float64(prompt), id)
		}
	}
	if s, ok := m.engine.(statser); ok {
		seen := map[string]bool{}
		for _, st := range s.Stats() {
			if seen[st.ID] {
				continue // a duplicate would fail the whole scrape
			}
			seen[st.ID] = true
			ch <- prometheus.MustNewConstMetric(m.queue, prometheus.GaugeValue, float64(st.Queued), st.ID)
			ch <- prometheus.MustNewConstMetric(m.active, prometheus.GaugeValue, float64(st.Active), st.ID)
			ch <- prometheus.MustNewConstMetric(m.sequences, prometheus.GaugeValue, float64(st.Sequences), st.ID)
			for _, r := range st.Replicas {
				healthy := 0.0
				if r.Healthy {
					healthy = 1
				}
				ch <- prometheus.MustNewConstMetric(m.upHealthy, prometheus.GaugeValue, healthy, st.ID, r.URL)
				ch <- prometheus.MustNewConstMetric(m.upActive, prometheus.GaugeValue, float64(r.InFlight), st.ID, r.URL)
				ch <- prometheus.MustNewConstMetric(m.upServed, prometheus.CounterValue, float64(r.Requests), st.ID, r.URL)
				ch <- prometheus.MustNewConstMetric(m.upFailed, prometheus.CounterValue, float64(r.Failures), st.ID, r.URL)
			}
		}
	}
	seen := map[string]bool{}
	for _, info := range m.engine.Models() {
		if info.LoadTime > 0 && !seen[info.ID] {
			seen[info.ID] = true
			ch <- prometheus.MustNewConstMetric(m.load, prometheus.GaugeValue, info.LoadTime.Seconds(), info.ID)
		}
	}
}

// request counts one answered request.
func (m *metrics) request(route string, status int, id Identity) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(route, strconv.Itoa(status), tierLabel(id)).Inc()
}

// CountRequest counts one answered request of route, a route that the
// Handler does not serve itself (such as the admin API's, of package
// httpapi/admin), in the requests metric of Config.Metrics (nothing
// without it), at id's tier ("none" for the zero Identity): it is an
// AccessLog.Observe. Safe for concurrent use.
func (h *Handler) CountRequest(route string, status int, id Identity) {
	h.metrics.request(route, status, id)
}

// tierLabel is the tier label of a request's identity.
func tierLabel(id Identity) string {
	switch {
	case id.KeyID == "":
		return "none"
	case id.Tier == (ratelimit.Tier{}):
		return policy.Default.Name
	case id.Tier.Name == "":
		return "unnamed"
	}
	return id.Tier.Name
}

// generation records a finished generation of catalog model id.
func (m *metrics) generation(id string, res *inference.Result) {
	if m == nil || res == nil {
		return
	}
	u := m.models[id]
	if u == nil {
		return
	}
	us, tm := res.Usage, res.Timings
	u.prompt.Add(int64(us.PromptTokens))
	u.cached.Add(int64(us.CachedTokens))
	u.generated.Add(int64(us.CompletionTokens))
	u.searches.Add(int64(us.WebSearches))
	u.drafted.Add(int64(us.DraftedTokens))
	u.accepted.Add(int64(us.AcceptedTokens))
	if us.CompletionTokens > 0 {
		u.ttft.Observe((tm.Queued + tm.Prefill).Seconds())
	}
	if us.CompletionTokens > 1 {
		u.tpot.Observe(tm.Decode.Seconds() / float64(us.CompletionTokens-1))
	}
}

// decision records an answered decision of catalog model id.
func (m *metrics) decision(id string, us decision.Usage) {
	if m == nil {
		return
	}
	if u := m.models[id]; u != nil {
		u.prompt.Add(int64(us.InputTokens))
		u.generated.Add(int64(us.OutputTokens))
	}
}

// observeGeneration records a generation that ended with res (nil when it
// ended without a result, which counts no tokens) under its catalog id.
func (h *Handler) observeGeneration(p *inference.Prepared, res *inference.Result) {
	if h.metrics == nil || res == nil {
		return
	}
	if m, ok := catalog.Lookup(h.models, p.Request.Model); ok {
		h.metrics.generation(m.ID, res)
	}
}

// serveMetrics serves GET /metrics: the Prometheus text format (or
// OpenMetrics, when the scraper asks for it) of Config.Metrics.
func (h *Handler) serveMetrics() http.Handler {
	return promhttp.HandlerFor(h.registry, promhttp.HandlerOpts{EnableOpenMetrics: true})
}
