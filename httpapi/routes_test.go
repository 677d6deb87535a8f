package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/httpapi"
)

// unroutedCases are requests that no route serves, with the answer
// expected: the status, the Allow header of a 405, and whether the body
// takes the messages shape.
var unroutedCases = []struct {
	method, path string
	status       int
	allow        string
	messages     bool
}{
	{"GET", "/v1/nope", 404, "", false},
	{"GET", "/", 404, "", false},
	{"GET", "/v2/models", 404, "", false},
	{"POST", "/v1/chat/completions/extra", 404, "", false},
	{"POST", "/v1/messages/batches", 404, "", true},
	{"GET", "/v1/chat/completions", 405, "POST", false},
	{"DELETE", "/v1/web/chat/completions", 405, "POST", false},
	{"GET", "/v1/messages", 405, "POST", true},
	{"POST", "/v1/responses/resp_x", 405, "DELETE, GET, HEAD", false},
	{"PUT", "/v1/models", 405, "GET, HEAD", false},
	{"POST", "/v1/models/core-2-5-mini", 405, "GET, HEAD", false},
	{"GET", "/v1/system", 405, "POST", false},
	{"OPTIONS", "/v1/chat/completions", 405, "POST", false},
	// Unclean paths: a ServeMux would redirect them (307).
	{"GET", "//v1/models", 404, "", false},
	{"GET", "/v1//models", 404, "", false},
	{"GET", "/v1/../v1/models", 404, "", false},
	{"GET", "/v1/./models", 404, "", false},
	{"GET", "/v1/models/", 404, "", false},
	{"POST", "/v1/chat/completions/", 404, "", false},
	{"POST", "//v1/messages", 404, "", false},
	{"POST", "/v1/messages/", 404, "", true},
}

// checkUnrouted checks an answer to one of unroutedCases: a JSON error of
// the style's shape, never a redirect or plain text.
func checkUnrouted(t *testing.T, status int, header http.Header, body []byte, method string, wantStatus int, allow string, messages bool) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status %d, want %d (Location %q): %s", status, wantStatus, header.Get("Location"), body)
	}
	if ct := header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q: %s", ct, body)
	}
	if got := header.Get("Allow"); got != allow {
		t.Errorf("Allow %q, want %q", got, allow)
	}
	if method == "HEAD" {
		return
	}
	typ, code, _, msg := errorOf(t, body)
	switch {
	case messages && wantStatus == 404:
		if typ != "not_found_error" {
			t.Errorf("messages 404 type %q: %s", typ, body)
		}
	case messages:
		if typ != "invalid_request_error" {
			t.Errorf("messages %d type %q: %s", wantStatus, typ, body)
		}
	case wantStatus == 404:
		if typ != "invalid_request_error" || code != "not_found" {
			t.Errorf("404 type %q code %q: %s", typ, code, body)
		}
	default:
		if typ != "invalid_request_error" || code != "method_not_allowed" {
			t.Errorf("405 type %q code %q: %s", typ, code, body)
		}
	}
	if msg == "" {
		t.Errorf("no message: %s", body)
	}
}

// TestUnrouted checks that the Handler answers every request no route
// serves with a JSON error: called directly, served over HTTP, and
// mounted under a prefix with http.StripPrefix.
func TestUnrouted(t *testing.T) {
	e := newEnv(t, nil)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	direct := httptest.NewServer(e.h)
	defer direct.Close()
	prefixed := httptest.NewServer(http.StripPrefix("/llm", e.h))
	defer prefixed.Close()
	for _, tc := range unroutedCases {
		for _, k := range []string{key, ""} {
			name := fmt.Sprintf("%s %s key=%t", tc.method, tc.path, k != "")
			t.Run("ServeHTTP/"+name, func(t *testing.T) {
				w := do(e.h, tc.method, tc.path, k, "")
				checkUnrouted(t, w.Code, w.Header(), w.Body.Bytes(), tc.method, tc.status, tc.allow, tc.messages)
			})
			for _, srv := range []struct{ name, url string }{{"server", direct.URL}, {"prefix", prefixed.URL + "/llm"}} {
				t.Run(srv.name+"/"+name, func(t *testing.T) {
					req, err := http.NewRequest(tc.method, srv.url+tc.path, nil)
					if err != nil {
						t.Fatal(err)
					}
					if k != "" {
						req.Header.Set("Authorization", "Bearer "+k)
					}
					res, err := noRedirect.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					defer res.Body.Close()
					b, _ := io.ReadAll(res.Body)
					checkUnrouted(t, res.StatusCode, res.Header, b, tc.method, tc.status, tc.allow, tc.messages)
				})
			}
		}
	}
	// A HEAD of a route's path is served, as a GET, not refused.
	if w := do(e.h, "HEAD", "/v1/models", key, ""); w.Code != 200 {
		t.Errorf("HEAD /v1/models: %d", w.Code)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "path=/v1/nope status=404") || !strings.Contains(logs, "path=/v1/messages status=405") {
		t.Errorf("the access log lacks unrouted requests:\n%s", logs)
	}
}

// TestUnroutedOnCallersMux checks the documented way to get JSON errors
// on a caller's mux: the Handler mounted besides the registered routes.
func TestUnroutedOnCallersMux(t *testing.T) {
	e := newEnv(t, nil)
	mux := http.NewServeMux()
	e.h.Register(mux)
	mux.Handle("/v1/", e.h)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	for _, tc := range unroutedCases {
		if !isCleanForTest(tc.path) || !strings.HasPrefix(tc.path, "/v1/") {
			continue // the caller's mux redirects or answers these itself
		}
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			w := do(mux, tc.method, tc.path, key, "")
			checkUnrouted(t, w.Code, w.Header(), w.Body.Bytes(), tc.method, tc.status, tc.allow, tc.messages)
		})
	}
	if w := do(mux, "POST", "/v1/chat/completions", key, chatBody); w.Code != 200 {
		t.Errorf("a route on the caller's mux: %d %s", w.Code, w.Body)
	}
	if w := do(mux, "GET", "/healthz", "", ""); w.Code != 200 {
		t.Errorf("the caller's own route: %d", w.Code)
	}
}

// isCleanForTest reports whether a ServeMux serves p without redirecting.
func isCleanForTest(p string) bool {
	return !strings.Contains(p, "//") && !strings.Contains(p, "/./") && !strings.Contains(p, "/../")
}

// TestCancelledWhileQueued checks that a request whose client goes away
// while the engine holds it (queued, no output yet) is logged as a
// cancellation, status 499 at debug level, not as a server error.
func TestCancelledWhileQueued(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			e := newEnv(t, func(_ *httpapi.Config, f *fakeEngine) { f.pieces, f.block = nil, true })
			srv := httptest.NewServer(e.h)
			defer srv.Close()
			body := chatBody
			if stream {
				body = streaming(body)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/chat/completions", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			done := make(chan error, 1)
			go func() {
				res, err := http.DefaultClient.Do(req)
				if err == nil {
					res.Body.Close()
				}
				done <- err
			}()
			select {
			case <-e.eng.ctxs:
			case <-time.After(10 * time.Second):
				t.Fatal("the engine got no request")
			}
			cancel()
			if err := <-done; err == nil {
				t.Fatal("the client got an answer")
			}
			logs := waitLog(t, e.logs, "msg=\"httpapi: request\"")
			if !strings.Contains(logs, "path=/v1/chat/completions status=499") {
				t.Errorf("the access log does not record a cancellation:\n%s", logs)
			}
			if !strings.Contains(logs, "request cancelled by the client") {
				t.Errorf("the cancellation is not logged as such:\n%s", logs)
			}
			if strings.Contains(logs, "level=ERROR") || strings.Contains(logs, "status=500") {
				t.Errorf("a cancellation is logged as a server error:\n%s", logs)
			}
		})
	}
}

// waitLog waits for the logs to hold want, and returns them.
func waitLog(t *testing.T, logs *logBuffer, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := logs.String()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the logs never held %q:\n%s", want, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
