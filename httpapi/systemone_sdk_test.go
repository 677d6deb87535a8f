//go:build cgo

package httpapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/internal/testmodels"
	"github.com/inferkit/inferkit/policy"
)

// System One's official TypeScript SDK (@typesafe-ai/sdk 0.6.0, fetched by
// scripts/fetch-testdata.sh), unmodified, against /v1/systemone on the
// real engine and the tiny Qwen3 model: every check of
// testdata/systemone/checks.mjs passes. They cover text, JSON and null
// instructions; a JSON state; the three question types with System One's
// confidence formulas; 255 options; bad requests as 4xx; a wrong key as
// 401; and the model list.
func TestSystemOneSDK(t *testing.T) {
	path := testmodels.Qwen3Tiny(t)
	judge, _ := policy.Model(policy.SystemOne9B)
	judge.Path = path
	models := []catalog.Model{judge}
	eng, err := inference.New(inference.Config{Models: models, Threads: 1, Parallel: 1, ContextTokens: 8192,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	keys, err := httpapi.NewStaticKeys("sk-test")
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpapi.New(httpapi.Config{Engine: eng, Models: models, Keys: keys, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	results := systemOneChecks(t, srv.URL, "sk-test")
	for _, name := range []string{"instructions: text, JSON and null", "JSON state", "three question types", "255 options", "bad request is a 4xx", "wrong key is a 401", "models"} {
		switch r, ok := results[name]; {
		case !ok:
			t.Errorf("%s: not run", name)
		case r != "ok":
			t.Errorf("%s: %s", name, r)
		}
	}
}

// systemOneChecks runs testdata/systemone/checks.mjs, System One's
// official SDK unmodified, against the server at url with key, and
// returns each check's result: "ok" or what failed. It skips t without
// Node.js or the SDK.
func systemOneChecks(t *testing.T, url, key string) map[string]string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the System One SDK test needs Node.js 20 or newer")
	}
	sdk := filepath.Join(testmodels.Root(t), ".build", "testdata", "npm", "@typesafe-ai", "sdk")
	if _, err := os.Stat(filepath.Join(sdk, "package.json")); err != nil {
		t.Skip("System One's SDK is not fetched: run scripts/fetch-testdata.sh (make test does)")
	}
	// The script imports the package by its name, as an application does.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "node_modules", "@typesafe-ai"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sdk, filepath.Join(dir, "node_modules", "@typesafe-ai", "sdk")); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join("testdata", "systemone", "checks.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "checks.mjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "checks.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TYPESAFE_BASE_URL="+url, "TYPESAFE_API_KEY="+key)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var results map[string]string
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("the checks printed %s: %v", out, err)
	}
	return results
}
