package inferencetest_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/tinymodel"
)

// TestFacadeForwards checks that every function of the facade gives what
// the function of the same name in internal/tinymodel gives, so that no
// name forwards to the wrong one.
func TestFacadeForwards(t *testing.T) {
	tok, err := os.ReadFile("testdata/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile("testdata/tokenizer_config.json")
	if err != nil {
		t.Fatal(err)
	}
	opts := inferencetest.Options{Arch: "qwen3", Seed: 3}
	popts := inferencetest.ProjectorOptions{Type: "gemma3", Seed: 5}
	read := func(path string) []byte {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write := func(f func(string) error) []byte {
		t.Helper()
		path := filepath.Join(t.TempDir(), "f.gguf")
		if err := f(path); err != nil {
			t.Fatal(err)
		}
		return read(path)
	}
	tests := []struct {
		name      string
		got, want any
	}{
		{"Model", read(inferencetest.Model(t, opts)), read(tinymodel.Model(t, opts))},
		{"WriteModel",
			write(func(p string) error { return inferencetest.WriteModel(p, opts) }),
			write(func(p string) error { return tinymodel.WriteModel(p, opts) })},
		{"Projector", read(inferencetest.Projector(t, popts)), read(tinymodel.Projector(t, popts))},
		{"WriteProjector",
			write(func(p string) error { return inferencetest.WriteProjector(p, popts) }),
			write(func(p string) error { return tinymodel.WriteProjector(p, popts) })},
		{"PNG", inferencetest.PNG(7, 5, 2), tinymodel.PNG(7, 5, 2)},
		{"Qwen3_0_6B", inferencetest.Qwen3_0_6B(), tinymodel.Qwen3_0_6B()},
		{"Qwen35_0_8B", inferencetest.Qwen35_0_8B(), tinymodel.Qwen35_0_8B()},
		{"ByteLevel", inferencetest.ByteLevel(), tinymodel.ByteLevel()},
		{"Gemma4Tokenizer", inferencetest.Gemma4Tokenizer(), tinymodel.Gemma4Tokenizer()},
		{"LoadTokenizer", must(inferencetest.LoadTokenizer("testdata/tokenizer.json", "")), must(tinymodel.LoadTokenizer("testdata/tokenizer.json", ""))},
		{"ParseTokenizer", must(inferencetest.ParseTokenizer(tok, cfg)), must(tinymodel.ParseTokenizer(tok, cfg))},
		{"Qwen3Template", inferencetest.Qwen3Template, tinymodel.Qwen3Template},
	}
	for _, tc := range tests {
		if b, ok := tc.got.([]byte); ok && len(b) == 0 {
			t.Errorf("%s: empty", tc.name)
		}
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s differs from tinymodel.%s", tc.name, tc.name)
		}
	}
	// Other options give other files: the comparisons above are not
	// between two defaults.
	if bytes.Equal(read(inferencetest.Model(t, inferencetest.Options{})), read(inferencetest.Model(t, opts))) {
		t.Error("Model ignores its options")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
