package codereview_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/account/redisaccount"
	"github.com/inferkit/inferkit/codereview"
	"github.com/inferkit/inferkit/internal/redistest"
)

// Two replicas on one Redis share the reviews: a review made through
// one takes feedback through the other, whose analytics count it, and
// the first exports the accepted comment; a third replica that starts
// later reads the repository's memories the feedback made.
func TestReplicasShareReviews(t *testing.T) {
	rdb := redistest.Client(t, redistest.Start(t))
	store, err := redisaccount.New(redisaccount.Config{Client: rdb})
	if err != nil {
		t.Fatal(err)
	}
	accts, err := account.New(t.Context(), account.Config{Store: store, PasswordIterations: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := accts.CreateAccount(t.Context(), account.NewAccount{ID: "acme", Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := accts.Subscribe(t.Context(), "acme", "growth"); err != nil {
		t.Fatal(err)
	}
	_, key, err := accts.CreateKey(t.Context(), "acme", "ci")
	if err != nil {
		t.Fatal(err)
	}
	api := &stubAPI{}
	replica := func() (string, *codereview.Handler) {
		h, err := codereview.NewHandler(codereview.HandlerConfig{API: api, Accounts: accts, Model: "m", Store: store, Repositories: map[string]string{"app": gitRepo(t)}})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL, h
	}
	post := func(url, path, body string) (int, string) {
		t.Helper()
		return call(t, "POST", url+path, key, body)
	}
	a, ha := replica()
	b, hb := replica()
	status, out := post(a, "/v1/code-review/reviews", `{"repository":"app","base":"main","head":"feature","summary":false}`)
	var rv struct{ ID string }
	if json.Unmarshal([]byte(out), &rv); status != 200 || rv.ID == "" {
		t.Fatalf("review on a: %d %s", status, out)
	}
	if status, out := post(b, "/v1/code-review/reviews/"+rv.ID+"/feedback", `{"comment":0,"accepted":false,"note":"We allow magic numbers in tests."}`); status != 200 {
		t.Fatalf("feedback on b: %d %s", status, out)
	}
	if status, out := post(b, "/v1/code-review/reviews/"+rv.ID+"/feedback", `{"comment":1,"accepted":true}`); status != 200 {
		t.Fatalf("feedback on b: %d %s", status, out)
	}
	months, err := hb.Analytics(t.Context(), "acme")
	if err != nil || len(months) != 1 || months[0].Reviews != 1 || months[0].Accepted != 1 || months[0].Dismissed != 1 {
		t.Errorf("b's analytics: %+v %v", months, err)
	}
	if obs, err := ha.Observations(t.Context(), "acme"); err != nil || len(obs) != 1 || obs[0].ID != rv.ID {
		t.Errorf("a's observations: %+v %v", obs, err)
	}
	status, body := call(t, "GET", a+"/v1/code-review/fine-tuning", key, "")
	if lines := strings.Split(strings.TrimSpace(body), "\n"); status != 200 || len(lines) != 1 || !strings.Contains(lines[0], "File: ") {
		t.Errorf("a's fine-tuning set: %d %s", status, body)
	}
	c, _ := replica()
	if status, out := post(c, "/v1/code-review/reviews", `{"repository":"app","base":"main","head":"feature","summary":false}`); status != 200 ||
		!strings.Contains(api.lastSystem(), "We allow magic numbers in tests.") {
		t.Errorf("a later replica's review: %d %s; it read %q", status, out, api.lastSystem())
	}
}
