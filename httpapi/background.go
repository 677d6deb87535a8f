package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/inferkit/inferkit/cache"
	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/responses"
	"github.com/inferkit/inferkit/inference"
)

// Background responses (POST /v1/responses with background true, which
// needs store).
//
// The request is checked, prepared and admitted as any other (rate limits
// and spend apply, and a refusal is the POST's answer); the response is
// then stored with status queued and answered at once (streamed, with
// stream true), and its generation runs on a context of its own, which
// the client's leaving does not cancel, holding its reservation until it
// settles it. The status moves to in_progress at the engine's first
// event and ends completed, incomplete, failed or cancelled.
//
// GET /v1/responses/{id} answers with the response as it stands, its
// output so far included; with ?stream=true it streams the response's
// events from the start, or after the event whose sequence_number is
// starting_after, then follows it to its end. The events are kept in
// memory by the Handler that runs the response, until 5 minutes after it
// ended; another Handler (or the same one later) answers a stream
// request with a 400. POST /v1/responses/{id}/cancel stops a background
// response: it ends with status cancelled, its output so far, and the
// tokens it used settled; cancelling an ended one answers it as it is,
// and a response that was not made in the background cannot be cancelled
// (400).
//
// The Handler that runs a response holds a lease on its record, renewed
// with its output so far every third of Config.BackgroundLease. A
// response whose Handler stopped without ending it (the process killed,
// or its store unreachable for longer than the lease) is never left in
// progress: the next Handler to read its record (the one restarted, or
// another replica of a shared store) finds the lease lapsed and stores it
// as failed, with an error that says why. Close ends the responses still
// running as failed. A cancel that reaches a Handler other than the one
// running the response is left in the store, where the running one finds
// it at its next renewal.
//
// Config.BackgroundJobs and BackgroundJobsPerAccount bound the responses
// running at once; past them a request is refused with 429.

// DefaultBackgroundJobs is the number of background responses that may
// run at once, of every key together, when Config.BackgroundJobs is 0.
const DefaultBackgroundJobs = 64

// DefaultBackgroundJobsPerAccount is the number of background responses
// one account may run at once when Config.BackgroundJobsPerAccount is 0.
const DefaultBackgroundJobsPerAccount = 8

// DefaultBackgroundLease is the lease of a running background response's
// record when Config.BackgroundLease is 0.
const DefaultBackgroundLease = 15 * time.Second

// minBackgroundLease is the shortest Config.BackgroundLease.
const minBackgroundLease = 30 * time.Millisecond

// eventsKept is how long the events of an ended background response stay
// for streams that resume it (OpenAI's is 5 minutes too).
const eventsKept = 5 * time.Minute

// The causes that end a background response's context.
var (
	errCancelled = errors.New("httpapi: the background response was cancelled")
	errShutdown  = &formats.Error{Status: http.StatusServiceUnavailable, Code: "server_error",
		Message: "the server shut down before the background response ended"}
	// errLost: the record is no longer this Handler's (deleted, or
	// found lapsed and failed by another); nothing more is stored.
	errLost = errors.New("httpapi: the background response's record is no longer held")
	// errLapsed is the error of a response found with its lease lapsed.
	errLapsed = &formats.Error{Status: http.StatusInternalServerError, Code: "server_error",
		Message: "the server running this background response stopped before it ended (it was restarted, killed or lost its store)"}
)

// storedLease is the lease of a running background response's record: the
// Handler that runs it, and until when (Unix milliseconds on its Now).
type storedLease struct {
	Holder string `json:"holder"`
	Until  int64  `json:"until"`
}

// cancelID is the id of the record that asks the Handler running the
// response id to cancel it. Response ids have no colon, so that it names
// no response.
func cancelID(id string) string { return "cancel:" + id }

// job is one background response that runs or ran on this Handler.
type job struct {
	owner, account, id string
	req                formats.Request
	cancel             context.CancelCauseFunc
	ctx                context.Context
	// done is closed once the job has ended and stored its last record.
	done chan struct{}
	// ended is when it ended, on Now; set under jobs.mu.
	ended time.Time

	mu  sync.Mutex
	enc *responses.Stream
	// events are the stream's frames, the i-th the event of
	// sequence_number i, then [DONE].
	events [][]byte
	// changed is closed, and replaced, when events grow or the job ends.
	changed  chan struct{}
	finished bool
	result   *inference.Result // the Final event's
}

// jobs is the Handler's background responses: those running, bounded in
// number, and those ended less than eventsKept ago (as many as may run),
// for streams that resume them.
type jobs struct {
	max, perAccount int

	mu       sync.Mutex
	running  map[string]*job // by owner and id
	accounts map[string]int  // running per account
	ended    []*job          // oldest first
	closed   bool
	wg       sync.WaitGroup
}

func jobKey(owner, id string) string { return owner + "\x00" + id }

// add registers j as running, or refuses it past the bounds.
func (b *jobs) add(j *job) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closed:
		return errShutdown
	case len(b.running) >= b.max:
		return formats.RateLimited(time.Second, fmt.Sprintf("Too many background responses are running on this server (%d); retry shortly.", b.max))
	case b.accounts[j.account] >= b.perAccount:
		return formats.RateLimited(time.Second, fmt.Sprintf("Your account runs %d background responses, its limit; retry when one ends, or cancel one.", b.perAccount))
	}
	b.running[jobKey(j.owner, j.id)] = j
	b.accounts[j.account]++
	b.wg.Add(1)
	return nil
}

// end moves j from running to ended at now.
func (b *jobs) end(j *job, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.running, jobKey(j.owner, j.id))
	if b.accounts[j.account]--; b.accounts[j.account] <= 0 {
		delete(b.accounts, j.account)
	}
	j.ended = now
	b.ended = append(b.ended, j)
	if len(b.ended) > b.max {
		b.ended = append(b.ended[:0], b.ended[len(b.ended)-b.max:]...)
	}
	b.wg.Done()
}

// forget drops an ended job, whose response was deleted.
func (b *jobs) forget(j *job) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, e := range b.ended {
		if e == j {
			b.ended = append(b.ended[:i], b.ended[i+1:]...)
			return
		}
	}
}

// find returns the job of owner's response id, running or ended less
// than eventsKept before now.
func (b *jobs) find(owner, id string, now time.Time) *job {
	b.mu.Lock()
	defer b.mu.Unlock()
	if j := b.running[jobKey(owner, id)]; j != nil {
		return j
	}
	for i := len(b.ended) - 1; i >= 0; i-- {
		if j := b.ended[i]; j.owner == owner && j.id == id && now.Sub(j.ended) < eventsKept {
			return j
		}
	}
	return nil
}

// Close ends the background responses that still run on h, storing each
// as failed, and waits for them; after it, background requests are
// refused. Call it after shutting the HTTP server down and before
// closing the Store and the Engine. It is safe to call more than once.
func (h *Handler) Close() error {
	h.jobs.mu.Lock()
	h.jobs.closed = true
	for _, j := range h.jobs.running {
		j.cancel(errShutdown)
	}
	h.jobs.mu.Unlock()
	h.jobs.wg.Wait()
	return nil
}

// jobWriter is the stream a job's encoder writes: each Write is one
// event (formats.WriteEvent writes an event at once), kept for the
// streams that read it. Its Writes happen under j.mu (jobEncoder).
type jobWriter struct{ j *job }

func (w jobWriter) Header() http.Header { return http.Header{} }
func (w jobWriter) WriteHeader(int)     {}
func (w jobWriter) Write(b []byte) (int, error) {
	w.j.events = append(w.j.events, append([]byte(nil), b...))
	close(w.j.changed)
	w.j.changed = make(chan struct{})
	return len(b), nil
}

// jobEncoder encodes a job's events under its lock, and ends a job
// cancelled or shut down as such.
type jobEncoder struct{ j *job }

func (e jobEncoder) Event(ev inference.Event) error {
	e.j.mu.Lock()
	defer e.j.mu.Unlock()
	if ev.Final != nil && ev.Choice == 0 {
		res := *ev.Final
		e.j.result = &res
	}
	return e.j.enc.Event(ev)
}

func (e jobEncoder) Fail(err error) error {
	e.j.mu.Lock()
	defer e.j.mu.Unlock()
	switch cause := context.Cause(e.j.ctx); {
	case errors.Is(cause, errCancelled), errors.Is(cause, errLost):
		return e.j.enc.Cancel()
	case cause == error(errShutdown):
		err = errShutdown
	}
	return e.j.enc.Fail(err)
}

// progress returns the job's response as it stands.
func (j *job) progress() responses.Response {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.enc.Progress()
}

// background runs a background request: the job registered and stored
// as queued, the request admitted, the answer written (the queued
// response, or its stream from the start), the generation started.
func (h *Handler) background(w http.ResponseWriter, r *http.Request, req formats.Request) {
	id, _ := IdentityFrom(r.Context())
	account := id.Account
	if account == "" {
		account = id.KeyID
	}
	j := &job{owner: owner(r), account: account, req: req, done: make(chan struct{}), changed: make(chan struct{})}
	j.enc = responses.NewStream(jobWriter{j}, req, h.opts)
	j.id = j.enc.Response().ID
	j.ctx, j.cancel = context.WithCancelCause(context.WithoutCancel(r.Context()))
	if err := h.jobs.add(j); err != nil {
		j.cancel(nil)
		h.fail(w, r, err)
		return
	}
	started := false
	defer func() {
		if !started {
			j.cancel(nil)
			h.jobs.end(j, h.now())
			close(j.done)
		}
	}()
	g, err := h.admit(w, r, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	rj := r.WithContext(j.ctx)
	g.events = h.engine.Run(j.ctx, g.p)
	g.a = g.a.detach() // the job settles it; the route's end must not cancel it
	j.mu.Lock()
	err = j.enc.Queue()
	j.mu.Unlock()
	if err == nil {
		err = h.putRunning(j)
	}
	if err != nil {
		if g.a != nil {
			g.a.cancel(rj)
		}
		h.fail(w, r, err)
		return
	}
	started = true
	queued := j.progress()
	go h.runJob(rj, j, g)
	if req.Stream {
		h.follow(w, r, j, -1)
		return
	}
	h.writeJSON(w, r, queued)
}

// runJob runs a background response's generation to its end, renewing
// its record's lease, and stores its last record.
func (h *Handler) runJob(r *http.Request, j *job, g *generation) {
	defer close(j.done)
	defer func() { h.jobs.end(j, h.now()) }()
	stop := make(chan struct{})
	beating := make(chan struct{})
	go func() {
		defer close(beating)
		h.heartbeat(j, stop)
	}()
	sw := newSSEWriter(jobWriter{j})
	sw.start() // an error before the first event is the stream's
	h.stream(sw, r, g, jobEncoder{j}, nil)
	close(stop)
	<-beating
	j.mu.Lock()
	resp, res := j.enc.Response(), j.result
	j.mu.Unlock()
	defer func() {
		j.mu.Lock()
		j.finished = true
		close(j.changed)
		j.changed = make(chan struct{})
		j.mu.Unlock()
		j.cancel(nil)
	}()
	if errors.Is(context.Cause(j.ctx), errLost) {
		return
	}
	if res == nil || resp.Status == "failed" || resp.Status == "cancelled" {
		r0 := resp.Result()
		res = &r0
	}
	rec, err := newRecord(j.owner, resp, j.req.Transcript(*res), nil)
	if err == nil {
		err = h.store.Put(context.WithoutCancel(r.Context()), rec)
	}
	if err != nil {
		h.log.LogAttrs(r.Context(), slog.LevelError, "httpapi: storing a background response failed",
			slog.String("response_id", j.id), slog.Any("err", err))
	}
}

// running reports whether j has not yet stored its last record.
func (j *job) running() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return !j.finished
}

// heartbeat renews the lease of j's record every third of the lease,
// with its output so far, until stop is closed. A cancel left in the
// store by another Handler cancels j; a record that is gone or another's
// ends it without storing more.
func (h *Handler) heartbeat(j *job, stop <-chan struct{}) {
	t := time.NewTicker(h.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(j.ctx), h.lease/3)
		_, err := h.store.Get(ctx, j.owner, cancelID(j.id))
		if err == nil {
			j.cancel(errCancelled)
			cancel()
			continue
		}
		rec, err := h.store.Get(ctx, j.owner, j.id)
		cancel()
		switch {
		case errors.Is(err, cache.ErrNotFound):
			j.cancel(errLost)
			continue
		case err == nil:
			if l, _ := leaseOf(rec); l == nil || l.Holder != h.instance {
				j.cancel(errLost)
				continue
			}
		}
		if err := h.putRunning(j); err != nil {
			h.log.LogAttrs(j.ctx, slog.LevelWarn, "httpapi: renewing a background response's lease failed",
				slog.String("response_id", j.id), slog.Any("err", err))
		}
	}
}

// putRunning stores j's response as it stands, under this Handler's
// lease, with its input as the transcript.
func (h *Handler) putRunning(j *job) error {
	lease := &storedLease{Holder: h.instance, Until: h.now().Add(h.lease).UnixMilli()}
	rec, err := newRecord(j.owner, j.progress(), j.req.Messages, lease)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(j.ctx), h.lease/3)
	defer cancel()
	return h.store.Put(ctx, rec)
}

// follow streams j's events after the one numbered after, then the rest
// as they come, until the job ends or the client leaves.
func (h *Handler) follow(w http.ResponseWriter, r *http.Request, j *job, after int) {
	sw := newSSEWriter(w)
	next := after + 1
	for {
		j.mu.Lock()
		evs, finished, changed := j.events[min(next, len(j.events)):], j.finished, j.changed
		j.mu.Unlock()
		sw.start()
		for _, ev := range evs {
			if _, err := sw.Write(ev); err != nil {
				return
			}
		}
		next += len(evs)
		if err := sw.flush(); err != nil || finished {
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
	}
}

// detach hands the reservation over to a copy, which a background job
// settles: a's route, at its end, finds nothing to cancel.
func (a *admission) detach() *admission {
	if a == nil {
		return nil
	}
	c := *a
	a.held = false
	return &c
}

// leaseOf returns the lease of a record, nil when it has none (its
// response ended, or was never background), and its transcript's
// messages.
func leaseOf(rec cache.Record) (*storedLease, error) {
	var t storedTranscript
	if err := json.Unmarshal(rec.Transcript, &t); err != nil {
		return nil, fmt.Errorf("httpapi: decoding a stored transcript: %w", err)
	}
	return t.Lease, nil
}

// load returns owner's stored response id, as GET answers it: a response
// whose lease lapsed (its Handler stopped without ending it) is stored as
// failed first, once.
func (h *Handler) load(ctx context.Context, owner, id string) (cache.Record, responses.Response, error) {
	var resp responses.Response
	rec, err := h.store.Get(ctx, owner, id)
	if err != nil {
		return rec, resp, notFound(id, err)
	}
	if err := json.Unmarshal(rec.Response, &resp); err != nil {
		return rec, resp, fmt.Errorf("httpapi: decoding stored response %s: %w", id, err)
	}
	lease, err := leaseOf(rec)
	if err != nil || lease == nil || h.now().UnixMilli() <= lease.Until || h.jobs.find(owner, id, h.now()) != nil {
		return rec, resp, err
	}
	resp = responses.Interrupted(resp, errLapsed)
	var t storedTranscript
	_ = json.Unmarshal(rec.Transcript, &t)
	t.Lease = nil
	tb, err := json.Marshal(t)
	if err != nil {
		return rec, resp, err
	}
	body, err := json.Marshal(resp)
	if err != nil {
		return rec, resp, err
	}
	rec = cache.Record{Owner: owner, ID: id, Response: body, Transcript: tb}
	if err := h.store.Put(context.WithoutCancel(ctx), rec); err != nil {
		return rec, resp, err
	}
	h.log.LogAttrs(ctx, slog.LevelWarn, "httpapi: a background response's lease lapsed; stored as failed",
		slog.String("response_id", id), slog.String("holder", lease.Holder))
	return rec, resp, nil
}

// streamParams reads GET's stream and starting_after (-1 when absent).
// stream may come in the query or, as the OpenAI SDKs send it, in a JSON
// body.
func streamParams(r *http.Request) (stream bool, after int, err error) {
	q := r.URL.Query()
	after = -1
	if s := q.Get("stream"); s != "" {
		if stream, err = strconv.ParseBool(s); err != nil {
			return false, 0, formats.Invalid("stream", "stream must be true or false, not %q", Clip(s))
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return false, 0, err
	}
	if len(bytes.TrimSpace(body)) > 0 {
		var b struct {
			Stream *bool `json:"stream"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			return false, 0, formats.Invalid("stream", "the body of GET /v1/responses/{id} may only be a JSON object with stream: %v", err)
		}
		if b.Stream != nil {
			stream = stream || *b.Stream
		}
	}
	if s := q.Get("starting_after"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return false, 0, formats.Invalid("starting_after", "starting_after must be a sequence number (0 or more), not %q", Clip(s))
		}
		if !stream {
			return false, 0, formats.Invalid("starting_after", "starting_after is for streams: send stream=true with it")
		}
		after = n
	}
	return stream, after, nil
}

// cancelResponse serves POST /v1/responses/{id}/cancel.
func (h *Handler) cancelResponse(w http.ResponseWriter, r *http.Request) {
	id, who := r.PathValue("id"), owner(r)
	if j := h.jobs.find(who, id, h.now()); j != nil {
		j.cancel(errCancelled)
		select {
		case <-j.done:
		case <-r.Context().Done():
			return
		}
		h.writeJSON(w, r, j.progress())
		return
	}
	_, resp, err := h.load(r.Context(), who, id)
	switch {
	case err != nil:
		h.fail(w, r, err)
		return
	case !resp.Background:
		h.fail(w, r, formats.Invalid("", "only a response made with background true can be cancelled; %s was not", id))
		return
	case resp.Done():
		h.writeJSON(w, r, resp) // cancelling again answers the response as it is
		return
	}
	// Another Handler runs it: ask it through the store, and wait for it
	// to end, up to two renewals.
	if err := h.store.Put(r.Context(), cache.Record{Owner: who, ID: cancelID(id), Response: []byte("{}"), Transcript: []byte("{}")}); err != nil {
		h.fail(w, r, err)
		return
	}
	deadline := time.NewTimer(h.lease)
	defer deadline.Stop()
	tick := time.NewTicker(min(h.lease/15, 100*time.Millisecond))
	defer tick.Stop()
	for !resp.Done() {
		select {
		case <-deadline.C:
			h.writeJSON(w, r, resp)
			return
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
		if _, resp, err = h.load(r.Context(), who, id); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	h.writeJSON(w, r, resp)
}

// newInstance returns a Handler's instance id, which names it in leases.
func newInstance() string { return "h_" + rand.Text() }
