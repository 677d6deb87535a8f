package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/policy"
)

// A configured key keeps no surrounding white space (a key file's
// newline), and X-Api-Key counts when Authorization is not a bearer.
func TestKeyForms(t *testing.T) {
	keys, err := httpapi.NewStaticKeys("sk-from-file\n")
	if err != nil {
		t.Fatal(err)
	}
	small, _ := policy.Model(policy.SystemOne340M)
	small.Path = "/m/enc.gguf"
	h, err := httpapi.New(httpapi.Config{Engine: &scoringEngine{}, Models: []catalog.Model{small}, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		headers map[string]string
		ok      bool
	}{
		{"bearer, trimmed key", map[string]string{"Authorization": "Bearer sk-from-file"}, true},
		{"basic, with x-api-key", map[string]string{"Authorization": "Basic dXNlcjpwYXNz", "X-Api-Key": "sk-from-file"}, true},
		{"basic alone", map[string]string{"Authorization": "Basic dXNlcjpwYXNz"}, false},
		{"wrong bearer, right x-api-key", map[string]string{"Authorization": "Bearer sk-wrong", "X-Api-Key": "sk-from-file"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/v1/system/models", nil)
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if ok := w.Code == http.StatusOK; ok != tt.ok {
				t.Errorf("status %d, want ok=%v", w.Code, tt.ok)
			}
		})
	}
}

// Stores given one secret give a key one id (replicas, restarts); a
// short secret is refused.
func TestSharedKeys(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	var ids []string
	for range 2 {
		keys, err := httpapi.NewSharedKeys(secret, httpapi.APIKey{Key: "sk-shared"})
		if err != nil {
			t.Fatal(err)
		}
		id, err := keys.Authenticate(context.Background(), "sk-shared")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id.KeyID)
	}
	other, _ := httpapi.NewSharedKeys([]byte("another secret of thirty-two bytes"), httpapi.APIKey{Key: "sk-shared"})
	id, _ := other.Authenticate(context.Background(), "sk-shared")
	if ids[0] != ids[1] || id.KeyID == ids[0] {
		t.Errorf("ids %q under one secret, %q under another", ids, id.KeyID)
	}
	if _, err := httpapi.NewSharedKeys(secret[:31], httpapi.APIKey{Key: "sk-shared"}); err == nil {
		t.Error("a 31-byte secret was accepted")
	}
}
