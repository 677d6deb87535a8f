package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
)

// A configured key keeps no surrounding white space (a key file's
// newline), and X-Api-Key counts when Authorization is not a bearer.
func TestKeyForms(t *testing.T) {
	keys, err := httpapi.NewStaticKeys("sk-from-file\n")
	if err != nil {
		t.Fatal(err)
	}
	small, _ := catalog.Defaults(catalog.SystemOne340M)
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
