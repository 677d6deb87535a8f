//go:build cgo

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/logtest"
)

// syncBuffer is a buffer written by the server's goroutines.
type syncBuffer = logtest.Buffer

// TestServeDemo starts the server as `make run` does, with no model and no
// key: it writes the demo model, prints a generated key once, serves every
// spec id with it, and shuts down when its context ends.
func TestServeDemo(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the demo model's directory
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var stderr, logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	o := options{threads: 1, parallel: 1, ctx: 512}
	go func() { done <- serve(ctx, o, ln, &stderr, slog.New(slog.NewTextHandler(&logs, nil))) }()

	base := "http://" + ln.Addr().String()
	var key string
	deadline := time.Now().Add(60 * time.Second)
	for key == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no key printed; stderr:\n%s\nlogs:\n%s", stderr.String(), logs.String())
		}
		if m := regexp.MustCompile(`sk-inferkit-\w+`).FindString(stderr.String()); m != "" {
			key = m
		}
		time.Sleep(10 * time.Millisecond)
	}
	get := func(method, path, k, body string) (int, []byte) {
		t.Helper()
		for {
			req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+k)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				if time.Now().After(deadline) {
					t.Fatal(err)
				}
				time.Sleep(20 * time.Millisecond)
				continue
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			return res.StatusCode, b
		}
	}
	status, body := get("GET", "/v1/models", key, "")
	var list struct {
		Data []struct {
			ID            string `json:"id"`
			ContextLength int    `json:"context_length"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil || status != 200 || len(list.Data) != len(specIDs)+1 || list.Data[0].ContextLength != 512 ||
		list.Data[len(specIDs)].ID != demoEmbeddingID {
		t.Fatalf("models: %d %s", status, body)
	}
	// The demo embeds under core-embed.
	status, body = get("POST", "/v1/embeddings", key, `{"model":"core-embed","input":["a sunny day","rain"]}`)
	if status != 200 || !strings.Contains(string(body), `"object":"embedding","index":1`) {
		t.Errorf("embeddings: %d %s", status, body)
	}
	status, body = get("POST", "/v1/chat/completions", key, `{"model":"core-3-flash","max_tokens":8,"messages":[{"role":"user","content":"Hi"}]}`)
	if status != 200 || !strings.Contains(string(body), `"object":"chat.completion"`) {
		t.Errorf("chat: %d %s", status, body)
	}
	// The demo's chat models read images; image URLs are not fetched
	// unless -fetch-images says so.
	img := base64.StdEncoding.EncodeToString(inferencetest.PNG(24, 24, 1))
	for body, want := range map[string]int{
		`{"model":"core-3-flash","max_tokens":4,"messages":[{"role":"user","content":[{"type":"text","text":"What is it?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + img + `"}}]}]}`: 200,
		`{"model":"core-3-flash","max_tokens":4,"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}]}`:                                              400,
	} {
		if status, b := get("POST", "/v1/chat/completions", key, body); status != want {
			t.Errorf("chat with an image: %d %s", status, b)
		}
	}
	// The demo serves the decision ids too, the multimodal ones with images.
	for _, req := range []string{
		`{"model":"system-one-9b","state":"A sunny day.","questions":{"q":{"type":"noul"}},"images":["data:image/png;base64,` + img + `"]}`,
		`{"model":"system-one-340m","state":"A sunny day.","questions":{"q":{"type":"choice","criteria":{"sun":"","rain":""}}}}`,
	} {
		if status, body := get("POST", "/v1/system", key, req); status != 200 || !strings.Contains(string(body), `"answers":{"q":`) {
			t.Errorf("decision: %d %s", status, body)
		}
	}
	if status, _ := get("GET", "/v1/models", "sk-wrong", ""); status != 401 {
		t.Errorf("wrong key: %d", status)
	}
	if status, _ := get("GET", "/healthz", "", ""); status != 200 {
		t.Errorf("healthz: %d", status)
	}
	if status, body := get("GET", "/readyz", "", ""); status != 200 || !strings.Contains(string(body), `"ready"`) {
		t.Errorf("readyz: %d %s", status, body)
	}
	// Metrics are on by default, and need no key: the two chat completions
	// answered 200 above are there, with the runtime's metrics.
	status, body = get("GET", "/metrics", "", "")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if status != 200 || err != nil {
		t.Fatalf("metrics: %d %v\n%s", status, err, body)
	}
	var chats float64
	for _, m := range fams["inferkit_http_requests_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["route"] == "POST /v1/chat/completions" && labels["status"] == "200" && labels["tier"] == "default" {
			chats += m.GetCounter().GetValue()
		}
	}
	if chats != 2 || fams["go_goroutines"] == nil || fams["inferkit_model_load_seconds"] == nil {
		t.Errorf("metrics: %v chat completions counted, want 2; go_goroutines %v; load times %v",
			chats, fams["go_goroutines"] != nil, fams["inferkit_model_load_seconds"] != nil)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no shutdown")
	}
	out := logs.String()
	if strings.Contains(out, key) || strings.Count(stderr.String(), key) != 1 {
		t.Errorf("the key was logged or printed more than once:\n%s", out)
	}
	for _, want := range []string{"TRAINED demo models", "RANDOM weights", "memory plan", "kv_mib=", "listening", "shutting down"} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %q:\n%s", want, out)
		}
	}
}
