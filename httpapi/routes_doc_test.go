package httpapi_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/internal/routedoc"
)

// The route tables are the one list of the routes: the README lists
// exactly their routes, no more and no fewer, and the package doc does
// not copy them.
func TestRoutesDocumented(t *testing.T) {
	e := newEnv(t, func(cfg *httpapi.Config, _ *fakeEngine) { cfg.Metrics = prometheus.NewRegistry() })
	want := slices.Sorted(slices.Values(httpapi.Patterns(e.h)))
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range routedoc.Listed(string(readme), "/") {
		if !strings.HasPrefix(p[strings.Index(p, " ")+1:], "/v1/admin") {
			got = append(got, p)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("README.md lists\n%v\nthe route tables hold\n%v", got, want)
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	if listed := routedoc.Listed(string(doc), "/"); len(listed) > 0 {
		t.Errorf("doc.go copies the route list (%v); the README holds it", listed)
	}
}
