//go:build cgo

package codereview_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/codereview"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

const key = "sk-review-test"

// api serves a tiny model as "reviewer" through a real httpapi Handler.
func api(t *testing.T) http.Handler {
	t.Helper()
	models := []catalog.Model{{ID: "reviewer", Path: inferencetest.Model(t, inferencetest.Options{Seed: 5, ContextLength: 4096})}}
	eng, err := inference.New(inference.Config{Models: models, Threads: 1, ContextTokens: 4096, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	keys, _ := httpapi.NewStaticKeys(key)
	h, err := httpapi.New(httpapi.Config{Engine: eng, Models: models, Keys: keys, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// recording keeps each generation's schema and answer.
type recording struct {
	gen     codereview.Generator
	schemas []json.RawMessage
	answers []string
}

func (r *recording) Generate(ctx context.Context, g codereview.Generation) (codereview.Generated, error) {
	out, err := r.gen.Generate(ctx, g)
	if err == nil && g.Schema != nil {
		r.schemas, r.answers = append(r.schemas, g.Schema), append(r.answers, out.Text)
	}
	return out, err
}

// A review of a real multi-file diff of this repository's history, on
// the tiny model through the API's chat completions: every piece's
// answer is valid JSON for its schema, and every comment's line exists
// in the diff.
func TestReviewRealDiff(t *testing.T) {
	diff, err := os.ReadFile("testdata/ea21f92.diff")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recording{gen: codereview.HTTPGenerator{API: api(t), Header: http.Header{"Authorization": {"Bearer " + key}}}}
	rv, err := codereview.New(codereview.Config{Generator: rec, PieceBytes: 3000, MaxTokens: 1500})
	if err != nil {
		t.Fatal(err)
	}
	res, err := rv.Run(context.Background(), codereview.Request{Model: "reviewer", Diff: string(diff)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 4 || res.Pieces == 0 || len(rec.answers) != res.Pieces || res.Summary == "" || res.Usage.PromptTokens == 0 {
		t.Fatalf("result %+v", res)
	}
	for i, s := range rec.schemas {
		c := jsonschema.NewCompiler()
		doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(s)))
		c.AddResource("piece.json", doc)
		sch, err := c.Compile("piece.json")
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(rec.answers[i]))
		if err != nil {
			t.Fatalf("piece %d: %v: %s", i, err, rec.answers[i])
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("piece %d: %v", i, err)
		}
	}
	files, _ := codereview.ParseDiff(string(diff))
	for _, c := range res.Comments {
		if !inDiff(files, c) {
			t.Errorf("comment %+v points at no line of the diff", c)
		}
	}
	t.Logf("%d pieces, %d comments, %d not reviewed", res.Pieces, len(res.Comments), len(res.NotReviewed))
}

// inDiff reports whether c points at a line of files on its side.
func inDiff(files []codereview.File, c codereview.Comment) bool {
	for _, f := range files {
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				if f.Path == c.Path && (c.Side == codereview.SideLeft && l.Kind == '-' && l.Old == c.Line || c.Side == codereview.SideRight && l.Kind != '-' && l.New == c.Line) {
					return true
				}
			}
		}
	}
	return false
}

// Over HTTP: a streamed review sends its comments as events and ends
// with done; a request without a key is a 401, one without a diff a
// 400 naming it, and a bad key the API's own 401.
func TestHandler(t *testing.T) {
	h, err := codereview.NewHandler(codereview.HandlerConfig{API: api(t), Config: codereview.Config{MaxTokens: 1500, PieceBytes: 3000}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	diff, _ := os.ReadFile("testdata/ea21f92.diff")
	post := func(k string, body map[string]any) (*http.Response, string) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", srv.URL+"/v1/code-review/reviews", strings.NewReader(string(b)))
		if k != "" {
			req.Header.Set("Authorization", "Bearer "+k)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res, string(out)
	}
	res, body := post(key, map[string]any{"model": "reviewer", "diff": string(diff), "stream": true, "summary": false})
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") || !strings.Contains(body, "event: done\n") {
		t.Fatalf("stream: %d %s", res.StatusCode, body)
	}
	if strings.Count(body, "event: comment\n") != strings.Count(body[strings.Index(body, "event: done"):], `"body"`) {
		t.Errorf("the comment events and the final review's comments differ: %s", body)
	}
	for _, tc := range []struct {
		key    string
		body   map[string]any
		status int
		want   string
	}{
		{"", map[string]any{"model": "reviewer", "diff": string(diff)}, 401, "API key"},
		{key, map[string]any{"model": "reviewer"}, 400, `"param":"diff"`},
		{key, map[string]any{"model": "reviewer", "diff": "not a diff"}, 400, "not a unified diff"},
		{key, map[string]any{"model": "reviewer", "diff": string(diff), "colour": "blue"}, 400, "colour"},
		{"sk-wrong", map[string]any{"model": "reviewer", "diff": string(diff)}, 401, "error"},
	} {
		if res, body := post(tc.key, tc.body); res.StatusCode != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%v: %d %s, want %d with %q", tc.body["diff"] != nil, res.StatusCode, body, tc.status, tc.want)
		}
	}
}
