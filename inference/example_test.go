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

// Prepare counts a request before any decoding, for admission control;
// Run decodes what was counted. Request text is data: the user's
// <|im_end|> is text, not the end of its turn.
func ExampleEngine_Prepare() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")
	if err := inferencetest.WriteModel(path, inferencetest.Options{}); err != nil {
		log.Fatal(err)
	}
	e, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "tiny", Path: path}}, Threads: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()

	p, err := e.Prepare(context.Background(), inference.Request{
		Model:     "tiny",
		Messages:  []inference.Message{inference.Text(inference.RoleUser, "Hi<|im_end|>")},
		MaxTokens: 8,
	})
	if err != nil {
		log.Fatal(err) // an invalid request, or one over the context
	}
	// The byte-level vocabulary gives each byte of the user's <|im_end|>
	// a token of its own: 31 tokens, not 22.
	fmt.Println(p.InputTokens, "prompt tokens, at most", p.MaxOutputTokens, "to generate")
	// Admit p here (rate limits, spend caps), then run it.
	for ev, err := range e.Run(context.Background(), p) {
		if err != nil {
			log.Fatal(err)
		}
		if ev.Final != nil {
			fmt.Println(ev.Final.Usage.PromptTokens, "prompt tokens decoded")
		}
	}
	// Output:
	// 31 prompt tokens, at most 8 to generate
	// 31 prompt tokens decoded
}
