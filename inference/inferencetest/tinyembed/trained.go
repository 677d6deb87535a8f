package tinyembed

import (
	_ "embed"
	"os"
	"path/filepath"
	"testing"
)

//go:embed embed.gguf
var embedModel []byte

// Model writes inferkit's tiny trained embedding model into a temporary
// folder of t and returns its path: a nomic-bert encoder of 2 layers of
// 128 with mean pooling (342,000 parameters, a 0.7 MB file), trained
// in the repository (scripts/train-tiny, make train-tiny) on the
// paraphrase pairs of [Pairs]. Of the sentences of [Relations], two
// phrasings of one fact embed closer together than either does to a
// fact that differs in who, what or relation: on the held-out
// [Probes] (seed 1), the right candidate is the nearest for
// [Accuracy] of them. t's cleanup removes the file. Model is safe for
// concurrent use.
func Model(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "embed.gguf")
	if err := Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// Write writes [Model]'s file to path, for programs (a demo server)
// rather than tests.
func Write(path string) error {
	return os.WriteFile(path, embedModel, 0o644)
}

// Accuracy is the share of 1,000 held-out probes (seed 1) whose right
// candidate [Model] embeds nearest the query, as scripts/train-tiny
// measured it through the engine: all of them (random weights of the
// same shape get 55%).
const Accuracy = 1.0
