package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/inferkit/inferkit/formats"
)

// operationRoutes are the operators' routes: GET /healthz, GET /readyz
// and, with Config.Metrics, GET /metrics.
func (h *Handler) operationRoutes() []route {
	routes := []route{
		{"GET /healthz", formats.StyleChat, h.healthz, meterNone},
		{"GET /readyz", formats.StyleChat, h.readyz, meterNone},
	}
	if h.registry != nil {
		routes = append(routes, route{"GET /metrics", formats.StyleChat, h.serveMetrics().ServeHTTP, meterNone})
	}
	return routes
}

// RegisterOperations registers the operators' routes on mux: GET
// /healthz, GET /readyz and, when Config.Metrics is set, GET /metrics
// (HEAD too, as for every GET pattern of a ServeMux). They are meant for
// load balancers, orchestrators' probes and metrics scrapers: they take
// no API key, and neither Config.Limiter nor Config.Middleware applies to
// them. Their requests are logged at debug level, so that probes do not
// flood the log, and counted in the requests metric under tier "none".
// Keep them off the public network where that matters, for example by
// registering them on a separate mux and listener. Register leaves them
// out; ServeHTTP serves them.
//
// GET /healthz answers 200 {"status":"ok"} while the Handler serves.
// GET /readyz answers 200 {"status":"ready"} when the Handler can serve
// generations (see Config.Ready) and, with Config.Accounts, their store
// answers (account.Accounts.Check), else 503 with Retry-After and a JSON
// error body of code not_ready whose message says why: a Redis that is
// down takes the replica out of its load balancer until it is back.
func (h *Handler) RegisterOperations(mux *http.ServeMux) {
	for _, rt := range h.operationRoutes() {
		mux.Handle(rt.pattern, h.wrapOperation(rt))
	}
}

// wrapOperation puts an operators' route behind the access log (at debug
// level) and the body read deadline: no authentication, rate limits or
// middleware.
func (h *Handler) wrapOperation(rt route) http.Handler {
	debug := h.logs
	debug.Level = slog.LevelDebug
	return chain(rt.serve, ErrorStyle(rt.style), debug.Stage(rt.pattern), BodyDeadline(h.bodyTO))
}

// healthz serves GET /healthz: the process is up and the Handler answers.
func (h *Handler) healthz(w http.ResponseWriter, r *http.Request) {
	h.writeJSON(w, r, map[string]string{"status": "ok"})
}

// readyTimeout bounds the store check of GET /readyz.
const readyTimeout = 2 * time.Second

// readyz serves GET /readyz: 200 when Config.Ready reports no error (the
// engine, made before the Handler, has loaded its models) and the
// accounts' store answers (Accounts.Check, which also puts back what a
// store that lost its data lost), else 503 with Retry-After.
func (h *Handler) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	notReady := func(err error) {
		WriteError(w, r, &formats.Error{Status: http.StatusServiceUnavailable, Code: "not_ready",
			Message: "not ready: " + err.Error(), RetryAfter: UnavailableRetryAfter, Err: err})
	}
	if h.ready != nil {
		if err := h.ready(); err != nil {
			notReady(err)
			return
		}
	}
	if h.accounts != nil {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		err := h.accounts.Check(ctx)
		cancel()
		if err != nil {
			h.log.LogAttrs(r.Context(), slog.LevelWarn, "httpapi: not ready: the accounts' store", slog.Any("err", err))
			notReady(err)
			return
		}
	}
	h.writeJSON(w, r, map[string]string{"status": "ready"})
}
