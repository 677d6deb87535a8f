//go:build cgo

package inference_test

import (
	"context"
	"errors"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/testmodels"
)

func TestChatMLPrompt(t *testing.T) {
	e := newEngine(t, inference.Config{Models: []catalog.Model{{ID: "tiny", Path: inferencetest.Model(t, inferencetest.Options{})}}})
	tests := []struct {
		name string
		msgs []inference.Message
		want int
	}{
		// <|im_start|> "user\nHi" <|im_end|> "\n" <|im_start|> "assistant\n":
		// the special tokens are one token each, every other byte one.
		{"one turn", []inference.Message{inference.Text(inference.RoleUser, "Hi")}, 1 + 7 + 1 + 1 + 1 + 10},
		{"system and user", []inference.Message{
			inference.Text(inference.RoleSystem, "Be brief."),
			inference.Text(inference.RoleUser, "Hi"),
		}, (1 + 16 + 1 + 1) + (1 + 7 + 1 + 1) + 1 + 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := inference.Request{Model: "tiny", Messages: tt.msgs, MaxTokens: 4}
			n, err := e.CountTokens(req)
			if err != nil || n != tt.want {
				t.Fatalf("CountTokens = %d, %v; want %d", n, err, tt.want)
			}
			res, err := e.Generate(context.Background(), req)
			if err != nil || res.Usage.PromptTokens != tt.want {
				t.Fatalf("PromptTokens = %d, %v; want %d", res.Usage.PromptTokens, err, tt.want)
			}
		})
	}
}

// The real Qwen3 chat template and tokenizer, on a tiny Qwen3-shaped model:
// the prompt is the template's rendering, tokenized as Qwen3 does.
func TestQwen3TemplatePrompt(t *testing.T) {
	tok := testmodels.Tokenizer(t, testmodels.Qwen3)
	path := inferencetest.Model(t, inferencetest.Options{Arch: "qwen3", Tokenizer: tok, Type: "q8_0", Embd: 64, FF: 128})
	e := newEngine(t, inference.Config{Models: []catalog.Model{{ID: "qwen", Path: path}}})
	info := e.Models()[0]
	if info.ChatTemplate != tok.ChatTemplate || info.Architecture != "qwen3" {
		t.Fatalf("model info %+v", info)
	}
	req := inference.Request{Model: "qwen", Messages: []inference.Message{
		inference.Text(inference.RoleSystem, "You are terse."),
		inference.Text(inference.RoleUser, "Hello, world!"),
	}}
	// What Python Jinja2 renders with transformers' settings, as a raw
	// prompt: the conversation must tokenize exactly like it.
	const python = "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHello, world!<|im_end|>\n<|im_start|>assistant\n"
	want, err := e.CountTokens(inference.Request{Model: "qwen", Prompt: python})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := e.CountTokens(req); err != nil || n != want {
		t.Fatalf("CountTokens = %d, %v; want %d, as the Python rendering", n, err, want)
	}
	// Roles out of the template's order are the request's fault.
	bad := req
	bad.Messages = []inference.Message{inference.Text(inference.RoleTool, "x")}
	if _, err := e.CountTokens(bad); err != nil && !errors.Is(err, inference.ErrInvalidRequest) {
		t.Errorf("got %v, want ErrInvalidRequest or success", err)
	}
}
