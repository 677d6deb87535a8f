package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/inference/inferencetest"
)

// TestServeOnLibLlama serves, as `inferkit-server -backend libllama
// -libllama PATH` does, a qwen35 file with its multi-token-prediction
// block and a gemma4 file on the llama.cpp library that
// scripts/fetch-testdata.sh fetches: both chat, call tools, and answer
// decisions.
func TestServeOnLibLlama(t *testing.T) {
	lib := testLibrary(t)
	qwen := inferencetest.Model(t, inferencetest.Options{Arch: "qwen35", NextN: 1})
	gemma := inferencetest.Model(t, inferencetest.Options{Arch: "gemma4", SlidingWindow: 16})
	o, err := parseFlags([]string{"-backend", "libllama", "-libllama", lib, "-api-key", "sk-test", "-threads", "1", "-parallel", "1", "-ctx", "1024",
		"-model", "qwen=" + qwen, "-model", "gemma=" + gemma, "-decision-model", "qwen-decide=" + qwen, "-decision-model", "gemma-decide=" + gemma},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var stderr, logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, o, ln, &stderr, slog.New(slog.NewTextHandler(&logs, nil))) }()
	defer func() {
		cancel()
		<-done
	}()
	base := "http://" + ln.Addr().String()
	post := func(path, body string) (int, string) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer sk-test")
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil || res.StatusCode == http.StatusServiceUnavailable {
				if err == nil {
					res.Body.Close()
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: %v; logs:\n%s", path, err, logs.String())
				}
				time.Sleep(50 * time.Millisecond)
				continue
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			return res.StatusCode, string(b)
		}
	}
	for _, m := range []string{"qwen", "gemma"} {
		t.Run(m, func(t *testing.T) {
			if status, body := post("/v1/chat/completions", `{"model":"`+m+`","max_tokens":8,"messages":[{"role":"user","content":"Hi"}]}`); status != 200 || !strings.Contains(body, `"object":"chat.completion"`) {
				t.Errorf("chat: %d %s", status, body)
			}
			tools := `{"model":"` + m + `","max_tokens":600,"tool_choice":"required","messages":[{"role":"user","content":"Weather in Paris?"}],
				"tools":[{"type":"function","function":{"name":"weather","parameters":{"type":"object","properties":{"city":{"type":"string","enum":["Paris","Rome"]}},"required":["city"]}}}]}`
			if status, body := post("/v1/chat/completions", tools); status != 200 || !strings.Contains(body, `"tool_calls"`) || !strings.Contains(body, `"weather"`) {
				t.Errorf("tools: %d %s", status, body)
			}
			decision := `{"model":"` + m + `-decide","state":"The parcel arrived broken.","questions":{"refund":{"type":"noul"},"topic":{"type":"choice","criteria":{"shipping":"delivery","billing":"money"}}}}`
			if status, body := post("/v1/system", decision); status != 200 || !strings.Contains(body, `"refund"`) {
				t.Errorf("decision: %d %s", status, body)
			}
		})
	}
	if !strings.Contains(logs.String(), "backend=libllama") {
		t.Errorf("no model loaded on libllama; logs:\n%s", logs.String())
	}
}

// testLibrary returns the llama.cpp library that INFERKIT_LIBLLAMA
// names, or the one scripts/fetch-testdata.sh fetches, or skips the test
// when neither is there.
func testLibrary(tb testing.TB) string {
	tb.Helper()
	lib := os.Getenv("INFERKIT_LIBLLAMA")
	if lib == "" {
		lib = "../../.build/testdata/npm/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v0.4.0.so"
	}
	if _, err := os.Stat(lib); err != nil {
		tb.Skipf("skipping: no llama.cpp library at %s (scripts/fetch-testdata.sh fetches one)", lib)
	}
	return lib
}
