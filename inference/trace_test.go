//go:build cgo

package inference_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// A request that searches is one span with its turns' phases and the
// search below it, in the order they ran: the first turn's queue,
// prefill and decode, the search (execute_tool web_search), then the
// second turn's. A request that fails ends its span failed, with the
// kind of its error.
func TestTraceSearchTurns(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	e := newEngine(t, inference.Config{Models: []catalog.Model{{ID: "tiny", Path: inferencetest.Model(t, inferencetest.Options{ContextLength: 4096})}},
		ContextTokens: 2048, Search: &fakeSearch{results: paris}, TracerProvider: tp})
	req := searchRequest(&inference.SearchOptions{Force: true, MaxSearches: 1})
	_, res := stream(t, e, req)
	if len(res.Searches) != 1 || res.Searches[0].Status != inference.SearchCompleted {
		t.Fatalf("searches %+v, want one completed", res.Searches)
	}

	spans := exp.GetSpans()
	var top tracetest.SpanStub
	for _, s := range spans {
		if s.Name == "chat tiny" {
			top = s
		}
	}
	var order []string
	for _, s := range spans {
		if s.Parent.SpanID() == top.SpanContext.SpanID() && top.SpanContext.IsValid() {
			order = append(order, s.Name)
		}
	}
	// Spans end in order; a phase span ends when its turn's result
	// arrives, so each turn's three end together, in this order.
	want := []string{"inferkit.prepare", "inferkit.queue", "inferkit.prefill", "inferkit.decode",
		"execute_tool web_search", "inferkit.queue", "inferkit.prefill", "inferkit.decode"}
	if !slices.Equal(order, want) {
		t.Fatalf("the spans below %q: %v, want %v", top.Name, order, want)
	}
	var search, decode tracetest.SpanStub
	for _, s := range spans {
		switch s.Name {
		case "execute_tool web_search":
			search = s
		case "inferkit.decode":
			if decode.Name == "" {
				decode = s // the first turn's
			}
		}
	}
	if search.StartTime.Before(decode.EndTime) {
		t.Errorf("the search started at %v, before the first turn's decode ended at %v", search.StartTime, decode.EndTime)
	}
	attrs := map[string]string{}
	for _, kv := range search.Attributes {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	if attrs["gen_ai.tool.name"] != "web_search" || attrs["gen_ai.tool.call.id"] == "" {
		t.Errorf("the search span's attributes %v", attrs)
	}
	for _, kv := range top.Attributes {
		if kv.Key == "inferkit.web_searches" && kv.Value.AsInt64() != 1 {
			t.Errorf("the request's span counts %d searches", kv.Value.AsInt64())
		}
	}

	exp.Reset()
	_, err := e.Generate(context.Background(), inference.Request{Model: "nonesuch", Prompt: "x"})
	if !errors.Is(err, inference.ErrModelNotFound) {
		t.Fatalf("err %v", err)
	}
	spans = exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "chat nonesuch" || spans[0].Status.Code.String() != "Error" {
		t.Fatalf("spans %+v, want one failed chat span", spans)
	}
	for _, kv := range spans[0].Attributes {
		if kv.Key == "error.type" && kv.Value.AsString() != "model_not_found" {
			t.Errorf("error.type %q", kv.Value.AsString())
		}
	}
}
