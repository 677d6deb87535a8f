package codereview_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/codereview"
)

// gitRepo makes a repository whose branch feature changes a file of
// main, and returns its folder.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q", "-b", "main")
	write("x.go", "package x\n\nvar a = 1\n")
	run("add", ".")
	run("commit", "-q", "-m", "one")
	run("checkout", "-q", "-b", "feature")
	write("x.go", "package x\n\nvar a = 2\n")
	write("y.go", "package x\n\nvar b = 3\n")
	run("add", ".")
	run("commit", "-q", "-m", "two")
	return dir
}

// A review of a range of a repository the server reads: the changes of
// head since it left base, every file of them; refs that are no refs,
// and repositories the server does not read, are 400s naming the field.
func TestRepositoryRange(t *testing.T) {
	h, err := codereview.NewHandler(codereview.HandlerConfig{API: &stubAPI{}, Repositories: map[string]string{"app": gitRepo(t)}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(route string, body map[string]any) (int, string) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", srv.URL+"/v1/code-review/"+route, strings.NewReader(string(b)))
		req.Header.Set("Authorization", "Bearer sk-x")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode, string(out)
	}
	status, out := post("reviews", map[string]any{"model": "m", "repository": "app", "base": "main", "head": "feature"})
	if status != 200 || !strings.Contains(out, `"files":2`) {
		t.Fatalf("a range: %d %s", status, out)
	}
	if status, out := post("release-notes", map[string]any{"model": "m", "repository": "app", "base": "main", "head": "feature"}); status != 200 || !strings.Contains(out, `"kind":"release_notes"`) {
		t.Errorf("release notes over a range: %d %s", status, out)
	}
	for _, tc := range []struct {
		body  map[string]any
		param string
	}{
		{map[string]any{"model": "m", "repository": "app", "base": "--output=/tmp/x", "head": "feature"}, "base"},
		{map[string]any{"model": "m", "repository": "app", "base": "main", "head": "nonesuch"}, "base"},
		{map[string]any{"model": "m", "repository": "app", "base": "feature", "head": "feature"}, "head"},
		{map[string]any{"model": "m", "repository": "elsewhere", "base": "main", "head": "feature"}, "repository"},
		{map[string]any{"model": "m", "repository": "app", "base": "main", "head": "feature", "diff": "x"}, "diff"},
	} {
		status, out := post("reviews", tc.body)
		if status != 400 || !strings.Contains(out, `"param":"`+tc.param+`"`) {
			t.Errorf("%v: %d %s, want a 400 naming %s", tc.body, status, out, tc.param)
		}
	}
}
