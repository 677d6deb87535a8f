package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// replicaServer is a fake replica: it answers health checks while up,
// and streams one chunk naming itself, after hold is closed (nil: at
// once).
type replicaServer struct {
	*httptest.Server
	name  string
	up    atomic.Bool
	chats atomic.Int64
	hold  chan struct{}
}

func newReplica(t *testing.T, name string) *replicaServer {
	r := &replicaServer{name: name}
	r.up.Store(true)
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !r.up.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		switch req.URL.Path {
		case "/v1/models":
			io.WriteString(w, `{"data":[]}`)
		case "/v1/chat/completions":
			r.chats.Add(1)
			if r.hold != nil {
				<-r.hold
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\ndata: [DONE]\n\n", r.name)
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func newPool(t *testing.T, cfg Config, replicas ...*replicaServer) *Pool {
	t.Helper()
	for _, r := range replicas {
		cfg.URLs = append(cfg.URLs, r.URL+"/v1")
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// answer runs one chat on p and returns the name of the replica that
// answered.
func answer(ctx context.Context, p *Pool, prefix string) (string, error) {
	var got string
	for c, err := range p.Chat(ctx, ChatRequest{Model: "m"}, prefix) {
		if err != nil {
			return got, err
		}
		for _, ch := range c.Choices {
			got += ch.Delta.Content
		}
	}
	return got, nil
}

// TestAffinity: requests that share a prompt prefix go to one replica,
// and different prefixes spread over both.
func TestAffinity(t *testing.T) {
	a, b := newReplica(t, "a"), newReplica(t, "b")
	p := newPool(t, Config{}, a, b)
	seen := map[string]string{}
	for round := range 3 {
		for i := range 16 {
			prefix := fmt.Sprintf("system prompt %d", i)
			got, err := answer(context.Background(), p, prefix)
			if err != nil {
				t.Fatal(err)
			}
			if round > 0 && seen[prefix] != got {
				t.Fatalf("prefix %d went to %s, then to %s", i, seen[prefix], got)
			}
			seen[prefix] = got
		}
	}
	if a.chats.Load() == 0 || b.chats.Load() == 0 {
		t.Fatalf("16 prefixes all on one replica: a %d, b %d", a.chats.Load(), b.chats.Load())
	}
}

// TestLeastLoaded: past AffinitySlack requests in flight beyond the
// least loaded replica, a prefix's own replica is passed over.
func TestLeastLoaded(t *testing.T) {
	a, b := newReplica(t, "a"), newReplica(t, "b")
	a.hold, b.hold = make(chan struct{}), make(chan struct{})
	p := newPool(t, Config{AffinitySlack: 2}, a, b)
	// Find the replica of one prefix with nothing in flight.
	order := p.order("x")
	home := order[0].base
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { answer(context.Background(), p, "x") })
	}
	deadline := time.Now().Add(5 * time.Second)
	for a.chats.Load()+b.chats.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	// Two held on home (within the slack of 2), the third elsewhere.
	st := p.Status()
	var homeLoad, otherLoad int
	for _, s := range st {
		if s.URL == home {
			homeLoad = s.InFlight
		} else {
			otherLoad = s.InFlight
		}
	}
	if homeLoad != 2 || otherLoad != 1 {
		t.Errorf("in flight: %d on the prefix's replica, %d on the other, want 2 and 1", homeLoad, otherLoad)
	}
	close(a.hold)
	close(b.hold)
	wg.Wait()
}

// TestHealth: a replica that fails its health check gets no requests
// until it passes one again; with none healthy, Chat fails at once with
// a retry time.
func TestHealth(t *testing.T) {
	a, b := newReplica(t, "a"), newReplica(t, "b")
	p := newPool(t, Config{HealthInterval: 20 * time.Millisecond}, a, b)
	wait := func(healthy ...bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			st := p.Status()
			if st[0].Healthy == healthy[0] && st[1].Healthy == healthy[1] {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("status %+v, want healthy %v", st, healthy)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	a.up.Store(false)
	wait(false, true)
	for i := range 10 {
		if got, err := answer(context.Background(), p, fmt.Sprint(i)); err != nil || got != "b" {
			t.Fatalf("answered by %q: %v", got, err)
		}
	}
	b.up.Store(false)
	wait(false, false)
	_, err := answer(context.Background(), p, "x")
	if e, ok := errors.AsType[*Error](err); !ok || e.Status != 0 || e.RetryAfter != 20*time.Millisecond {
		t.Fatalf("none healthy: %#v", err)
	}
	a.up.Store(true)
	wait(true, false)
	if got, err := answer(context.Background(), p, "x"); err != nil || got != "a" {
		t.Fatalf("answered by %q: %v", got, err)
	}
}

// TestUnreachableRetried: a replica that refuses connections is passed
// over for the next and marked down at once.
func TestUnreachableRetried(t *testing.T) {
	a, b := newReplica(t, "a"), newReplica(t, "b")
	p := newPool(t, Config{HealthInterval: time.Hour}, a, b)
	a.Close()
	for i := range 8 {
		if got, err := answer(context.Background(), p, fmt.Sprint(i)); err != nil || got != "b" {
			t.Fatalf("answered by %q: %v", got, err)
		}
	}
	if st := p.Status(); st[0].Healthy || st[1].Served != 8 {
		t.Fatalf("status %+v", st)
	}
}

// TestCloseEndsRequests: Close ends a request at work.
func TestCloseEndsRequests(t *testing.T) {
	a := newReplica(t, "a")
	a.hold = make(chan struct{})
	defer close(a.hold)
	p, err := New(Config{URLs: []string{a.URL + "/v1"}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := answer(context.Background(), p, "x"); done <- err }()
	for a.chats.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	p.Close()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the request")
	}
}

// TestHostileUpstream: what an upstream sends is bounded and data.
func TestHostileUpstream(t *testing.T) {
	for _, c := range []struct {
		name string
		body func(w http.ResponseWriter)
		want string
	}{
		{"long line", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: "+strings.Repeat("x", maxLine+10))
		}, "stream broke"},
		{"not json", func(w http.ResponseWriter) {
			io.WriteString(w, "data: {nope\n\n")
		}, "not JSON"},
		{"in-stream error", func(w http.ResponseWriter) {
			io.WriteString(w, "data: {\"error\":{\"message\":\"boom\\u0000\\u001b[31m\"}}\n\n")
		}, "boom"},
		{"huge error body", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, strings.Repeat("é", maxErrorBody))
		}, "…"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/v1/models" {
					return
				}
				c.body(w)
			}))
			defer srv.Close()
			p, err := New(Config{URLs: []string{srv.URL + "/v1"}, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			_, err = answer(context.Background(), p, "x")
			e, ok := errors.AsType[*Error](err)
			if !ok || !strings.Contains(e.Message, c.want) || len(e.Message) > maxErrorMessage+len("…") || strings.ContainsAny(e.Message, "\x00\x1b") {
				t.Fatalf("err %v", err)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	for _, urls := range [][]string{nil, {"ftp://x"}, {"http://"}, {"http://a/v1?x=1"}, {"http://a/v1", "http://a/v1/"}} {
		if _, err := New(Config{URLs: urls}); err == nil {
			t.Errorf("%q accepted", urls)
		}
	}
}

// TestSilentReplica: a replica that sends nothing for IdleTimeout is
// passed over for the next and marked down.
func TestSilentReplica(t *testing.T) {
	a, b := newReplica(t, "a"), newReplica(t, "b")
	a.hold = make(chan struct{})
	defer close(a.hold)
	p := newPool(t, Config{IdleTimeout: 50 * time.Millisecond, HealthInterval: time.Hour}, a, b)
	for i := range 8 {
		if got, err := answer(context.Background(), p, fmt.Sprint(i)); err != nil || got != "b" {
			t.Fatalf("answered by %q: %v", got, err)
		}
	}
	if st := p.Status(); st[0].Healthy || a.chats.Load() == 0 {
		t.Fatalf("status %+v after %d requests held on a", st, a.chats.Load())
	}
}
