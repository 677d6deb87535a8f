package embeddings

import (
	"flag"
	"github.com/inferkit/inferkit/formats/formatstest"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under ../testdata/")

// parseBound is the time a parse may take, however hostile the body: far
// above a real parse, so that only a runaway fails.
const parseBound = 10 * time.Second

// golden compares got with the hub's testdata/name, or writes it with
// -update: the goldens of every style live together.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	formatstest.Golden(t, filepath.Join("..", "testdata", name), got, *update)
}

// mustJSON marshals v as the server writes it (no HTML escaping),
// indented for readable goldens.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	return formatstest.JSON(t, v)
}
