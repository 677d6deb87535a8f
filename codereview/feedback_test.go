package codereview_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Feedback on a review's comments: a dismissed comment, with its note,
// becomes a memory of the repository that its next review reads (on a
// plan with memories); accepted comments are the account's fine-tuning
// set, one JSON line each; another account's review is not found, and
// a plan without fine-tuning gets a 403.
func TestFeedbackMemoriesFineTuning(t *testing.T) {
	p := newPlanServer(t, nil, map[string]string{"app": gitRepo(t)})
	key := p.account(t, "growing", "growth", false)
	review := map[string]any{"repository": "app", "base": "main", "head": "feature", "summary": false}
	status, out := p.post(t, key, review)
	if status != 200 {
		t.Fatalf("review: %d %s", status, out)
	}
	var rv struct {
		ID       string `json:"id"`
		Comments []struct {
			Path string `json:"path"`
			Body string `json:"body"`
		} `json:"comments"`
	}
	json.Unmarshal([]byte(out), &rv)
	if len(rv.Comments) < 2 {
		t.Fatalf("review %s: want a comment per file", out)
	}
	if strings.Contains(p.api.lastSystem(), "said this of earlier reviews") {
		t.Error("the first review read memories")
	}
	feedback := func(k, id string, comment int, accepted bool, note string) (int, string) {
		b, _ := json.Marshal(map[string]any{"comment": comment, "accepted": accepted, "note": note})
		return call(t, "POST", p.url+"/v1/code-review/reviews/"+id+"/feedback", k, string(b))
	}
	if status, out := feedback(key, rv.ID, 0, false, "We name constants only when they are reused."); status != 200 {
		t.Fatalf("dismissing: %d %s", status, out)
	}
	if status, out := feedback(key, rv.ID, 1, true, ""); status != 200 {
		t.Fatalf("accepting: %d %s", status, out)
	}
	if status, out := p.post(t, key, review); status != 200 || !strings.Contains(p.api.lastSystem(), "We name constants only when they are reused.") {
		t.Errorf("the next review: %d %s; it read %q", status, out, p.api.lastSystem())
	}

	req, _ := http.NewRequest("GET", p.url+"/v1/code-review/fine-tuning", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	var ex struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/jsonl" || len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &ex) != nil ||
		len(ex.Messages) != 3 || ex.Messages[2].Role != "assistant" || !strings.Contains(ex.Messages[1].Content, "File: "+rv.Comments[1].Path) ||
		!strings.Contains(ex.Messages[2].Content, rv.Comments[1].Body) {
		t.Errorf("fine-tuning: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}

	other := p.account(t, "other", "free", false)
	if status, out := feedback(other, rv.ID, 0, true, ""); status != 404 {
		t.Errorf("another account's review: %d %s", status, out)
	}
	req, _ = http.NewRequest("GET", p.url+"/v1/code-review/fine-tuning", nil)
	req.Header.Set("Authorization", "Bearer "+other)
	res, _ = http.DefaultClient.Do(req)
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 403 || !strings.Contains(string(body), "fine tuning is not in the free plan; the growth plan has it") {
		t.Errorf("fine-tuning on Free: %d %s", res.StatusCode, body)
	}
}
