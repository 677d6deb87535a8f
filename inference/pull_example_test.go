//go:build cgo

package inference_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/hub/hubtest"
)

// A desktop app pulls its model by name, with a progress bar, into the
// user's cache directory, and serves it. Here the hub is a local fake
// that serves a tiny model; a real app writes hf.co/ORG/REPO:QUANT.
func ExamplePull() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	model := filepath.Join(dir, "tiny.gguf")
	if err := inferencetest.WriteModel(model, inferencetest.Options{}); err != nil {
		log.Fatal(err)
	}
	b, _ := os.ReadFile(model)
	h := hubtest.Start()
	defer h.Close()
	h.Add("inferkit/tiny-GGUF", map[string][]byte{"tiny-Q8_0.gguf": b})

	var last inference.PullProgress
	pulled, err := inference.Pull(context.Background(), h.URL+"/inferkit/tiny-GGUF:q8_0", filepath.Join(dir, "models"),
		func(p inference.PullProgress) { last = p }) // a real app draws p.Done/p.Total and p.Rate
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(filepath.Base(pulled.Path), last.Done == last.Total)

	e, err := inference.New(inference.Config{
		Models:  []catalog.Model{{ID: "tiny", Path: pulled.Path, Projector: pulled.Projector}},
		Threads: 1,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	res, err := e.Generate(context.Background(), inference.Request{
		Model:     "tiny",
		Messages:  []inference.Message{inference.Text(inference.RoleUser, "Hello!")},
		MaxTokens: 4,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Usage.PromptTokens, "prompt tokens")
	// Output:
	// tiny-Q8_0.gguf true
	// 25 prompt tokens
}
