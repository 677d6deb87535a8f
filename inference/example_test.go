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
)

func Example() {
	// A tiny model with random weights, written in milliseconds; a real
	// program names its GGUF file.
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")
	if err := inferencetest.WriteModel(path, inferencetest.Options{}); err != nil {
		log.Fatal(err)
	}

	e, err := inference.New(inference.Config{
		Models:  []catalog.Model{{ID: "tiny", Path: path}},
		Threads: 1,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()

	req := inference.Request{
		Model:     "tiny",
		Messages:  []inference.Message{inference.Text(inference.RoleUser, "Hello!")},
		MaxTokens: 8,
	}
	for ev, err := range e.Stream(context.Background(), req) {
		if err != nil {
			log.Fatal(err)
		}
		// ev.Text holds the next piece of the answer; this model's is noise.
		if ev.Final != nil {
			fmt.Println(ev.Final.Usage.PromptTokens, "prompt tokens")
		}
	}
	// Output:
	// 25 prompt tokens
}
