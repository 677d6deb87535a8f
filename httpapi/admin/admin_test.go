package admin

import (
	"os"
	"slices"
	"testing"

	"github.com/inferkit/inferkit/internal/routedoc"
)

// The route table is the one list of the admin API's routes: the
// package doc and the README list exactly its routes.
func TestRoutesDocumented(t *testing.T) {
	var want []string
	for _, rt := range routes {
		want = append(want, rt.pattern)
	}
	slices.Sort(want)
	for _, name := range []string{"doc.go", "../../README.md"} {
		text, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := routedoc.Listed(string(text), "/v1/admin"); !slices.Equal(got, want) {
			t.Errorf("%s lists\n%v\nthe route table holds\n%v", name, got, want)
		}
	}
}
