//go:build cgo

package httpapi_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// One streamed chat request, sent through the OpenAI SDK with a W3C
// traceparent, is one trace in the caller's: the server span, the
// admission, the preparation and the generation's span below it, and
// the generation's queue, prefill and decode below that, in that order
// and each within its parent, with the GenAI attributes of the request
// and its usage.
func TestTraceStreamedChat(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	m, _ := policy.Model(policy.Core25Mini)
	m.Path = tinyModel(t)
	models := []catalog.Model{m}
	url := serveEngine(t, inference.Config{Models: models, ContextTokens: 512, TracerProvider: tp},
		httpapi.Config{Models: models, Limiter: ratelimit.NewMemory(), TracerProvider: tp}, "")

	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	req := chatRequest("Tell me about cats.")
	req.MaxTokens = openai.Int(6)
	req.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	client := openaiSDK(url, key)
	stream := client.Chat.Completions.NewStreaming(context.Background(), req,
		option.WithHeader("traceparent", parent))
	var usage openai.CompletionUsage
	for stream.Next() {
		if c := stream.Current(); c.Usage.TotalTokens > 0 {
			usage = c.Usage
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()

	// The client has the whole stream before the handler returns and
	// its spans end: wait for the server span.
	var spans tracetest.SpanStubs
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		spans = exp.GetSpans()
		if slices.ContainsFunc(spans, func(s tracetest.SpanStub) bool { return s.Name == "POST /v1/chat/completions" }) || time.Now().After(deadline) {
			break
		}
	}
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		if s.SpanContext.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" {
			t.Errorf("span %q is in trace %s, not the caller's", s.Name, s.SpanContext.TraceID())
		}
		if _, dup := byName[s.Name]; dup {
			t.Errorf("span %q twice", s.Name)
		}
		byName[s.Name] = s
	}
	chat := "chat " + policy.Core25Mini
	// Each span, its parent, and the span it must start after ("" for
	// none).
	tree := []struct{ name, parent, after string }{
		{"POST /v1/chat/completions", "", ""},
		{"inferkit.prepare", "POST /v1/chat/completions", ""},
		{"inferkit.admission", "POST /v1/chat/completions", "inferkit.prepare"},
		{chat, "POST /v1/chat/completions", "inferkit.admission"},
		{"inferkit.queue", chat, ""},
		{"inferkit.prefill", chat, "inferkit.queue"},
		{"inferkit.decode", chat, "inferkit.prefill"},
	}
	for _, n := range tree {
		s, ok := byName[n.name]
		if !ok {
			t.Errorf("no span %q; the spans: %v", n.name, names(spans))
			continue
		}
		if n.parent == "" {
			if s.Parent.SpanID().String() != "b7ad6b7169203331" || !s.Parent.IsRemote() {
				t.Errorf("span %q's parent is %v, want the caller's span", n.name, s.Parent.SpanID())
			}
			if s.SpanKind != trace.SpanKindServer {
				t.Errorf("span %q is of kind %v, want server", n.name, s.SpanKind)
			}
			continue
		}
		p := byName[n.parent]
		if s.Parent.SpanID() != p.SpanContext.SpanID() {
			t.Errorf("span %q's parent is not %q", n.name, n.parent)
		}
		if s.StartTime.Before(p.StartTime) || s.EndTime.After(p.EndTime) {
			t.Errorf("span %q (%v to %v) is not within %q (%v to %v)", n.name, s.StartTime, s.EndTime, n.parent, p.StartTime, p.EndTime)
		}
		if a, ok := byName[n.after]; ok && s.StartTime.Before(a.EndTime) {
			t.Errorf("span %q starts at %v, before %q ends at %v", n.name, s.StartTime, n.after, a.EndTime)
		}
	}
	want := map[string]map[attribute.Key]attribute.Value{
		"POST /v1/chat/completions": {
			"http.request.method": attribute.StringValue("POST"), "http.route": attribute.StringValue("/v1/chat/completions"),
			"http.response.status_code": attribute.IntValue(200),
		},
		"inferkit.admission": {"inferkit.admitted": attribute.BoolValue(true)},
		chat: {
			"gen_ai.operation.name": attribute.StringValue("chat"), "gen_ai.request.model": attribute.StringValue(policy.Core25Mini),
			"gen_ai.request.max_tokens":      attribute.IntValue(6),
			"gen_ai.request.temperature":     attribute.Float64Value(0),
			"gen_ai.usage.input_tokens":      attribute.IntValue(int(usage.PromptTokens)),
			"gen_ai.usage.output_tokens":     attribute.IntValue(int(usage.CompletionTokens)),
			"gen_ai.response.finish_reasons": attribute.StringSliceValue([]string{"length"}),
		},
		"inferkit.decode": {"gen_ai.usage.output_tokens": attribute.IntValue(int(usage.CompletionTokens))},
	}
	for name, attrs := range want {
		got := map[attribute.Key]attribute.Value{}
		for _, kv := range byName[name].Attributes {
			got[kv.Key] = kv.Value
		}
		for k, v := range attrs {
			if got[k] != v {
				t.Errorf("span %q: %s = %v, want %v", name, k, got[k].Emit(), v.Emit())
			}
		}
	}
	if usage.CompletionTokens != 6 {
		t.Errorf("%d completion tokens, want 6", usage.CompletionTokens)
	}
}

// names lists the spans' names, for a failure's message.
func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return out
}
