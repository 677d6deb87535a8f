package inference

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// The engine's spans (Config.TracerProvider), in OpenTelemetry's GenAI
// semantic conventions: one span per call, named for its operation and
// model ("chat qwen3"), with the phases of each generation below it
// (tracePhase*) and each search or tool call beside them.
//
// With no TracerProvider the engine holds no tracer, and every function
// here returns at a nil check: tracing off costs nothing.
const (
	tracerName = "github.com/inferkit/inferkit/inference"

	// The GenAI conventions' operation names.
	opChat      = "chat"
	opEmbed     = "embeddings"
	opTool      = "execute_tool"
	opScore     = "score"  // the conventions name none for it
	opRank      = "rerank" // nor for this
	providerKey = "inferkit"

	// Spans for the phases of one generation, children of its call's
	// span: the wait for a sequence, the prompt's prefill up to the first
	// token, and the decode from there to the end.
	spanQueue   = "inferkit.queue"
	spanPrefill = "inferkit.prefill"
	spanDecode  = "inferkit.decode"
	spanPrepare = "inferkit.prepare"
)

// traceCall starts the span of one call of the engine (op, on the model
// that req names) below ctx's span, and returns its context and the
// function that ends it with the call's usage and error. Off, it returns
// ctx and a function that does nothing.
func (e *Engine) traceCall(ctx context.Context, op, model string, attrs ...attribute.KeyValue) (context.Context, func(Usage, error)) {
	if e.tracer == nil {
		return ctx, func(Usage, error) {}
	}
	attrs = append(attrs,
		attribute.String("gen_ai.operation.name", op),
		attribute.String("gen_ai.provider.name", providerKey),
		attribute.String("gen_ai.request.model", model))
	ctx, span := e.tracer.Start(ctx, op+" "+model, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx, func(u Usage, err error) {
		span.SetAttributes(attribute.String("gen_ai.response.model", model),
			attribute.Int("gen_ai.usage.input_tokens", u.PromptTokens),
			attribute.Int("gen_ai.usage.cache_read.input_tokens", u.CachedTokens))
		if op == opChat {
			span.SetAttributes(attribute.Int("gen_ai.usage.output_tokens", u.CompletionTokens))
		}
		if u.WebSearches > 0 {
			span.SetAttributes(attribute.Int("inferkit.web_searches", u.WebSearches))
		}
		endSpan(span, err)
	}
}

// endSpan ends span, marked failed with err when err is not nil.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(attribute.String("error.type", errorType(err)))
	}
	span.End()
}

// errorType is the error.type attribute of a failed call: the kind of
// the engine's error, not its text.
func errorType(err error) string {
	for _, k := range []struct {
		err  error
		name string
	}{
		{ErrInvalidRequest, "invalid_request"}, {ErrContextLength, "context_length"},
		{ErrOverloaded, "overloaded"}, {ErrClosed, "closed"}, {ErrModelNotFound, "model_not_found"},
		{context.Canceled, "canceled"}, {context.DeadlineExceeded, "deadline_exceeded"},
	} {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return "_OTHER"
}

// traceGeneration is traceCall for a generation: it starts the call's
// span with the request's parameters, and wraps yield so that the span
// sees each choice's result (its finish reason and usage) and the error
// that ends the stream. The returned function ends the span.
func (e *Engine) traceGeneration(ctx context.Context, req Request, yield func(Event, error) bool) (context.Context, func(Event, error) bool, func()) {
	if e.tracer == nil {
		return ctx, yield, func() {}
	}
	attrs := []attribute.KeyValue{attribute.Int("gen_ai.request.choice.count", max(1, req.Choices))}
	if req.MaxTokens > 0 {
		attrs = append(attrs, attribute.Int("gen_ai.request.max_tokens", req.MaxTokens))
	}
	if req.Temperature != nil {
		attrs = append(attrs, attribute.Float64("gen_ai.request.temperature", *req.Temperature))
	}
	if req.TopP != nil {
		attrs = append(attrs, attribute.Float64("gen_ai.request.top_p", *req.TopP))
	}
	if req.TopK != nil {
		attrs = append(attrs, attribute.Int("gen_ai.request.top_k", *req.TopK))
	}
	if req.Seed != nil {
		attrs = append(attrs, attribute.Int64("gen_ai.request.seed", *req.Seed))
	}
	if len(req.Stop) > 0 {
		attrs = append(attrs, attribute.StringSlice("gen_ai.request.stop_sequences", req.Stop))
	}
	ctx, end := e.traceCall(ctx, opChat, req.Model, attrs...)
	var results []Result
	var failed error
	wrapped := func(ev Event, err error) bool {
		switch {
		case err != nil:
			failed = err
		case ev.Final != nil:
			results = append(results, *ev.Final)
		}
		return yield(ev, err)
	}
	return ctx, wrapped, func() {
		usage := ChoicesUsage(results, len(results))
		if len(results) == 1 {
			usage = results[0].Usage // with its searches
		}
		if len(results) > 0 {
			finishes := make([]string, len(results))
			for i, r := range results {
				finishes[i] = string(r.FinishReason)
			}
			trace.SpanFromContext(ctx).SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", finishes))
		}
		end(usage, failed)
	}
}

// tracePhases wraps the yield of one generation's jobs (a request, or
// one turn of a search) so that each choice's result records its
// phases as spans below ctx's: its queue, prefill and decode, from its
// Timings, ending when the result arrives.
func (e *Engine) tracePhases(ctx context.Context, yield func(Event, error) bool) func(Event, error) bool {
	if e.tracer == nil {
		return yield
	}
	return func(ev Event, err error) bool {
		if ev.Final != nil && err == nil {
			t := ev.Final.Timings
			end := time.Now()
			decode := end.Add(-t.Decode)
			prefill := decode.Add(-t.Prefill)
			queue := prefill.Add(-t.Queued)
			choice := attribute.Int("inferkit.choice", ev.Choice)
			u := ev.Final.Usage
			e.phase(ctx, spanQueue, queue, prefill, choice)
			e.phase(ctx, spanPrefill, prefill, decode, choice,
				attribute.Int("gen_ai.usage.input_tokens", u.PromptTokens),
				attribute.Int("gen_ai.usage.cache_read.input_tokens", u.CachedTokens))
			e.phase(ctx, spanDecode, decode, end, choice,
				attribute.Int("gen_ai.usage.output_tokens", u.CompletionTokens),
				attribute.Int("inferkit.drafted_tokens", u.DraftedTokens),
				attribute.Int("inferkit.accepted_tokens", u.AcceptedTokens),
				attribute.String("gen_ai.response.finish_reasons", string(ev.Final.FinishReason)))
		}
		return yield(ev, err)
	}
}

// phase records a span from start to end below ctx's.
func (e *Engine) phase(ctx context.Context, name string, start, end time.Time, attrs ...attribute.KeyValue) {
	_, span := e.tracer.Start(ctx, name, trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	span.End(trace.WithTimestamp(end))
}

// traceTool starts the span of a tool the engine runs for a request
// (a search, an MCP tool) below ctx's, and returns the function that
// ends it with the call's error.
func (e *Engine) traceTool(ctx context.Context, name, callID string, attrs ...attribute.KeyValue) (context.Context, func(error)) {
	if e.tracer == nil {
		return ctx, func(error) {}
	}
	attrs = append(attrs,
		attribute.String("gen_ai.operation.name", opTool),
		attribute.String("gen_ai.tool.name", name),
		attribute.String("gen_ai.tool.call.id", callID),
		attribute.String("gen_ai.tool.type", "extension"))
	ctx, span := e.tracer.Start(ctx, opTool+" "+name, trace.WithAttributes(attrs...))
	return ctx, func(err error) { endSpan(span, err) }
}

// tracePrepare starts the span of rendering and tokenizing a request,
// and returns the function that ends it.
func (e *Engine) tracePrepare(ctx context.Context, model string) func(error) {
	if e.tracer == nil {
		return func(error) {}
	}
	_, span := e.tracer.Start(ctx, spanPrepare, trace.WithAttributes(attribute.String("gen_ai.request.model", model)))
	return func(err error) { endSpan(span, err) }
}
