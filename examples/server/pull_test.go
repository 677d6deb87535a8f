//go:build cgo

package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/hub/hubtest"
)

// servePulling serves o until the test ends, and returns its base URL, a
// function that posts a chat request to it and its logs.
func servePulling(t *testing.T, o options) (chat func(model string) (int, string), logs *syncBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs = new(syncBuffer)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, o, ln, io.Discard, slog.New(slog.NewTextHandler(logs, nil))) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, logs.String())
		}
	})
	base := "http://" + ln.Addr().String()
	chat = func(model string) (int, string) {
		deadline := time.Now().Add(60 * time.Second)
		for {
			req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(`{"model":"`+model+`","max_tokens":4,"messages":[{"role":"user","content":"Hi"}]}`))
			req.Header.Set("Authorization", "Bearer "+o.keys[0])
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				if time.Now().After(deadline) {
					t.Fatalf("%v\n%s", err, logs.String())
				}
				time.Sleep(20 * time.Millisecond)
				continue
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			return res.StatusCode, string(b)
		}
	}
	return chat, logs
}

// tinyHub serves a tiny model, as org/tiny-GGUF's Q8_0, on a fake hub.
func tinyHub(t *testing.T) *hubtest.Hub {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := inferencetest.WriteModel(path, inferencetest.Options{Name: "tiny pulled model"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.New(t)
	h.Add("org/tiny-GGUF", map[string][]byte{"tiny-Q8_0.gguf": b, "tiny-Q4_K_M.gguf": b[:len(b)/2]})
	return h
}

// TestServePullsModel: -model ID=REF pulls the model at start, with
// progress lines, into -pull-dir, and serves it.
func TestServePullsModel(t *testing.T) {
	h := tinyHub(t)
	dir := t.TempDir()
	o, err := parseFlags([]string{"-model", "tiny=" + h.URL + "/org/tiny-GGUF:q8_0", "-pull-dir", dir, "-threads", "1", "-parallel", "1", "-ctx", "256"},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	o.keys = []string{"sk-pull-test-key"}
	chat, logs := servePulling(t, o)
	if status, body := chat("tiny"); status != 200 || !strings.Contains(body, `"object":"chat.completion"`) {
		t.Fatalf("chat: %d %s\n%s", status, body, logs.String())
	}
	for _, want := range []string{"inferkit-server: pulling", "percent=100", "inferkit-server: pulled", filepath.Join(dir, "org", "tiny-GGUF")} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs do not say %q:\n%s", want, logs.String())
		}
	}
}

// TestServeDefaultModel is make run's choice: the -default-model when the
// hub can be reached, under the chat ids; the same model from the cache
// when the hub has gone since; the random demo models, saying why, when it
// cannot be reached and the model was never pulled.
func TestServeDefaultModel(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the demo models' directory
	h := tinyHub(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	offline := "http://" + ln.Addr().String()
	ln.Close() // connection refused there
	dir := t.TempDir()
	for _, tc := range []struct {
		name, ref, want string
		before          func()
	}{
		{"reachable", h.URL + "/org/tiny-GGUF:Q8_0", "serving " + h.URL + "/org/tiny-GGUF:Q8_0 under the chat ids", nil},
		{"cached", h.URL + "/org/tiny-GGUF:Q8_0", "the hub cannot be reached; serving the model pulled before", h.Close},
		{"unreachable", offline + "/org/never-pulled-GGUF:Q8_0", "no -model given and the hub cannot be reached; serving the tiny TRAINED demo models, the chat model under the chat and multimodal decision ids", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				tc.before()
			}
			o := options{threads: 1, parallel: 1, ctx: 256, keys: []string{"sk-pull-test-key"}, defaultModel: tc.ref, pullDir: dir}
			chat, logs := servePulling(t, o)
			if status, body := chat("core-3-flash"); status != 200 {
				t.Fatalf("chat: %d %s\n%s", status, body, logs.String())
			}
			if !strings.Contains(logs.String(), tc.want) {
				t.Errorf("logs do not say %q:\n%s", tc.want, logs.String())
			}
		})
	}
}
