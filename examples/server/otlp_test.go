//go:build cgo

package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// With -otlp, the server sends the spans of a request to an OTLP/HTTP
// collector (here a fake one that decodes what it receives), as the
// service inferkit-server: the HTTP span and the engine's below it,
// the last of them when the server shuts down.
func TestServeExportsTraces(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var mu sync.Mutex
	var spans, services []string
	coll := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req collector.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
			t.Errorf("the collector got %s %s (%s), %d bytes", r.Method, r.URL.Path, r.Header.Get("Content-Type"), len(body))
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.Resource.GetAttributes() {
				if kv.Key == "service.name" {
					services = append(services, kv.Value.GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans = append(spans, s.Name)
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&collector.ExportTraceServiceResponse{})
		w.Write(b)
	}))
	defer coll.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var stderr, logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o, err := parseFlags([]string{"-otlp", coll.URL, "-threads", "1", "-parallel", "1", "-ctx", "512"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serve(ctx, o, ln, &stderr, slog.New(slog.NewTextHandler(&logs, nil))) }()
	var key string
	deadline := time.Now().Add(60 * time.Second)
	for key == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no key printed; logs:\n%s", logs.String())
		}
		key = regexp.MustCompile(`sk-inferkit-\w+`).FindString(stderr.String())
		time.Sleep(10 * time.Millisecond)
	}
	body := `{"model":"core-3-flash","max_tokens":4,"stream":true,"messages":[{"role":"user","content":"Hi"}]}`
	res, b := call(t, http.DefaultClient, http.MethodPost, "http://"+ln.Addr().String()+"/v1/chat/completions", key, body)
	if res.StatusCode != 200 || !strings.Contains(string(b), "data: [DONE]") {
		t.Fatalf("chat: %d %s", res.StatusCode, b)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"POST /v1/chat/completions", "inferkit.prepare", "inferkit.admission", "chat core-3-flash", "inferkit.queue", "inferkit.prefill", "inferkit.decode"} {
		if !slices.Contains(spans, want) {
			t.Errorf("the collector has no span %q; it has %v", want, spans)
		}
	}
	if len(services) == 0 || slices.ContainsFunc(services, func(s string) bool { return s != "inferkit-server" }) {
		t.Errorf("services %v, want inferkit-server", services)
	}
}
