package inprocess_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/httpapi/inprocess"
)

// Do keeps the status, header and body a handler writes (200 where it
// wrote none), gives a request without a body http.NoBody, and fails
// an answer past its bound.
func TestDo(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil {
			t.Error("the handler got a nil Body")
		}
		w.Header().Set("X-Test", "yes")
		if r.URL.Path == "/teapot" {
			w.WriteHeader(http.StatusTeapot)
		}
		w.Write([]byte(strings.Repeat("a", 100)))
	})
	r, _ := http.NewRequest("GET", "/teapot", nil)
	r.Body = nil
	a, err := inprocess.Do(h, r, 1000)
	if err != nil || a.Status != http.StatusTeapot || a.Header.Get("X-Test") != "yes" || len(a.Body) != 100 {
		t.Errorf("%+v %v", a, err)
	}
	r, _ = http.NewRequest("GET", "/", nil)
	if a, err := inprocess.Do(h, r, 1000); err != nil || a.Status != http.StatusOK {
		t.Errorf("no status written: %+v %v", a, err)
	}
	r, _ = http.NewRequest("GET", "/", nil)
	if _, err := inprocess.Do(h, r, 99); err == nil {
		t.Error("an answer past the bound")
	}
}
