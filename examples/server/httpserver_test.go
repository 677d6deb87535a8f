package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
)

// noEngine serves no model.
type noEngine struct{}

func (noEngine) Prepare(context.Context, inference.Request) (*inference.Prepared, error) {
	return nil, errors.New("no engine")
}

func (noEngine) Run(context.Context, *inference.Prepared) iter.Seq2[inference.Event, error] {
	return func(yield func(inference.Event, error) bool) { yield(inference.Event{}, errors.New("no engine")) }
}

func (noEngine) Models() []inference.ModelInfo              { return nil }
func (noEngine) CountTokens(inference.Request) (int, error) { return 0, nil }

// TestNewServer checks the server that serve runs: its timeouts leave
// long bodies and streams alone, /healthz, /readyz and /metrics answer,
// and every other path
// reaches the API, unclean ones included, for a JSON answer rather than
// a ServeMux's redirect or plain text.
func TestNewServer(t *testing.T) {
	keys, err := httpapi.NewStaticKeys("sk-test")
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{Engine: noEngine{}, Keys: keys, Logger: slog.New(slog.DiscardHandler), Metrics: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(api, slog.New(slog.DiscardHandler))
	if srv.ReadHeaderTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Errorf("ReadHeaderTimeout %v, IdleTimeout %v: a silent client holds its connection", srv.ReadHeaderTimeout, srv.IdleTimeout)
	}
	if srv.ReadTimeout != 0 || srv.WriteTimeout != 0 {
		t.Errorf("ReadTimeout %v, WriteTimeout %v: they would cut long bodies or streams", srv.ReadTimeout, srv.WriteTimeout)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	for _, tc := range []struct {
		method, path string
		status       int
		json         bool
	}{
		{"GET", "/healthz", 200, true},
		{"HEAD", "/healthz", 200, false},
		{"GET", "/readyz", 200, true},
		{"GET", "/metrics", 200, false},
		{"POST", "/metrics", 405, true},
		{"GET", "/v1/models", 200, true},
		{"GET", "/v1/nope", 404, true},
		{"GET", "//v1/models", 404, true},
		{"GET", "/v1/../v1/models", 404, true},
		{"GET", "/v1/chat/completions", 405, true},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, base+tc.path, nil)
			req.Header.Set("Authorization", "Bearer sk-test")
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (Location %q): %s", res.StatusCode, tc.status, res.Header.Get("Location"), b)
			}
			if tc.json && (res.Header.Get("Content-Type") != "application/json" || !json.Valid(b)) {
				t.Errorf("not JSON: %s %s", res.Header.Get("Content-Type"), b)
			}
		})
	}

	// A client without a key that announces a body and never sends it
	// gets its 401 at once, and its connection closed.
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: test\r\nContent-Length: 100000\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, &http.Request{Method: "POST"})
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("status %d", res.StatusCode)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("the connection was not closed after the 401: %v", err)
	}
	if !res.Close {
		t.Errorf("the 401 does not say Connection: close")
	}
}
