// Package upstream is the client of an inference cluster that serves a
// catalog model: the replicas of one upstream model behind the
// OpenAI-compatible chat completions API, with health checks, a
// least-loaded choice that keeps requests of one prompt prefix on one
// replica, and retries where nothing was streamed yet. Package inference
// runs remote models on it.
package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
)

// Defaults of Config.
const (
	DefaultHealthInterval = 5 * time.Second
	// DefaultIdleTimeout: see Config.IdleTimeout. A long prompt's
	// prefill on a loaded engine is the longest silence it allows.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultAffinitySlack: a prompt prefix's own replica is passed
	// over for the least loaded one when it has this many more requests
	// in flight.
	DefaultAffinitySlack = 4
)

// Bounds on what an upstream sends back: a line of its stream, an error
// body, the message of an error passed on.
const (
	maxLine         = 4 << 20
	maxErrorBody    = 64 << 10
	maxErrorMessage = 512
)

// Config configures a Pool. URLs are required.
type Config struct {
	// URLs are the base URLs of the replicas, such as
	// "http://10.0.0.5:8000/v1": the chat API is {URL}/chat/completions,
	// the health check GET {URL}/models.
	URLs []string
	// Key is sent as the bearer key of every request; "" sends none.
	Key string
	// Client makes the requests. Nil means a client of its own, with no
	// overall timeout (streams are long) and a 10-second dial.
	Client *http.Client
	// HealthInterval is the time between health checks of each replica;
	// 0 means DefaultHealthInterval.
	HealthInterval time.Duration
	// AffinitySlack: see DefaultAffinitySlack; 0 means it, a negative
	// value means none (always the least loaded).
	AffinitySlack int
	// IdleTimeout bounds the wait for a replica's next line (the
	// response's headers, then each line of its stream): a replica
	// silent for longer fails the request (retried on the next where
	// nothing was streamed) and is marked down. 0 means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Logger receives replicas going down and up. Nil means slog.Default().
	Logger *slog.Logger
}

// Pool is the replicas of one upstream. It is safe for concurrent use;
// the caller of New calls Close, which stops its health checks and ends
// the requests at work.
type Pool struct {
	cfg      Config
	replicas []*replica
	ctx      context.Context // cancelled by Close
	cancel   context.CancelFunc
	done     chan struct{}
}

type replica struct {
	base     string // without a trailing slash
	inflight atomic.Int64
	healthy  atomic.Bool
	served   atomic.Int64
	failed   atomic.Int64
}

// New validates cfg and starts the health checks; every replica counts
// as healthy until a check or a request says otherwise.
func New(cfg Config) (*Pool, error) {
	if len(cfg.URLs) == 0 {
		return nil, errors.New("upstream: no URLs")
	}
	p := &Pool{cfg: cfg, done: make(chan struct{})}
	seen := map[string]bool{}
	for _, raw := range cfg.URLs {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("upstream: URL %q is not an http or https URL", raw)
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("upstream: URL %q has a query or fragment", raw)
		}
		base := strings.TrimSuffix(u.String(), "/")
		if seen[base] {
			return nil, fmt.Errorf("upstream: URL %q given twice", raw)
		}
		seen[base] = true
		r := &replica{base: base}
		r.healthy.Store(true)
		p.replicas = append(p.replicas, r)
	}
	if p.cfg.HealthInterval == 0 {
		p.cfg.HealthInterval = DefaultHealthInterval
	}
	if p.cfg.HealthInterval < 0 {
		return nil, fmt.Errorf("upstream: HealthInterval %v is negative", cfg.HealthInterval)
	}
	if p.cfg.IdleTimeout == 0 {
		p.cfg.IdleTimeout = DefaultIdleTimeout
	}
	if p.cfg.IdleTimeout < 0 {
		return nil, fmt.Errorf("upstream: IdleTimeout %v is negative", cfg.IdleTimeout)
	}
	if p.cfg.AffinitySlack == 0 {
		p.cfg.AffinitySlack = DefaultAffinitySlack
	}
	if p.cfg.Client == nil {
		p.cfg.Client = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	if p.cfg.Logger == nil {
		p.cfg.Logger = slog.Default()
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	go p.checkHealth()
	return p, nil
}

// Close stops the health checks and ends the requests at work.
func (p *Pool) Close() {
	p.cancel()
	<-p.done
}

// ReplicaStatus is what a Pool knows of one replica.
type ReplicaStatus struct {
	URL      string
	Healthy  bool
	InFlight int
	// Served and Failed count the requests it answered (a stream
	// started) and those that failed on it.
	Served, Failed int64
}

// Status reports every replica, in the order of Config.URLs.
func (p *Pool) Status() []ReplicaStatus {
	out := make([]ReplicaStatus, len(p.replicas))
	for i, r := range p.replicas {
		out[i] = ReplicaStatus{URL: r.base, Healthy: r.healthy.Load(), InFlight: int(r.inflight.Load()),
			Served: r.served.Load(), Failed: r.failed.Load()}
	}
	return out
}

// checkHealth checks every replica each HealthInterval until Close: GET
// {URL}/models answering 200 is healthy.
func (p *Pool) checkHealth() {
	defer close(p.done)
	t := time.NewTicker(p.cfg.HealthInterval)
	defer t.Stop()
	for {
		var wg sync.WaitGroup
		for _, r := range p.replicas {
			wg.Go(func() { p.check(r) })
		}
		wg.Wait()
		select {
		case <-t.C:
		case <-p.ctx.Done():
			return
		}
	}
}

func (p *Pool) check(r *replica) {
	ctx, cancel := context.WithTimeout(p.ctx, min(p.cfg.HealthInterval, 5*time.Second))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"/models", nil)
	if err != nil {
		return
	}
	p.authorize(req)
	resp, err := p.cfg.Client.Do(req)
	ok := err == nil && resp.StatusCode == http.StatusOK
	if err == nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
	}
	if p.ctx.Err() != nil {
		return
	}
	p.mark(r, ok, "health check")
}

// mark records r healthy or not, logging a change.
func (p *Pool) mark(r *replica, healthy bool, why string) {
	if r.healthy.Swap(healthy) != healthy {
		if healthy {
			p.cfg.Logger.Info("upstream: replica up", "url", r.base, "by", why)
		} else {
			p.cfg.Logger.Warn("upstream: replica down", "url", r.base, "by", why)
		}
	}
}

func (p *Pool) authorize(req *http.Request) {
	if p.cfg.Key != "" {
		req.Header.Set("Authorization", "Bearer "+p.cfg.Key)
	}
}

// order is the replicas to try for a request whose prompt begins with
// prefix, best first, healthy ones only: the replica that rendezvous
// hashing gives the prefix, unless it has AffinitySlack requests in
// flight more than the least loaded, then the rest by load.
func (p *Pool) order(prefix string) []*replica {
	type ranked struct {
		r      *replica
		load   int64
		weight uint64
	}
	var rs []ranked
	key := hash(prefix)
	for _, r := range p.replicas {
		if r.healthy.Load() {
			rs = append(rs, ranked{r, r.inflight.Load(), mix(key ^ hash(r.base))})
		}
	}
	if len(rs) == 0 {
		return nil
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if a.load != b.load {
			return int(a.load - b.load)
		}
		return -cmpUint(a.weight, b.weight)
	})
	least := rs[0].load
	if p.cfg.AffinitySlack > 0 {
		best := 0
		for i, x := range rs {
			if x.weight > rs[best].weight {
				best = i
			}
		}
		if rs[best].load < least+int64(p.cfg.AffinitySlack) {
			first := rs[best]
			rs = append(rs[:best], rs[best+1:]...)
			rs = append([]ranked{first}, rs...)
		}
	}
	out := make([]*replica, len(rs))
	for i, x := range rs {
		out[i] = x.r
	}
	return out
}

// hash is FNV-1a of s.
func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// mix is SplitMix64's finalizer: every bit of x moves every bit of the
// result, which FNV's last bytes alone do not.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Error is an upstream's refusal, or the pool's when no replica could
// answer.
type Error struct {
	// Status is the upstream's HTTP status; 0 when no replica answered
	// (all down, or unreachable).
	Status int
	// Message is the upstream's message, as data: cut to 512 bytes, its
	// control characters dropped.
	Message string
	// RetryAfter is the upstream's Retry-After, or the health interval
	// when no replica is healthy; 0 when it said none.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return "upstream: " + e.Message
	}
	return fmt.Sprintf("upstream: status %d: %s", e.Status, e.Message)
}

// Retryable reports whether another replica may answer what this one
// could not: it was unreachable, overloaded or failed.
func (e *Error) Retryable() bool {
	return e.Status == 0 || e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// Chat streams a chat completion from the replica best placed for it
// (see order), whose prompt begins with prefix. A replica that cannot be
// reached, answers 429 or a server error, or whose stream breaks, is
// passed over for the next as long as nothing was yielded (chunks that
// say nothing, such as the role's, are not); a stream that breaks after
// its first chunk ends with the error. The body's Stream and StreamOptions
// are set here. Errors are *Error, or ctx's.
func (p *Pool) Chat(ctx context.Context, body ChatRequest, prefix string) iter.Seq2[Chunk, error] {
	body.Stream, body.StreamOptions = true, &StreamOptions{IncludeUsage: true}
	return func(yield func(Chunk, error) bool) {
		data, err := json.Marshal(body)
		if err != nil {
			yield(Chunk{}, fmt.Errorf("upstream: %w", err))
			return
		}
		ctx, stop := context.WithCancel(ctx)
		defer stop()
		defer context.AfterFunc(p.ctx, stop)() // Close ends the request
		replicas := p.order(prefix)
		if len(replicas) == 0 {
			yield(Chunk{}, &Error{Message: fmt.Sprintf("none of the %d replicas is healthy", len(p.replicas)), RetryAfter: p.cfg.HealthInterval})
			return
		}
		var last *Error
		for _, r := range replicas {
			started, err := p.stream(ctx, r, data, yield)
			switch {
			case err == nil:
				return
			case ctx.Err() != nil:
				yield(Chunk{}, ctx.Err())
				return
			case started:
				yield(Chunk{}, err)
				return
			}
			ue, ok := errors.AsType[*Error](err)
			if !ok || !ue.Retryable() {
				yield(Chunk{}, err)
				return
			}
			last = ue
		}
		yield(Chunk{}, last)
	}
}

// stream runs one attempt on r; started says a chunk was yielded. A
// replica that was unreachable, or whose stream broke, is marked down
// until its next health check passes.
func (p *Pool) stream(ctx context.Context, r *replica, data []byte, yield func(Chunk, error) bool) (started bool, err error) {
	r.inflight.Add(1)
	defer r.inflight.Add(-1)
	outer := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var silent atomic.Bool
	idle := time.AfterFunc(p.cfg.IdleTimeout, func() { silent.Store(true); cancel() })
	defer idle.Stop()
	defer func() {
		switch {
		case silent.Load():
			r.failed.Add(1)
			p.mark(r, false, "silence")
			err = &Error{Message: fmt.Sprintf("replica %s sent nothing for %v", r.base, p.cfg.IdleTimeout)}
		case err != nil && outer.Err() == nil:
			r.failed.Add(1)
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+"/chat/completions", bytes.NewReader(data))
	if err != nil {
		return false, &Error{Message: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	p.authorize(req)
	resp, err := p.cfg.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		p.mark(r, false, "request")
		return false, &Error{Message: "replica " + r.base + " unreachable: " + clean(err.Error())}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, errorOf(resp)
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	sawDone := false
	for {
		idle.Reset(p.cfg.IdleTimeout)
		line, err := readLine(br)
		if err != nil {
			if ctx.Err() != nil {
				return started, ctx.Err()
			}
			if errors.Is(err, io.EOF) && sawDone {
				return started, nil
			}
			if errors.Is(err, io.EOF) && started {
				// Servers that end a stream without [DONE] (Ollama
				// sends it; some proxies drop it): the usage chunk
				// came, or the caller sees an unfinished answer.
				return started, nil
			}
			p.mark(r, false, "stream")
			return started, &Error{Message: "replica " + r.base + ": the stream broke: " + clean(err.Error())}
		}
		payload, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue // event:, id:, comments and blank lines
		}
		payload = strings.TrimSpace(payload)
		if payload == "[DONE]" {
			sawDone = true
			continue
		}
		var c Chunk
		if err := json.Unmarshal([]byte(payload), &c); err != nil {
			return started, &Error{Status: http.StatusBadGateway, Message: "replica " + r.base + " sent a chunk that is not JSON"}
		}
		if c.Error != nil {
			return started, &Error{Status: http.StatusBadGateway, Message: clean(c.Error.Message)}
		}
		if empty(c) {
			continue // a role's chunk: nothing streamed yet, a retry may follow
		}
		if !started {
			r.served.Add(1)
		}
		started = true
		if !yield(c, nil) {
			return true, nil
		}
	}
}

// empty reports whether c says nothing: no text, calls, log-probabilities,
// end or usage, as the chunk that opens a stream with the role.
func empty(c Chunk) bool {
	if c.Usage != nil {
		return false
	}
	for _, ch := range c.Choices {
		d := ch.Delta
		if d.Content != "" || d.ReasoningContent != "" || d.Reasoning != "" || len(d.ToolCalls) > 0 || ch.FinishReason != "" || ch.Logprobs != nil {
			return false
		}
	}
	return true
}

// readLine reads one line of at most maxLine bytes, without its end.
func readLine(br *bufio.Reader) (string, error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		b = append(b, chunk...)
		if len(b) > maxLine {
			return "", fmt.Errorf("a line longer than %d bytes", maxLine)
		}
		switch {
		case err == nil:
			return strings.TrimRight(string(b), "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(b) > 0:
			return strings.TrimRight(string(b), "\r\n"), nil
		default:
			return "", err
		}
	}
}

// errorOf reads an upstream's error response.
func errorOf(resp *http.Response) *Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{Status: resp.StatusCode}
	var wrapped struct {
		Error  ErrorBody `json:"error"`
		Detail any       `json:"detail"`
	}
	switch {
	case json.Unmarshal(body, &wrapped) == nil && wrapped.Error.Message != "":
		e.Message = wrapped.Error.Message
	case wrapped.Detail != nil:
		d, _ := json.Marshal(wrapped.Detail)
		e.Message = string(d)
	default:
		e.Message = string(body)
	}
	e.Message = clean(e.Message)
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.RetryAfter = time.Duration(min(s, 3600)) * time.Second
	}
	return e
}

// clean is an upstream's text as data for a message: valid UTF-8, no
// control characters, at most maxErrorMessage bytes.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > maxErrorMessage {
		cut := maxErrorMessage
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
