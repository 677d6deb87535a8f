package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/policy"
)

// slowEngine is a fakeEngine whose events come every delay.
type slowEngine struct {
	*fakeEngine
	delay time.Duration
}

func (s slowEngine) Run(ctx context.Context, p *inference.Prepared) iter.Seq2[inference.Event, error] {
	return func(yield func(inference.Event, error) bool) {
		for ev, err := range s.fakeEngine.Run(ctx, p) {
			select {
			case <-time.After(s.delay):
			case <-ctx.Done():
				yield(inference.Event{}, ctx.Err())
				return
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// rawRequest opens a connection to srv and writes the head of a request
// and the first part of its body, and no more: a stalled client. Its
// reads fail after limit, so that a server that waits for ever fails the
// test instead of hanging it.
func rawRequest(t *testing.T, srv *httptest.Server, method, path, k string, length int, part string, limit time.Duration) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", method, path, length)
	if k != "" {
		head += "Authorization: Bearer " + k + "\r\n"
	}
	if _, err := io.WriteString(conn, head+"\r\n"+part); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(limit))
	return conn, bufio.NewReader(conn)
}

// readAnswer reads one response from br and checks that the server then
// closes the connection, both before the connection's read deadline.
func readAnswer(t *testing.T, br *bufio.Reader, method string) (*http.Response, []byte) {
	t.Helper()
	res, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("no answer in time: %v", err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatalf("reading the answer's body: %v", err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("the server did not close the connection after its answer: %v", err)
	}
	return res, body
}

// TestSlowBody checks that a client that stalls its request body, key
// or no key, is answered and its connection closed within the body read
// timeout, not held for minutes.
func TestSlowBody(t *testing.T) {
	// With and without rate limits: the limiter must not turn the 408 of
	// a request whose connection read failed into a server error.
	for _, limited := range []bool{false, true} {
		t.Run(map[bool]string{false: "unlimited", true: "limited"}[limited], func(t *testing.T) { slowBody(t, limited) })
	}
}

func slowBody(t *testing.T, limited bool) {
	const timeout = 200 * time.Millisecond
	edit := func(c *httpapi.Config, _ *fakeEngine) { c.BodyReadTimeout = timeout }
	e := newEnv(t, edit)
	if limited {
		e = limitedEnv(t, policy.Default, edit)
	}
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	for _, tc := range []struct {
		path  string
		style formats.Style
	}{
		{"/v1/chat/completions", formats.StyleChat},
		{"/v1/messages", formats.StyleMessages},
		{"/v1/responses", formats.StyleResponses},
		{"/v1/system", formats.StyleChat}, // its handler decodes as it reads
	} {
		t.Run(tc.path, func(t *testing.T) {
			start := time.Now()
			_, br := rawRequest(t, srv, "POST", tc.path, key, 1000, `{"model":"core-2-5-mini","mess`, 5*time.Second)
			res, body := readAnswer(t, br, "POST")
			if took := time.Since(start); took < timeout || took > timeout+3*time.Second {
				t.Errorf("answered after %v, with a timeout of %v", took, timeout)
			}
			if res.StatusCode != http.StatusRequestTimeout {
				t.Fatalf("status %d: %s", res.StatusCode, body)
			}
			typ, code, _, msg := errorOf(t, body)
			if tc.style == formats.StyleMessages {
				if typ != "invalid_request_error" || !strings.Contains(msg, "did not arrive") {
					t.Errorf("messages 408: %s", body)
				}
			} else if typ != "invalid_request_error" || code != "request_timeout" {
				t.Errorf("408 type %q code %q: %s", typ, code, body)
			}
		})
	}
	if e.eng.calls() != 0 {
		t.Errorf("the engine ran %d requests without a body", e.eng.calls())
	}
	if logs := e.logs.String(); strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "status=408") {
		t.Errorf("the logs do not record a 408 as a client error:\n%s", logs)
	}
}

// TestRefusalSkipsBody checks that a request refused before its body is
// read (no key, a wrong key, an unknown path) is answered at once, and
// its connection closed at once rather than held while the server
// waits for a body the client never sends: under the default body
// timeout of 30 s.
func TestRefusalSkipsBody(t *testing.T) {
	e := newEnv(t, nil)
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	for _, tc := range []struct {
		name, method, path, key string
		status                  int
	}{
		{"no key", "POST", "/v1/chat/completions", "", 401},
		{"wrong key", "POST", "/v1/messages", wrongKey, 401},
		{"no key, GET with a body", "GET", "/v1/models", "", 401},
		{"unknown path", "POST", "/v1/nope", key, 404},
		{"wrong method", "PUT", "/v1/chat/completions", key, 405},
		{"unclean path", "POST", "//v1/chat/completions", key, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, br := rawRequest(t, srv, tc.method, tc.path, tc.key, 100000, "", 3*time.Second)
			res, body := readAnswer(t, br, tc.method)
			if res.StatusCode != tc.status {
				t.Fatalf("status %d: %s", res.StatusCode, body)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("answered and closed after %v", took)
			}
			if !res.Close {
				t.Errorf("the answer does not say Connection: close")
			}
		})
	}
	// Without a body there is nothing to wait for: the connection stays.
	t.Run("no key, no body", func(t *testing.T) {
		conn, br := rawRequest(t, srv, "GET", "/v1/models", "", 0, "", 3*time.Second)
		res, err := http.ReadResponse(br, &http.Request{Method: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 401 || res.Close {
			t.Fatalf("status %d, close %t", res.StatusCode, res.Close)
		}
		fmt.Fprintf(conn, "GET /v1/models HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer %s\r\n\r\n", key)
		if res, err := http.ReadResponse(br, &http.Request{Method: "GET"}); err != nil || res.StatusCode != 200 {
			t.Fatalf("the connection was not kept: %v", err)
		}
	})
}

// TestStreamOutlivesBodyTimeout checks that the body read timeout ends
// with the body: a stream that lasts longer than it is not cut, and a
// kept-alive connection idle for longer than it still serves.
func TestStreamOutlivesBodyTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	e := newEnv(t, func(c *httpapi.Config, f *fakeEngine) {
		c.BodyReadTimeout = timeout
		f.pieces = []string{"a", "b", "c", "d", "e"}
		c.Engine = slowEngine{fakeEngine: f, delay: timeout / 2}
	})
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	client := srv.Client()
	for i := range 2 {
		start := time.Now()
		req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", strings.NewReader(streaming(chatBody)))
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("request %d: %d %v: %s", i, res.StatusCode, err, b)
		}
		if !strings.Contains(string(b), "data: [DONE]") || strings.Count(string(b), `"delta":{"content":"`) != 5 {
			t.Fatalf("request %d: the stream was cut:\n%s", i, b)
		}
		if took := time.Since(start); took < 2*timeout {
			t.Fatalf("the stream took %v, no longer than the body timeout", took)
		}
		time.Sleep(timeout + timeout/2) // idle on the kept-alive connection
	}
	if logs := e.logs.String(); strings.Count(logs, "status=200") != 2 {
		t.Errorf("logs:\n%s", logs)
	}
}
