package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/httpapi"
)

// The stages work apart from a Handler, in front of a caller's own
// handler: LimitBody's 413 and Authenticate's 401 come in the style
// that ErrorStyle set, and Authenticate passes the key's Identity on.
func TestStagesApart(t *testing.T) {
	keys, err := httpapi.NewStaticKeys(key)
	if err != nil {
		t.Fatal(err)
	}
	own := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := httpapi.IdentityFrom(r.Context()); !ok {
			t.Error("no identity")
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			httpapi.Fail(w, r, nil, err)
			return
		}
		_ = httpapi.WriteJSON(w, http.StatusOK, map[string]int{"read": len(b)})
	})
	h := httpapi.ErrorStyle(formats.StyleMessages)(httpapi.Authenticate(keys, nil, nil)(httpapi.LimitBody(8)(own)))
	for _, tc := range []struct {
		key, body string
		status    int
		want      string
	}{
		{key, "1234", 200, `{"read":4}`},
		{key, "123456789", 413, `"type":"error"`},
		{"", "1234", 401, `"type":"error"`},
	} {
		w := do(h, "POST", "/own", tc.key, tc.body)
		if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("key %q body %q: %d %s, want %d %s", tc.key, tc.body, w.Code, w.Body, tc.status, tc.want)
		}
	}
}
