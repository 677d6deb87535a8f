package codereview

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/inferkit/inferkit/policy"
)

// WebhookConfig configures a pull-request bot: a receiver of
// GitHub-style pull_request webhooks (GitHub, Gitea and Forgejo send
// this shape) that reviews each pull request's head commit once and
// posts the review back through the forge's REST API.
type WebhookConfig struct {
	// APIURL is the forge's REST API: https://api.github.com, or a
	// Gitea or Forgejo server's https://HOST/api/v1. Required.
	APIURL string
	// Token authenticates the bot to the forge. Required.
	Token string
	// Secret is the webhook's shared secret: every delivery's
	// X-Hub-Signature-256 must be its HMAC-SHA256. Required.
	Secret string
	// Key is the inferkit API key the reviews run under: its account's
	// plan, quotas, limits and spend apply. Required.
	Key string
	// Model reviews. Required.
	Model string
	// Security adds a security scan to every review (the plan must have
	// it); Rules are the team's rules.
	Security bool
	Rules    string
	// Client sends the forge's requests; nil means a client with a
	// 30-second timeout.
	Client *http.Client
	// Logger receives the bot's failures. Nil means slog.Default().
	Logger *slog.Logger
	// Remember bounds the head commits remembered as reviewed; 0 means
	// 10,000. An older one delivered again is reviewed again.
	Remember int
}

// Webhook is a pull-request bot (see WebhookConfig). It answers each
// delivery at once (202) and reviews in the background, one pull
// request at a time; Close waits for the reviews under way. It is safe
// for concurrent use.
type Webhook struct {
	h   *Handler
	cfg WebhookConfig
	log *slog.Logger

	mu     sync.Mutex
	seen   map[string]bool // repo#number@sha, reviewed or under way
	order  []string        // seen's keys, oldest first
	queue  chan delivery
	closed bool
	wg     sync.WaitGroup
}

// delivery is a pull request's head commit to review.
type delivery struct {
	repo   string // owner/name
	number int
	sha    string
	key    string // its seen key
	issues []int  // the issues its description links to
}

// Webhook returns the pull-request bot of cfg, which reviews through h.
func (h *Handler) Webhook(cfg WebhookConfig) (*Webhook, error) {
	switch {
	case cfg.APIURL == "" || cfg.Token == "" || cfg.Secret == "" || cfg.Key == "" || cfg.Model == "":
		return nil, errors.New("codereview: WebhookConfig needs APIURL, Token, Secret, Key and Model")
	case cfg.Remember < 0:
		return nil, fmt.Errorf("codereview: WebhookConfig.Remember %d is negative", cfg.Remember)
	}
	if u, err := url.Parse(cfg.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("codereview: WebhookConfig.APIURL %q is not an http or https URL", cfg.APIURL)
	}
	cfg.APIURL = strings.TrimSuffix(cfg.APIURL, "/")
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Remember == 0 {
		cfg.Remember = 10000
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	wh := &Webhook{h: h, cfg: cfg, log: log, seen: map[string]bool{}, queue: make(chan delivery, 64)}
	wh.wg.Add(1)
	go wh.run()
	return wh, nil
}

// Close stops taking deliveries and waits for the reviews queued and
// under way.
func (wh *Webhook) Close() {
	wh.mu.Lock()
	if !wh.closed {
		wh.closed = true
		close(wh.queue)
	}
	wh.mu.Unlock()
	wh.wg.Wait()
}

// maxEvent bounds a delivery's body.
const maxEvent = 1 << 20

// ServeHTTP takes a delivery: its signature checked (401 without it),
// a pull_request event that opens, reopens or pushes to a pull request
// queued for review once per head commit (202), any other event
// acknowledged (200). A redelivery of a head commit already reviewed
// or queued queues nothing.
func (wh *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "deliveries are POSTed")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEvent))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "", "the delivery is larger than 1 MiB")
		return
	}
	if !wh.signed(r.Header.Get("X-Hub-Signature-256"), body) {
		writeError(w, http.StatusUnauthorized, "invalid_signature", "", "the delivery's X-Hub-Signature-256 is not the HMAC-SHA256 of its body with the webhook's secret")
		return
	}
	event := r.Header.Get("X-GitHub-Event")
	for _, h := range []string{"X-Gitea-Event", "X-Forgejo-Event"} {
		if event == "" {
			event = r.Header.Get(h)
		}
	}
	if event != "pull_request" {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ignored", "reason": "not a pull_request event"})
		return
	}
	var ev struct {
		Action      string `json:"action"`
		Number      int    `json:"number"`
		PullRequest struct {
			Number int    `json:"number"`
			Body   string `json:"body"`
			Head   struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "the delivery is not a pull_request event: "+err.Error())
		return
	}
	switch ev.Action {
	case "opened", "reopened", "synchronize", "synchronized":
	default:
		writeJSON(w, http.StatusOK, map[string]string{"status": "ignored", "reason": "action " + ev.Action})
		return
	}
	n := ev.PullRequest.Number
	if n == 0 {
		n = ev.Number
	}
	owner, name, ok := strings.Cut(ev.Repository.FullName, "/")
	if !ok || owner == "" || name == "" || strings.ContainsAny(ev.Repository.FullName, "?#%\\") || strings.Contains(ev.Repository.FullName, "..") || strings.Count(ev.Repository.FullName, "/") != 1 || n <= 0 || !isSHA(ev.PullRequest.Head.SHA) {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "the event lacks its repository full_name, pull request number or head sha")
		return
	}
	d := delivery{repo: ev.Repository.FullName, number: n, sha: ev.PullRequest.Head.SHA, issues: linkedIssues(ev.PullRequest.Body, n)}
	d.key = fmt.Sprintf("%s#%d@%s", d.repo, d.number, d.sha)
	wh.mu.Lock()
	defer wh.mu.Unlock()
	switch {
	case wh.closed:
		writeError(w, http.StatusServiceUnavailable, "server_error", "", "the bot is shutting down")
		return
	case wh.seen[d.key]:
		writeJSON(w, http.StatusOK, map[string]string{"status": "already reviewed", "commit": d.sha})
		return
	}
	select {
	case wh.queue <- d:
	default:
		w.Header().Set("Retry-After", "60")
		writeError(w, http.StatusServiceUnavailable, "server_error", "", "too many pull requests are waiting for review")
		return
	}
	wh.remember(d.key)
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "queued", "commit": d.sha})
}

// signed reports whether sig is "sha256=" and the HMAC of body.
func (wh *Webhook) signed(sig string, body []byte) bool {
	got, err := hex.DecodeString(strings.TrimPrefix(sig, "sha256="))
	if err != nil || !strings.HasPrefix(sig, "sha256=") {
		return false
	}
	m := hmac.New(sha256.New, []byte(wh.cfg.Secret))
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}

// isSHA reports whether s is a commit's hex id.
func isSHA(s string) bool {
	if len(s) < 7 || len(s) > 64 {
		return false
	}
	_, err := hex.DecodeString(s[:len(s)&^1])
	return err == nil
}

// remember marks key seen, forgetting the oldest past Remember; wh.mu
// is held.
func (wh *Webhook) remember(key string) {
	wh.seen[key] = true
	wh.order = append(wh.order, key)
	if len(wh.order) > wh.cfg.Remember {
		delete(wh.seen, wh.order[0])
		wh.order = wh.order[1:]
	}
}

// forget unmarks key, after its review failed: a redelivery tries again.
func (wh *Webhook) forget(key string) {
	wh.mu.Lock()
	defer wh.mu.Unlock()
	delete(wh.seen, key)
}

// run reviews the queued deliveries in turn.
func (wh *Webhook) run() {
	defer wh.wg.Done()
	for d := range wh.queue {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		if err := wh.review(ctx, d); err != nil {
			wh.forget(d.key)
			wh.log.Warn("codereview: reviewing a pull request failed", "repo", d.repo, "number", d.number, "commit", d.sha, "err", err)
		}
		cancel()
	}
}

// review fetches a pull request's diff, reviews it and posts the review
// on its head commit.
func (wh *Webhook) review(ctx context.Context, d delivery) error {
	diff, err := wh.forge(ctx, http.MethodGet, fmt.Sprintf("/repos/%s/pulls/%d", d.repo, d.number), nil, "application/vnd.github.v3.diff")
	if err != nil {
		return fmt.Errorf("fetching the diff: %w", err)
	}
	req := Request{Model: wh.cfg.Model, Diff: string(diff), Rules: wh.cfg.Rules, Security: wh.cfg.Security}
	if _, err := Check(req); err != nil {
		return err
	}
	now := wh.h.now()
	header := http.Header{"Authorization": {"Bearer " + wh.cfg.Key}}
	// The linked issues' text, on plans with context integrations.
	if st, planned, err := wh.h.standingOf(ctx, header, now); err == nil && (!planned || st.plan.Has(policy.FeatureContextIntegrations)) {
		for _, n := range d.issues {
			b, err := wh.forge(ctx, http.MethodGet, fmt.Sprintf("/repos/%s/issues/%d", d.repo, n), nil, "application/json")
			if err != nil {
				wh.log.Warn("codereview: reading a linked issue failed", "repo", d.repo, "issue", n, "err", err)
				continue
			}
			var is struct {
				Title, Body string
			}
			if json.Unmarshal(b, &is) == nil {
				req.Context = append(req.Context, fmt.Sprintf("#%d %s\n%s", n, is.Title, clipText(is.Body, MaxContextChars)))
			}
		}
	}
	rv, owner, giveBack, err := wh.h.admit(ctx, header, &req, "", d.repo, now)
	if err != nil {
		return err
	}
	began := time.Now()
	res, err := rv.Run(ctx, req)
	if err != nil {
		giveBack()
		wh.h.record(ctx, "cr_"+rand.Text(), owner, d.repo, req, now, began, nil, err)
		return err
	}
	wh.h.record(ctx, "cr_"+rand.Text(), owner, d.repo, req, now, began, &res, nil)
	type comment struct {
		Path string `json:"path"`
		Line int    `json:"line"`
		Side string `json:"side"`
		Body string `json:"body"`
	}
	post := struct {
		CommitID string    `json:"commit_id"`
		Body     string    `json:"body"`
		Event    string    `json:"event"`
		Comments []comment `json:"comments"`
	}{CommitID: d.sha, Body: forgeText(res), Event: "COMMENT", Comments: []comment{}}
	for _, c := range res.Comments {
		body := fmt.Sprintf("**%s** (%s): %s", c.Severity, c.Category, c.Body)
		if c.Suggestion != "" {
			body += "\n\n```suggestion\n" + c.Suggestion + "\n```"
		}
		post.Comments = append(post.Comments, comment{Path: c.Path, Line: c.Line, Side: c.Side, Body: body})
	}
	b, _ := json.Marshal(post)
	if _, err := wh.forge(ctx, http.MethodPost, fmt.Sprintf("/repos/%s/pulls/%d/reviews", d.repo, d.number), b, "application/json"); err != nil {
		return fmt.Errorf("posting the review: %w", err)
	}
	return nil
}

// forgeText is the review's text on the forge: its summary, and what
// it did not read.
func forgeText(res Result) string {
	var b strings.Builder
	b.WriteString(res.Summary)
	if len(res.NotReviewed) > 0 {
		b.WriteString("\n\nNot reviewed:\n")
		for _, nr := range res.NotReviewed {
			fmt.Fprintf(&b, "- %s %s: %s\n", nr.Path, nr.Hunk, nr.Reason)
		}
	}
	return strings.TrimSpace(b.String())
}

// forgeTries bounds the tries of one forge request that the forge
// refuses for its rate limit, and forgeWait each wait between them.
const (
	forgeTries = 3
	forgeWait  = 10 * time.Second
)

// forge sends one request to the forge's API, retrying where the forge
// says its rate limit was reached (429, or 403 with
// X-RateLimit-Remaining 0), after Retry-After (at most forgeWait).
func (wh *Webhook) forge(ctx context.Context, method, path string, body []byte, accept string) ([]byte, error) {
	for try := 1; ; try++ {
		r, err := http.NewRequestWithContext(ctx, method, wh.cfg.APIURL+path, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Authorization", "token "+wh.cfg.Token)
		r.Header.Set("Accept", accept)
		if body != nil {
			r.Header.Set("Content-Type", "application/json")
		}
		res, err := wh.cfg.Client.Do(r)
		if err != nil {
			return nil, err
		}
		out, err := io.ReadAll(io.LimitReader(res.Body, MaxDiffBytes+1))
		res.Body.Close()
		if err != nil {
			return nil, err
		}
		limited := res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusForbidden && res.Header.Get("X-RateLimit-Remaining") == "0"
		switch {
		case res.StatusCode/100 == 2 && len(out) > MaxDiffBytes:
			return nil, fmt.Errorf("%s %s: the answer is larger than %d bytes", method, path, MaxDiffBytes)
		case res.StatusCode/100 == 2:
			return out, nil
		case limited && try < forgeTries:
			wait := forgeWait
			if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && s >= 0 {
				wait = min(wait, time.Duration(s)*time.Second)
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
			continue
		}
		return nil, fmt.Errorf("%s %s: the forge answered %d: %s", method, path, res.StatusCode, clipText(string(out), 300))
	}
}

// issueRef is a reference to an issue of the same repository: #123.
var issueRef = regexp.MustCompile(`(?:^|[\s(])#(\d{1,9})\b`)

// linkedIssues are the issues a pull request's description names, at
// most MaxContext, not the pull request itself.
func linkedIssues(body string, self int) []int {
	var out []int
	for _, m := range issueRef.FindAllStringSubmatch(clipText(body, 64<<10), -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil || n == self || slices.Contains(out, n) {
			continue
		}
		if out = append(out, n); len(out) == MaxContext {
			break
		}
	}
	return out
}
