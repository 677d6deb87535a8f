//go:build cgo

package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeStore runs the server twice on one -store file and one
// -accounts file: a response stored by the first run is served by the
// second.
func TestServeStore(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the demo model's directory
	// The responses belong to the key's id, which lasts across restarts
	// with the accounts' file (where the secret it derives from is).
	dir := t.TempDir()
	o := options{threads: 1, parallel: 1, ctx: 256, keys: []string{"sk-test-store"},
		store: filepath.Join(dir, "responses.db"), accounts: filepath.Join(dir, "accounts.db")}

	// run serves o until stop returns, calling use with the base URL.
	run := func(use func(base string)) {
		t.Helper()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var logs syncBuffer
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- serve(ctx, o, ln, io.Discard, slog.New(slog.NewTextHandler(&logs, nil))) }()
		use("http://" + ln.Addr().String())
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("serve: %v\n%s", err, logs.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no shutdown")
		}
		if !strings.Contains(logs.String(), "keeping stored responses in a file") {
			t.Errorf("logs do not name the store:\n%s", logs.String())
		}
	}
	do := func(base, method, path, body string) (int, map[string]any) {
		t.Helper()
		res, b := call(t, http.DefaultClient, method, base+path, "sk-test-store", body)
		var v map[string]any
		json.Unmarshal(b, &v)
		return res.StatusCode, v
	}

	var id, text string
	run(func(base string) {
		status, r := do(base, "POST", "/v1/responses", `{"model":"core-3-flash","max_output_tokens":8,"input":"Hi"}`)
		id, _ = r["id"].(string)
		text, _ = r["output_text"].(string)
		if status != 200 || id == "" {
			t.Fatalf("POST: %d %v", status, r)
		}
	})
	run(func(base string) {
		if status, r := do(base, "GET", "/v1/responses/"+id, ""); status != 200 || r["id"] != id || r["output_text"] != text {
			t.Errorf("GET after a restart: %d %v", status, r)
		}
		body := `{"model":"core-3-flash","max_output_tokens":8,"previous_response_id":"` + id + `","input":"Again"}`
		if status, r := do(base, "POST", "/v1/responses", body); status != 200 {
			t.Errorf("continuing after a restart: %d %v", status, r)
		}
	})
}
