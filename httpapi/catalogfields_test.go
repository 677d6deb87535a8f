package httpapi_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
)

// The listing's created is the catalog entry's, or else the
// modification time of the model's file; its datacenters are the
// entry's. A datacenter that is no ISO 3166-1 alpha-2 code fails New,
// naming it.
func TestCatalogCreatedAndDatacenters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.gguf")
	if err := os.WriteFile(path, []byte("GGUF"), 0o600); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(cfg *httpapi.Config, f *fakeEngine) {
		for i := range f.models {
			f.models[i].Path = path
		}
		for i := range cfg.Models {
			cfg.Models[i].Path = path
			if cfg.Models[i].ID == "core-2-5-pro" {
				cfg.Models[i].Created = 1_700_000_000
				cfg.Models[i].Datacenters = []string{"US", "DE"}
			}
		}
	})
	for _, tc := range []struct{ id, created, datacenters string }{
		{"core-2-5-mini", `"created":1748779200`, `"datacenters":[]`},
		{"core-2-5-pro", `"created":1700000000`, `"datacenters":[{"country_code":"US"},{"country_code":"DE"}]`},
	} {
		w := do(e.h, "GET", "/v1/models/"+tc.id, key, "")
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), tc.created) || !strings.Contains(w.Body.String(), tc.datacenters) {
			t.Errorf("%s: %d %s, want %s and %s", tc.id, w.Code, w.Body, tc.created, tc.datacenters)
		}
	}

	cfg := httpapi.Config{Engine: newFake(), Keys: e.keys,
		Models: []catalog.Model{{ID: "core-2-5-mini", Path: path, Datacenters: []string{"US", "EU"}}}}
	if _, err := httpapi.New(cfg); err == nil || !strings.Contains(err.Error(), `"EU"`) {
		t.Errorf("a datacenter EU: %v, want an error naming it", err)
	}
}
