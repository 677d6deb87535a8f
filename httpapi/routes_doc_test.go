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

// The route tables are the one list of the routes: the package doc and
// the README list exactly their routes, no more and no fewer.
func TestRoutesDocumented(t *testing.T) {
	e := newEnv(t, func(cfg *httpapi.Config, _ *fakeEngine) { cfg.Metrics = prometheus.NewRegistry() })
	want := slices.Sorted(slices.Values(httpapi.Patterns(e.h)))
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"doc.go": string(doc), "README.md": string(readme)} {
		var got []string
		for _, p := range routedoc.Listed(text, "/") {
			if !strings.HasPrefix(p[strings.Index(p, " ")+1:], "/v1/admin") {
				got = append(got, p)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s lists\n%v\nthe route tables hold\n%v", name, got, want)
		}
	}
}
