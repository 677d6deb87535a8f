package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
)

func TestRemoteFlags(t *testing.T) {
	env := map[string]string{"INFERKIT_REMOTE_KEY_SYSTEM_ONE_9B": "judge-key", "INFERKIT_REMOTE_KEY": "shared-key"}
	o, err := parseFlags([]string{
		"-remote-model", "core-2-5-mini=http://a:8000/v1,http://b:8000/v1#Qwen/Qwen3-8B",
		"-remote-model", "system-one-9b=http://c:11434/v1",
		"-remote-model", "mine=http://d/v1#m",
		"-remote-key", "core-2-5-mini=mini-key", "-remote-context", "core-2-5-mini=32768",
	}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id   string
		kind catalog.Kind
		r    catalog.Remote
	}{
		{"core-2-5-mini", catalog.KindChat, catalog.Remote{URLs: []string{"http://a:8000/v1", "http://b:8000/v1"}, Model: "Qwen/Qwen3-8B", Key: "mini-key", ContextLength: 32768}},
		{"system-one-9b", catalog.KindDecision, catalog.Remote{URLs: []string{"http://c:11434/v1"}, Key: "judge-key"}},
		{"mine", "", catalog.Remote{URLs: []string{"http://d/v1"}, Model: "m", Key: "shared-key"}},
	}
	if len(o.models) != len(want) {
		t.Fatalf("models %+v", o.models)
	}
	for i, w := range want {
		m := o.models[i]
		if m.ID != w.id || m.Kind != w.kind || m.Remote == nil || m.Path != "" || fmt.Sprint(*m.Remote) != fmt.Sprint(func() catalog.Remote {
			r := w.r
			if r.ContextLength == 0 {
				r.ContextLength = m.ContextLength // the spec's, or 0 for the default
			}
			return r
		}()) {
			t.Errorf("model %d: %+v %+v, want %+v", i, m, m.Remote, w)
		}
	}
	for _, args := range [][]string{
		{"-remote-model", "x"},
		{"-remote-model", "x=#m"},
		{"-remote-key", "x=k"},
		{"-remote-model", "x=http://a/v1", "-remote-context", "x=0"},
		{"-remote-model", "x=ftp://a"},
	} {
		o, err := parseFlags(args, func(string) string { return "" }, io.Discard)
		if err == nil {
			err = catalog.Validate(o.models)
		}
		if err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

// TestServeRemote runs the server with only a remote model, whose
// upstream is a fake OpenAI-compatible server: it lists the model,
// answers a chat from the upstream and names the upstream's failure.
func TestServeRemote(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer up-key" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/v1/models":
			io.WriteString(w, `{"data":[]}`)
		case "/v1/chat/completions":
			var body struct{ Model string }
			json.NewDecoder(r.Body).Decode(&body)
			if body.Model != "upstream-name" {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"from upstream"},"finish_reason":"stop"}]}`+"\n\n")
			io.WriteString(w, `data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2}}`+"\n\ndata: [DONE]\n\n")
		}
	}))
	defer up.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"-remote-model", "core-2-5-mini=" + up.URL + "/v1#upstream-name", "-remote-model", "broken=" + up.URL + "/v1",
		"-remote-key", "core-2-5-mini=up-key", "-remote-key", "broken=up-key", "-api-key", "sk-gw"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, o, ln, io.Discard, slog.New(slog.NewTextHandler(&logs, nil))) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, logs.String())
		}
	}()
	base := "http://" + ln.Addr().String()
	post := func(path, body string) (int, string) {
		t.Helper()
		res, b := call(t, http.DefaultClient, http.MethodPost, base+path, "sk-gw", body)
		return res.StatusCode, string(b)
	}
	status, body := post("/v1/chat/completions", `{"model":"core-2-5-mini","messages":[{"role":"user","content":"hi"}]}`)
	if status != 200 || !strings.Contains(body, `"content":"from upstream"`) || !strings.Contains(body, `"prompt_tokens":12`) {
		t.Fatalf("%d %s", status, body)
	}
	status, body = post("/v1/chat/completions", `{"model":"broken","messages":[{"role":"user","content":"hi"}]}`)
	if status != http.StatusBadGateway || !strings.Contains(body, "upstream_error") {
		t.Fatalf("%d %s", status, body)
	}
}
