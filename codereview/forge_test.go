package codereview_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/codereview"
)

// fakeForge implements the REST subset a review bot uses, as GitHub,
// Gitea and Forgejo answer it: a pull request's diff by its head
// commit, and its reviews. It refuses the first request of each kind
// for its rate limit, and fails diffs of commits in broken.
type fakeForge struct {
	mu       sync.Mutex
	head     string            // the pull request's head commit
	diffs    map[string]string // by head commit
	broken   map[string]bool
	reviews  []forgeReview
	limited  map[string]bool
	tokens   []string
	failures int // diffs refused for broken
}

type forgeReview struct {
	CommitID string `json:"commit_id"`
	Body     string `json:"body"`
	Event    string `json:"event"`
	Comments []struct {
		Path string `json:"path"`
		Line int    `json:"line"`
		Side string `json:"side"`
	} `json:"comments"`
}

func (f *fakeForge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens = append(f.tokens, r.Header.Get("Authorization"))
	kind := r.Method + " " + strings.TrimSuffix(strings.TrimSuffix(r.URL.Path, "/reviews"), "/7")
	if !f.limited[kind] {
		f.limited[kind] = true
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"message":"API rate limit exceeded"}`, http.StatusTooManyRequests)
		return
	}
	switch {
	case r.Method == "GET" && r.URL.Path == "/repos/acme/app/pulls/7" && r.Header.Get("Accept") == "application/vnd.github.v3.diff":
		if f.broken[f.head] {
			f.failures++
			http.Error(w, `{"message":"Server Error"}`, http.StatusInternalServerError)
			return
		}
		io.WriteString(w, f.diffs[f.head])
	case r.Method == "GET" && r.URL.Path == "/repos/acme/app/issues/12":
		io.WriteString(w, `{"number":12,"title":"Crash on empty input","body":"The parser panics when the input is empty."}`)
	case r.Method == "POST" && r.URL.Path == "/repos/acme/app/pulls/7/reviews":
		var rv forgeReview
		json.NewDecoder(r.Body).Decode(&rv)
		f.reviews = append(f.reviews, rv)
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"id":1}`)
	default:
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	}
}

func (f *fakeForge) posted() []forgeReview {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]forgeReview(nil), f.reviews...)
}

const secret = "webhook-secret"

// deliver sends a signed (or unsigned) pull_request event.
func deliver(t *testing.T, url, action, sha string, signed bool) (int, string) {
	t.Helper()
	return deliverBody(t, url, action, sha, "", signed)
}

// deliverBody sends a pull_request event whose description is text.
func deliverBody(t *testing.T, url, action, sha, text string, signed bool) (int, string) {
	t.Helper()
	body := fmt.Sprintf(`{"action":%q,"number":7,"pull_request":{"number":7,"body":%q,"head":{"sha":%q}},"repository":{"full_name":"acme/app"}}`, action, text, sha)
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("X-GitHub-Event", "pull_request")
	if signed {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(body))
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res.StatusCode, string(out)
}

// waitReviews waits until the forge has n reviews.
func waitReviews(t *testing.T, f *fakeForge, n int) []forgeReview {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if got := f.posted(); len(got) >= n || time.Now().After(deadline) {
			return got
		}
	}
}

// The bot against a fake forge: an opened pull request gets one review
// on its head commit, a redelivered event none, a new push one more; a
// delivery without the secret's signature is refused; the forge's rate
// limit is waited out, and a review that fails on the forge's error is
// tried again when the event comes again.
func TestWebhookFakeForge(t *testing.T) {
	forge := &fakeForge{head: "aaaaaaa1", diffs: map[string]string{"aaaaaaa1": smallDiff, "bbbbbbb2": smallDiff + "@@ -9 +9 @@\n-x\n+y\n", "ccccccc3": smallDiff},
		broken: map[string]bool{"ccccccc3": true}, limited: map[string]bool{}}
	fs := httptest.NewServer(forge)
	defer fs.Close()
	h, err := codereview.NewHandler(codereview.HandlerConfig{API: &stubAPI{}})
	if err != nil {
		t.Fatal(err)
	}
	wh, err := h.Webhook(codereview.WebhookConfig{APIURL: fs.URL, Token: "bot-token", Secret: secret, Key: "sk-bot", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	srv := httptest.NewServer(wh)
	defer srv.Close()

	if status, out := deliver(t, srv.URL, "opened", "aaaaaaa1", false); status != 401 {
		t.Errorf("unsigned: %d %s", status, out)
	}
	if status, out := deliver(t, srv.URL, "opened", "aaaaaaa1", true); status != 202 {
		t.Fatalf("opened: %d %s", status, out)
	}
	got := waitReviews(t, forge, 1)
	if len(got) != 1 || got[0].CommitID != "aaaaaaa1" || got[0].Event != "COMMENT" || got[0].Body == "" {
		t.Fatalf("reviews %+v", got)
	}
	if status, out := deliver(t, srv.URL, "opened", "aaaaaaa1", true); status != 200 || !strings.Contains(out, "already reviewed") {
		t.Errorf("redelivered: %d %s", status, out)
	}
	forge.mu.Lock()
	forge.head = "bbbbbbb2"
	forge.mu.Unlock()
	if status, out := deliver(t, srv.URL, "synchronize", "bbbbbbb2", true); status != 202 {
		t.Fatalf("pushed: %d %s", status, out)
	}
	if got = waitReviews(t, forge, 2); len(got) != 2 || got[1].CommitID != "bbbbbbb2" {
		t.Fatalf("reviews %+v", got)
	}

	// A diff the forge fails to give: no review, and the event delivered
	// again is tried again.
	forge.mu.Lock()
	forge.head = "ccccccc3"
	forge.mu.Unlock()
	if status, _ := deliver(t, srv.URL, "synchronize", "ccccccc3", true); status != 202 {
		t.Fatal(status)
	}
	// Delivered again while it runs: already under way.
	deliver(t, srv.URL, "synchronize", "ccccccc3", true)
	// Once it has failed, the forge mends, and a redelivery is queued
	// again and reviewed.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		forge.mu.Lock()
		failedOnce := forge.failures > 0
		forge.mu.Unlock()
		if failedOnce || time.Now().After(deadline) {
			break
		}
	}
	forge.mu.Lock()
	forge.broken["ccccccc3"] = false
	forge.mu.Unlock()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if status, _ := deliver(t, srv.URL, "synchronize", "ccccccc3", true); status == 202 || time.Now().After(deadline) {
			break // forgotten after its failure
		}
	}
	if got = waitReviews(t, forge, 3); len(got) != 3 || got[2].CommitID != "ccccccc3" {
		t.Errorf("after the forge's error: reviews %+v", got)
	}
	wh.Close()
	if len(forge.posted()) != 3 {
		t.Errorf("%d reviews in all, want 3", len(forge.posted()))
	}
	for _, tok := range forge.tokens {
		if tok != "token bot-token" {
			t.Errorf("a forge request with %q", tok)
		}
	}
}

// The issues a pull request's description links to are fetched from
// the forge, and the review reads them (context integrations).
func TestWebhookLinkedIssues(t *testing.T) {
	forge := &fakeForge{head: "aaaaaaa1", diffs: map[string]string{"aaaaaaa1": smallDiff}, broken: map[string]bool{}, limited: map[string]bool{}}
	fs := httptest.NewServer(forge)
	defer fs.Close()
	api := &stubAPI{}
	h, err := codereview.NewHandler(codereview.HandlerConfig{API: api})
	if err != nil {
		t.Fatal(err)
	}
	wh, err := h.Webhook(codereview.WebhookConfig{APIURL: fs.URL, Token: "bot-token", Secret: secret, Key: "sk-bot", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	srv := httptest.NewServer(wh)
	defer srv.Close()
	if status, out := deliverBody(t, srv.URL, "opened", "aaaaaaa1", "Fixes #12, and see #7 (this one).", true); status != 202 {
		t.Fatalf("%d %s", status, out)
	}
	waitReviews(t, forge, 1)
	if s := api.lastSystem(); !strings.Contains(s, "#12 Crash on empty input") || !strings.Contains(s, "panics when the input is empty") {
		t.Errorf("the review read %q", s)
	}
}
