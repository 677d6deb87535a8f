package codereview

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// MonthStats is an account's code-review analytics of one calendar month
// (UTC): what a Handler served it, and what its reviewers said of the
// comments. The zero value is a month with nothing counted.
type MonthStats struct {
	// Month is the month, as ratelimit.Month writes it ("2026-12").
	Month string
	// Reviews are the reviews finished; Summaries the summaries,
	// release notes and documentation; Failed the requests that ended
	// without a result.
	Reviews, Summaries, Failed int64
	// Comments are the comments of the month's reviews; Accepted and
	// Dismissed those the reviewers accepted or dismissed (feedback).
	Comments, Accepted, Dismissed int64
}

// Observation is what a Handler observed of one request, for LLM
// observability: its prompt's size, time, tokens and model.
type Observation struct {
	// ID is the review's id (cr_…).
	ID string
	// Kind is review, summary, release_notes or documentation.
	Kind  string
	Model string
	// Created is when it arrived, by the Handler's clock; Duration how
	// long it ran, by the wall clock.
	Created  time.Time
	Duration time.Duration
	// DiffBytes is the size of the diff it read.
	DiffBytes int
	// Generations, PromptTokens and OutputTokens are its generations
	// and their tokens, as the API counted them.
	Generations, PromptTokens, OutputTokens int
	// Files, Pieces, Comments and NotReviewed count the result's.
	Files, Pieces, Comments, NotReviewed int
	// Error is why it failed; "" for a result.
	Error string
}

// Analytics returns the code-review analytics of account (an
// account.Account's id) by month, the latest first, as the Handler's
// Store keeps them (three years). It is safe for concurrent use.
func (h *Handler) Analytics(ctx context.Context, account string) ([]MonthStats, error) {
	return h.ledger.months(ctx, "account:"+account)
}

// Observations returns the observations of account's latest requests
// (at most 200), the latest first. It is safe for concurrent use.
func (h *Handler) Observations(ctx context.Context, account string) ([]Observation, error) {
	return h.ledger.observations(ctx, "account:"+account)
}

// metrics are a Handler's Prometheus metrics: LLM observability across
// accounts, by kind and model.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	prompt   *prometheus.CounterVec
	output   *prometheus.CounterVec
	comments *prometheus.CounterVec
}

// newMetrics registers a Handler's metrics on reg.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	const ns, sub = "inferkit", "code_review"
	labels := []string{"kind", "model"}
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "requests_total",
			Help: "Code-review requests finished, by kind, model and outcome (ok or error)."}, []string{"kind", "model", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "duration_seconds",
			Help: "Time a code-review request ran, all its generations together.", Buckets: prometheus.ExponentialBuckets(0.1, 2, 12)}, labels),
		prompt: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "prompt_tokens_total",
			Help: "Prompt tokens of code-review generations."}, labels),
		output: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "output_tokens_total",
			Help: "Tokens code-review generations produced."}, labels),
		comments: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "comments_total",
			Help: "Inline comments of finished reviews."}, labels),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.prompt, m.output, m.comments} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observe counts o in the metrics. A failed request's model is a label
// only when it ran a generation: the model of a request refused before
// any may be a name the catalog does not know, and labels stay bounded.
func (m *metrics) observe(o Observation) {
	if m == nil {
		return
	}
	model, outcome := o.Model, "ok"
	if o.Error != "" {
		outcome = "error"
		if o.Generations == 0 {
			model = ""
		}
	}
	m.requests.WithLabelValues(o.Kind, model, outcome).Inc()
	m.duration.WithLabelValues(o.Kind, model).Observe(o.Duration.Seconds())
	m.prompt.WithLabelValues(o.Kind, model).Add(float64(o.PromptTokens))
	m.output.WithLabelValues(o.Kind, model).Add(float64(o.OutputTokens))
	m.comments.WithLabelValues(o.Kind, model).Add(float64(o.Comments))
}

// record observes a request that ended, in its owner's analytics and
// observations and in the metrics, and keeps a finished review for its
// comments' feedback. res is nil when it failed with err. A store that
// fails is logged: the answer has gone out already.
func (h *Handler) record(ctx context.Context, id, owner, repository string, req Request, created time.Time, started time.Time, res *Result, err error) {
	o := Observation{ID: id, Kind: cmp.Or(string(req.Kind), "review"), Model: req.Model, Created: created,
		Duration: time.Since(started), DiffBytes: len(req.Diff)}
	var k *kept
	if res != nil {
		o.Generations, o.PromptTokens, o.OutputTokens = res.Usage.Generations, res.Usage.PromptTokens, res.Usage.OutputTokens
		o.Files, o.Pieces, o.Comments, o.NotReviewed = res.Files, res.Pieces, len(res.Comments), len(res.NotReviewed)
		if req.Kind == KindReview {
			k = &kept{Repository: repository, System: systemPrompt(req), Comments: res.Comments}
		}
	} else {
		o.Error = "failed"
		if errors.Is(err, context.Canceled) {
			o.Error = "canceled"
		} else if err != nil {
			o.Error = clipText(err.Error(), 200)
		}
	}
	h.metrics.observe(o)
	if err := h.ledger.observe(context.WithoutCancel(ctx), owner, o, k); err != nil {
		h.log.LogAttrs(ctx, slog.LevelError, "codereview: recording a review failed", slog.String("review", id), slog.Any("error", err))
	}
}
