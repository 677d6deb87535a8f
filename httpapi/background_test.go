package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/inferkit/inferkit/cache"
	"github.com/inferkit/inferkit/cache/rediscache"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/internal/redistest"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

const backgroundBody = `{"model":"core-2-5-mini","input":"Hi","background":true,"max_output_tokens":600}`

// poll GETs the response id until ok accepts it, failing after 5 s.
func poll(t *testing.T, h *httpapi.Handler, id string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		w := do(h, "GET", "/v1/responses/"+id, key, "")
		if w.Code != 200 {
			t.Fatalf("GET: %d %s", w.Code, w.Body)
		}
		r := decode(t, w.Body.Bytes())
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /v1/responses/%s: %s", id, w.Body)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func status(r map[string]any) string { s, _ := r["status"].(string); return s }

// A background response is queued, runs within the key's limits, shows
// its output so far, and is cancelled mid-run: its status is cancelled,
// its output what ran, and the account is charged for what ran, nothing
// held. Cancelling it again answers it as it is, and its stream resumes
// after a sequence number.
func TestBackgroundCancelledMidRun(t *testing.T) {
	// Every poll is a request of the minute's: room for a slow machine's.
	tier := ratelimit.Tier{Name: "t", Requests: 10_000, OutputTokens: 1_000, MaxMonthlySpend: ratelimit.Dollar}
	limiter := ratelimit.NewMemory()
	e := newEnv(t, func(cfg *httpapi.Config, f *fakeEngine) {
		f.block = true
		cfg.Limiter = limiter
		cfg.Keys = accountKeys{key: {KeyID: "key_a", Account: "acme", Tier: tier}}
	})
	w := do(e.h, "POST", "/v1/responses", key, backgroundBody)
	r := decode(t, w.Body.Bytes())
	if w.Code != 200 || status(r) != "queued" || r["background"] != true || w.Header().Get("X-Ratelimit-Remaining-Output-Tokens") != "400" {
		t.Fatalf("POST: %d %v %s", w.Code, w.Header(), w.Body)
	}
	id := r["id"].(string)
	engineCtx := <-e.eng.ctxs
	r = poll(t, e.h, id, func(r map[string]any) bool { return r["output_text"] == "Hello world" })
	if status(r) != "in_progress" {
		t.Errorf("status %s mid-run", status(r))
	}
	if u, _ := limiter.Usage(context.Background(), "acme", e.clock.Now()); u.Held == 0 {
		t.Errorf("the running job holds no reservation: %+v", u)
	}
	if w := do(e.h, "POST", "/v1/responses", key, `{"model":"core-2-5-mini","input":"more","previous_response_id":"`+id+`"}`); w.Code != 400 || !strings.Contains(w.Body.String(), "previous_response_id") {
		t.Errorf("continuing a running response: %d %s", w.Code, w.Body)
	}

	w = do(e.h, "POST", "/v1/responses/"+id+"/cancel", key, "")
	r = decode(t, w.Body.Bytes())
	out, _ := r["output"].([]any)
	if w.Code != 200 || status(r) != "cancelled" || r["output_text"] != "Hello world" || len(out) != 1 || out[0].(map[string]any)["status"] != "incomplete" {
		t.Fatalf("cancel: %d %s", w.Code, w.Body)
	}
	<-engineCtx.Done()
	if r := poll(t, e.h, id, func(map[string]any) bool { return true }); status(r) != "cancelled" {
		t.Errorf("GET after cancel: %v", r)
	}
	u, err := limiter.Usage(context.Background(), "acme", e.clock.Now())
	want := ratelimit.MonthUsage{Month: "2026-01", Spent: ratelimit.Money(u.InputTokens*500 + 2*2_000), Requests: 1, InputTokens: u.InputTokens, OutputTokens: 2}
	if err != nil || u != want || u.InputTokens == 0 {
		t.Errorf("usage %+v, %v; want what ran (the prompt and two tokens), nothing held", u, err)
	}
	if w := do(e.h, "POST", "/v1/responses/"+id+"/cancel", key, ""); w.Code != 200 || status(decode(t, w.Body.Bytes())) != "cancelled" {
		t.Errorf("cancelling again: %d %s", w.Code, w.Body)
	}

	w = do(e.h, "GET", "/v1/responses/"+id+"?stream=true&starting_after=2", key, "")
	frames := strings.Split(strings.TrimSpace(w.Body.String()), "\n\n")
	if w.Code != 200 || !strings.Contains(frames[0], `"sequence_number":3,`) || !strings.HasPrefix(finalEvent(w.Body.String()), "event: response.cancelled") || lastEvent(w.Body.String()) != "data: [DONE]" {
		t.Errorf("resumed stream: %d\n%s", w.Code, w.Body)
	}
	for _, q := range []string{"?stream=maybe", "?starting_after=2", "?stream=true&starting_after=-1"} {
		if w := do(e.h, "GET", "/v1/responses/"+id+q, key, ""); w.Code != 400 {
			t.Errorf("GET %s: %d %s", q, w.Code, w.Body)
		}
	}
}

// A response made without background cannot be cancelled nor streamed
// again; an unknown one is a 404.
func TestCancelNotBackground(t *testing.T) {
	e := newEnv(t, nil)
	id := postResponse(t, e, key, `{"model":"core-2-5-mini","input":"Hi"}`)
	if w := do(e.h, "POST", "/v1/responses/"+id+"/cancel", key, ""); w.Code != 400 {
		t.Errorf("cancel: %d %s", w.Code, w.Body)
	}
	if w := do(e.h, "GET", "/v1/responses/"+id+"?stream=true", key, ""); w.Code != 400 {
		t.Errorf("stream: %d %s", w.Code, w.Body)
	}
	if w := do(e.h, "POST", "/v1/responses/resp_nope/cancel", key, ""); w.Code != 404 {
		t.Errorf("unknown: %d %s", w.Code, w.Body)
	}
	if w := do(e.h, "POST", "/v1/responses", key, `{"model":"core-2-5-mini","input":"Hi","background":true,"store":false}`); w.Code != 400 {
		t.Errorf("background without store: %d %s", w.Code, w.Body)
	}
}

// A background stream runs to its end, [DONE] last, and resumes after a
// sequence number; the client's leaving does not stop the response.
func TestBackgroundStream(t *testing.T) {
	e := newEnv(t, nil)
	body := strings.Replace(backgroundBody, `{`, `{"stream":true,`, 1)
	w := do(e.h, "POST", "/v1/responses", key, body)
	b := w.Body.String()
	if w.Code != 200 || !strings.HasPrefix(b, "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":") ||
		!strings.Contains(b, `"status":"queued"`) || !strings.Contains(b, "event: response.queued") || !strings.Contains(b, "event: response.in_progress") ||
		!strings.HasPrefix(finalEvent(b), "event: response.completed") || lastEvent(b) != "data: [DONE]" {
		t.Fatalf("stream: %d\n%s", w.Code, b)
	}
	id := responseID(t, finalEvent(b))
	w = do(e.h, "GET", "/v1/responses/"+id+"?stream=true&starting_after=3", key, "")
	if want := b[strings.Index(b, "event: response.content_part.added"):]; w.Body.String() != want || !strings.Contains(want, `"sequence_number":4,`) {
		t.Errorf("resumed after 3:\n%s\nwant\n%s", w.Body, want)
	}
	if r := poll(t, e.h, id, func(map[string]any) bool { return true }); status(r) != "completed" || r["output_text"] != "Hello world" {
		t.Errorf("GET: %v", r)
	}

	// A client that leaves: the response runs on.
	for len(e.eng.ctxs) > 0 {
		<-e.eng.ctxs
	}
	e.eng.block = true
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	client := openaiSDK(srv.URL, key)
	s := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: policy.Core25Mini,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}, Background: openai.Bool(true)})
	for s.Next() {
		if s.Current().Type == "response.in_progress" {
			break
		}
	}
	id = s.Current().Response.ID
	cancel()
	s.Close()
	engineCtx := <-e.eng.ctxs
	poll(t, e.h, id, func(r map[string]any) bool { return r["output_text"] == "Hello world" && status(r) == "in_progress" })
	if engineCtx.Err() != nil {
		t.Error("the client's leaving cancelled the background response")
	}
}

// The bounds on background responses: per account, then in all.
func TestBackgroundBounds(t *testing.T) {
	e := newEnv(t, func(cfg *httpapi.Config, f *fakeEngine) {
		f.block = true
		cfg.BackgroundJobs, cfg.BackgroundJobsPerAccount = 2, 1
	})
	for i, c := range []struct {
		key  string
		want int
	}{{key, 200}, {key, 429}, {otherKey, 200}, {otherKey, 429}} {
		if w := do(e.h, "POST", "/v1/responses", c.key, backgroundBody); w.Code != c.want {
			t.Errorf("request %d: %d, want %d: %s", i, w.Code, c.want, w.Body)
		}
	}
	e2 := newEnv(t, func(cfg *httpapi.Config, f *fakeEngine) {
		f.block = true
		cfg.BackgroundJobs, cfg.BackgroundJobsPerAccount = 1, 1
	})
	do(e2.h, "POST", "/v1/responses", key, backgroundBody)
	if w := do(e2.h, "POST", "/v1/responses", otherKey, backgroundBody); w.Code != 429 || !strings.Contains(w.Body.String(), "server") {
		t.Errorf("past the total: %d %s", w.Code, w.Body)
	}
	for _, cfg := range []httpapi.Config{{BackgroundJobs: -1}, {BackgroundJobsPerAccount: -1}, {BackgroundLease: time.Millisecond}} {
		cfg.Engine, cfg.Keys = newFake(), e.keys
		if _, err := httpapi.New(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// killable is a store that a killed process no longer reaches.
type killable struct {
	cache.Store
	dead atomic.Bool
}

var errKilled = errors.New("killed")

func (k *killable) Get(ctx context.Context, owner, id string) (cache.Record, error) {
	if k.dead.Load() {
		return cache.Record{}, errKilled
	}
	return k.Store.Get(ctx, owner, id)
}

func (k *killable) Put(ctx context.Context, r cache.Record) error {
	if k.dead.Load() {
		return errKilled
	}
	return k.Store.Put(ctx, r)
}

// sharedStores are stores that several Handlers share: one in memory, as
// a process restarted in place would find a durable one, and Redis.
var sharedStores = map[string]func(t *testing.T, now func() time.Time) cache.Store{
	"memory": func(t *testing.T, now func() time.Time) cache.Store { return stores[0].open(t, now) },
	"redis": func(t *testing.T, now func() time.Time) cache.Store {
		s, err := rediscache.New(rediscache.Config{Client: redistest.Client(t, redistest.Start(t)), Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return s
	},
}

// A cancel that reaches another replica than the one running the
// response reaches it through the store, and answers the cancelled
// response.
func TestBackgroundCancelElsewhere(t *testing.T) {
	for name, open := range sharedStores {
		t.Run(name, func(t *testing.T) {
			var shared cache.Store
			first := newEnv(t, func(cfg *httpapi.Config, f *fakeEngine) {
				f.block = true
				shared = open(t, cfg.Now)
				cfg.Store, cfg.BackgroundLease = shared, 300*time.Millisecond
			})
			second := newEnv(t, func(cfg *httpapi.Config, _ *fakeEngine) {
				cfg.Store, cfg.Keys, cfg.BackgroundLease = shared, first.keys, 300*time.Millisecond
			})
			id := postResponse(t, first, key, backgroundBody)
			engineCtx := <-first.eng.ctxs
			poll(t, second.h, id, func(r map[string]any) bool { return r["output_text"] == "Hello world" })
			w := do(second.h, "POST", "/v1/responses/"+id+"/cancel", key, "")
			if r := decode(t, w.Body.Bytes()); w.Code != 200 || status(r) != "cancelled" || r["output_text"] != "Hello world" {
				t.Errorf("cancel elsewhere: %d %s", w.Code, w.Body)
			}
			<-engineCtx.Done()
			if w := do(second.h, "GET", "/v1/responses/cancel:"+id, key, ""); w.Code != 404 {
				t.Errorf("the cancel record is served: %d %s", w.Code, w.Body)
			}
		})
	}
}

// A background response whose server is killed mid-run is found failed,
// with a reason, by the server that starts again on the same store (or
// another replica), once its lease has lapsed; never left in progress.
// Close stores a response still running as failed too.
func TestBackgroundFailedAfterKill(t *testing.T) {
	for name, open := range sharedStores {
		t.Run(name, func(t *testing.T) {
			var shared cache.Store
			k := &killable{}
			first := newEnv(t, func(cfg *httpapi.Config, f *fakeEngine) {
				f.block = true
				shared = open(t, cfg.Now)
				k.Store = shared
				// Renewed every 100 ms of the wall clock; the fake
				// clock stands still, so it never lapses on its own.
				cfg.Store, cfg.BackgroundLease = k, 300*time.Millisecond
			})
			id := postResponse(t, first, key, backgroundBody)
			<-first.eng.ctxs

			// Another replica on the same store reads its progress.
			second := newEnv(t, func(cfg *httpapi.Config, _ *fakeEngine) { cfg.Store, cfg.Keys = shared, first.keys })
			poll(t, second.h, id, func(r map[string]any) bool { return r["output_text"] == "Hello world" && status(r) == "in_progress" })
			k.dead.Store(true) // killed: it never writes again

			// Once the lease has lapsed, the next read fails it.
			second.clock.Advance(time.Second)
			r := poll(t, second.h, id, func(map[string]any) bool { return true })
			errObj, _ := r["error"].(map[string]any)
			if status(r) != "failed" || errObj["code"] != "server_error" || !strings.Contains(fmt.Sprint(errObj["message"]), "stopped before it ended") {
				t.Fatalf("after the lease: %v", r)
			}
			who, err := first.keys.Authenticate(context.Background(), key)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := shared.Get(context.Background(), who.KeyID, id)
			var stored map[string]any
			if err == nil {
				err = json.Unmarshal(rec.Response, &stored)
			}
			if err != nil || status(stored) != "failed" {
				t.Errorf("stored: %v %s", err, rec.Response)
			}
			if w := do(second.h, "POST", "/v1/responses/"+id+"/cancel", key, ""); w.Code != 200 || status(decode(t, w.Body.Bytes())) != "failed" {
				t.Errorf("cancelling the failed one: %d %s", w.Code, w.Body)
			}
		})
	}
}

// Close ends a running background response as failed, saying why.
func TestBackgroundClose(t *testing.T) {
	e := newEnv(t, func(_ *httpapi.Config, f *fakeEngine) { f.block = true })
	id := postResponse(t, e, key, backgroundBody)
	<-e.eng.ctxs
	if err := e.h.Close(); err != nil {
		t.Fatal(err)
	}
	r := poll(t, e.h, id, func(map[string]any) bool { return true })
	errObj, _ := r["error"].(map[string]any)
	if status(r) != "failed" || !strings.Contains(fmt.Sprint(errObj["message"]), "shut down") {
		t.Errorf("after Close: %v", r)
	}
	if w := do(e.h, "POST", "/v1/responses", key, backgroundBody); w.Code == 200 {
		t.Errorf("a background request after Close: %d", w.Code)
	}
}

// The OpenAI Go SDK makes a background response, reads it, cancels it
// and streams it again after a sequence number.
func TestSDKBackground(t *testing.T) {
	e := newEnv(t, nil)
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	client := openaiSDK(srv.URL, key)
	ctx := context.Background()
	params := responses.ResponseNewParams{Model: policy.Core25Mini, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")},
		Background: openai.Bool(true)}
	r, err := client.Responses.New(ctx, params)
	if err != nil || r.Status != responses.ResponseStatusQueued || !r.Background {
		t.Fatalf("New: %v %+v", err, r)
	}
	deadline := time.Now().Add(5 * time.Second)
	for r.Status == responses.ResponseStatusQueued || r.Status == responses.ResponseStatusInProgress {
		if r, err = client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); err != nil || time.Now().After(deadline) {
			t.Fatalf("Get: %v %+v", err, r)
		}
	}
	if r.Status != responses.ResponseStatusCompleted || r.OutputText() != "Hello world" {
		t.Errorf("ended %s %q", r.Status, r.OutputText())
	}
	s := client.Responses.GetStreaming(ctx, r.ID, responses.ResponseGetParams{StartingAfter: openai.Int(2)})
	var types []string
	for s.Next() {
		ev := s.Current()
		if len(types) == 0 && ev.SequenceNumber != 3 {
			t.Errorf("first event %d after 2", ev.SequenceNumber)
		}
		types = append(types, ev.Type)
	}
	if err := s.Err(); err != nil || types[len(types)-1] != "response.completed" {
		t.Errorf("resumed stream: %v %v", err, types)
	}

	e.eng.block = true
	r, err = client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	<-e.eng.ctxs
	poll(t, e.h, r.ID, func(r map[string]any) bool { return r["output_text"] == "Hello world" })
	c, err := client.Responses.Cancel(ctx, r.ID)
	if err != nil || c.Status != responses.ResponseStatusCancelled || c.OutputText() != "Hello world" {
		t.Errorf("Cancel: %v %+v", err, c)
	}
	if g, err := client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); err != nil || g.Status != responses.ResponseStatusCancelled {
		t.Errorf("Get after Cancel: %v %+v", err, g)
	}
}
