// Command models writes the tiny random-weight models that the hostile
// harness serves besides the tests' Qwen3 (scripts/hostile/harness.py):
// a qwen35 and a gemma4 file, which run on Ollama's Go engine, and a
// llama file with a projector, which reads images.
//
//	go run ./scripts/hostile/models DIR
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/inferkit/inferkit/inference/inferencetest"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: models DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	files := []struct {
		name  string
		write func(string) error
	}{
		{"go-qwen35.gguf", func(p string) error {
			return inferencetest.WriteModel(p, inferencetest.Options{Arch: "qwen35", Seed: 1})
		}},
		{"go-gemma4.gguf", func(p string) error {
			return inferencetest.WriteModel(p, inferencetest.Options{Arch: "gemma4", SlidingWindow: 16, Seed: 1})
		}},
		{"vision.gguf", func(p string) error {
			return inferencetest.WriteModel(p, inferencetest.Options{Layers: 2, Embd: 128, FF: 256, Seed: 1})
		}},
		{"vision-mmproj.gguf", func(p string) error {
			return inferencetest.WriteProjector(p, inferencetest.ProjectorOptions{TextEmbd: 128, Seed: 1})
		}},
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if _, err := os.Stat(p); err == nil {
			continue
		}
		if err := f.write(p); err != nil {
			fmt.Fprintf(os.Stderr, "models: %s: %v\n", p, err)
			os.Exit(1)
		}
	}
}
