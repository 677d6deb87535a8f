package inference_test

import (
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// TestConfigRefused: New refuses a Config it cannot serve, naming the
// field, before it loads anything; with or without cgo.
func TestConfigRefused(t *testing.T) {
	t.Setenv("INFERKIT_LIBLLAMA", "")
	models := []catalog.Model{{ID: "m", Path: "/nonexistent/m.gguf"}}
	for _, c := range []struct {
		cfg  inference.Config
		want string
	}{
		{inference.Config{}, "Config.Models"},
		{inference.Config{Models: models, Parallel: -1}, "Config.Parallel"},
		{inference.Config{Models: models, ContextTokens: -1}, "Config.ContextTokens"},
		{inference.Config{Models: models, KVTokens: -1}, "Config.KVTokens"},
		{inference.Config{Models: models, Parallel: 4, Batch: 8}, "Config.Batch"},
		{inference.Config{Models: []catalog.Model{{ID: "m"}}}, "m"},
		{inference.Config{Models: models, Backend: "libllama"}, "INFERKIT_LIBLLAMA"},
		{inference.Config{Models: models, Library: "/nonexistent/libllama.so"}, "Config.Library"},
		{inference.Config{Models: models, Backend: "vllm"}, "Config.Backend"},
	} {
		e, err := inference.New(c.cfg)
		if err == nil {
			e.Close()
			t.Errorf("New(%+v) served", c.cfg)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("New: %v, want it to name %s", err, c.want)
		}
	}
}

// TestNewLoadsWithBackendsOnly: a real model file loads where the backends
// are built in, and fails saying why where they are not (CGO_ENABLED=0),
// the rest of the engine being the same code either way.
func TestNewLoadsWithBackendsOnly(t *testing.T) {
	path := inferencetest.Model(t, inferencetest.Options{Seed: 1})
	e, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "tiny", Path: path}}, Threads: 1, ContextTokens: 64})
	if cgoBuild {
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		e.Close()
		return
	}
	if err == nil {
		e.Close()
		t.Fatal("New loaded a model without cgo")
	}
	if !strings.Contains(err.Error(), "cgo") {
		t.Errorf("New: %v, want it to say the backends need cgo", err)
	}
}
