package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/inferkit/inferkit/ratelimit"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The Handler's spans (Config.TracerProvider): one server span per
// request of a route, in OpenTelemetry's HTTP semantic conventions,
// continuing the trace that the request's W3C traceparent header names,
// and below it the admission (spanAdmission) of routes with rate limits.
// The engine's spans, when it traces (inference.Config.TracerProvider),
// go below the server span: the request's context carries it.
const (
	tracerName    = "github.com/inferkit/inferkit/httpapi"
	spanAdmission = "inferkit.admission"
)

// traceContext reads a request's W3C trace context (traceparent and
// tracestate headers).
var traceContext = propagation.TraceContext{}

// traceStage returns the stage that makes a request of route (a route's
// pattern: "POST /v1/chat/completions") a server span; nil when the
// Handler does not trace.
func (h *Handler) traceStage(route string) func(http.Handler) http.Handler {
	if h.tracer == nil {
		return nil
	}
	path := route[strings.IndexByte(route, ' ')+1:]
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := traceContext.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
			ctx, span := h.tracer.Start(ctx, route, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
				attribute.String("http.request.method", r.Method),
				attribute.String("http.route", path),
				attribute.String("url.path", r.URL.Path),
				attribute.String("url.scheme", scheme(r)),
				attribute.String("user_agent.original", r.UserAgent())))
			defer span.End()
			rec := &recorder{ResponseWriter: w}
			next.ServeHTTP(rec, r.WithContext(ctx))
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			span.SetAttributes(attribute.Int("http.response.status_code", status))
			if id, ok := IdentityFrom(ctx); ok && id.KeyID != "" {
				span.SetAttributes(attribute.String("inferkit.key_id", id.KeyID))
			}
			if status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(status))
				span.SetAttributes(attribute.String("error.type", http.StatusText(status)))
			}
		})
	}
}

// scheme is the scheme a request came in on.
func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// traceAdmission starts the span of a reservation of the rate limiter,
// and returns the function that ends it with the limiter's answer; off,
// it does nothing.
func (h *Handler) traceAdmission(ctx context.Context) func(error) {
	if h.tracer == nil {
		return func(error) {}
	}
	_, span := h.tracer.Start(ctx, spanAdmission)
	return func(err error) {
		var refused *ratelimit.Error
		switch {
		case err == nil:
			span.SetAttributes(attribute.Bool("inferkit.admitted", true))
		case errors.As(err, &refused):
			span.SetAttributes(attribute.Bool("inferkit.admitted", false), attribute.String("inferkit.ratelimit.limit", refused.Limit))
		default:
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}
