package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/codereview"
)

// stubAPI answers chat completions as the API does: under a review's
// schema, one comment on the first line the schema admits; without, a
// summary.
type stubAPI struct{}

func (stubAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ResponseFormat *struct {
			JSONSchema struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	content := "The change sets a to 2."
	if body.ResponseFormat != nil {
		var s struct {
			Properties struct {
				Comments struct {
					Items struct {
						Properties map[string]struct {
							Enum []any `json:"enum"`
						} `json:"properties"`
						AnyOf []struct {
							Properties map[string]struct {
								Enum []any `json:"enum"`
							} `json:"properties"`
						} `json:"anyOf"`
					} `json:"items"`
				} `json:"comments"`
			} `json:"properties"`
		}
		json.Unmarshal(body.ResponseFormat.JSONSchema.Schema, &s)
		p := s.Properties.Comments.Items.Properties
		if p == nil {
			p = s.Properties.Comments.Items.AnyOf[0].Properties
		}
		c, _ := json.Marshal(map[string]any{"comments": []any{map[string]any{"path": p["path"].Enum[0], "line": p["line"].Enum[0], "side": p["side"].Enum[0],
			"severity": "minor", "category": "style", "body": "Name the constant."}}})
		content = string(c)
	}
	b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": content}, "finish_reason": "stop"}},
		"usage": map[string]int{"prompt_tokens": 40, "completion_tokens": 9}})
	w.Write(b)
}

const diff = "--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n package x\n-var a = 1\n+var a = 2\n"

// server serves the code-review API over stubAPI, with accounts when
// accts is set.
func server(t *testing.T, accts *account.Accounts) string {
	t.Helper()
	h, err := codereview.NewHandler(codereview.HandlerConfig{API: stubAPI{}, Accounts: accts, Model: "reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// The command sends a diff file, standard input or a revision range to
// the server and prints the summary and each comment by file and line.
func TestReview(t *testing.T) {
	url := server(t, nil)
	file := filepath.Join(t.TempDir(), "change.diff")
	os.WriteFile(file, []byte(diff), 0o644)
	for _, source := range []string{file, "-"} {
		o, err := parseFlags([]string{"-url", url, "-key", "sk-x", source}, func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := run(context.Background(), o, strings.NewReader(diff), &out, http.DefaultClient); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "The change sets a to 2.") || !strings.Contains(out.String(), "x.go:1 (right) [minor, style]\n  Name the constant.") {
			t.Errorf("%s: printed\n%s", source, out.String())
		}
	}

	if _, err := exec.LookPath("git"); err == nil {
		dir := t.TempDir()
		git := func(args ...string) {
			cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v %s", args, err, out)
			}
		}
		git("init", "-q", "-b", "main")
		os.WriteFile(filepath.Join(dir, "x.go"), []byte("package x\nvar a = 1\n"), 0o644)
		git("add", ".")
		git("commit", "-q", "-m", "one")
		os.WriteFile(filepath.Join(dir, "x.go"), []byte("package x\nvar a = 2\n"), 0o644)
		git("commit", "-q", "-am", "two")
		t.Chdir(dir)
		o, _ := parseFlags([]string{"-url", url, "-key", "sk-x", "-kind", "release-notes", "HEAD~1..HEAD"}, func(string) string { return "" }, io.Discard)
		var out bytes.Buffer
		if err := run(context.Background(), o, nil, &out, http.DefaultClient); err != nil || !strings.Contains(out.String(), "The change sets a to 2.") {
			t.Errorf("a revision range: %v\n%s", err, out.String())
		}
	}
}

// A feature outside the account's plan is refused by the server, and
// the command says so as the server did.
func TestRefusedFeature(t *testing.T) {
	ctx := context.Background()
	accts, err := account.New(ctx, account.Config{Store: account.NewMemory(), PasswordIterations: 1000})
	if err != nil {
		t.Fatal(err)
	}
	accts.CreateAccount(ctx, account.NewAccount{ID: "acme", Name: "acme"})
	_, key, err := accts.CreateKey(ctx, "acme", "ci")
	if err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"-url", server(t, accts), "-security", "-"}, func(k string) string { return map[string]string{"INFERKIT_API_KEY": key}[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	err = run(ctx, o, strings.NewReader(diff), io.Discard, http.DefaultClient)
	if err == nil || !strings.Contains(err.Error(), "403: security scan is not in the free plan; the team plan has it") {
		t.Errorf("err %v", err)
	}
}

func TestParseFlags(t *testing.T) {
	for _, args := range [][]string{{"-kind", "poem"}, {"a", "b"}, {}} {
		env := map[string]string{}
		if len(args) > 0 {
			env["INFERKIT_API_KEY"] = "k"
		}
		if _, err := parseFlags(args, func(k string) string { return env[k] }, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
