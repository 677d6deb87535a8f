//go:build cgo

package httpapi_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/inferkit/inferkit/internal/testmodels"
	"github.com/inferkit/inferkit/policy"
)

// ollamaModel is the name the Ollama test gives the tiny trained story
// model, with a template that shows tools.
const ollamaModel = "tiny"

// ollamaModelfile makes ollamaModel from a GGUF file: a plain template
// that lists the offered tools, and the model's context.
const ollamaModelfile = `FROM %s
TEMPLATE """{{ if .Tools }}Tools: {{ range .Tools }}{{ .Function.Name }} {{ end }}
{{ end }}{{ range .Messages }}{{ .Content }}
{{ end }}"""
PARAMETER num_ctx 512
`

// startOllama runs Ollama, built from the Go module proxy as a user
// builds it (make ollama: go install github.com/ollama/ollama@v0.24.0),
// on a free port with its models in a temporary folder, serving the tiny
// trained story model as ollamaModel. It returns the OpenAI-compatible
// base URL's host part. It skips t without the binary or the model.
func startOllama(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("INFERKIT_OLLAMA")
	if bin == "" {
		bin = filepath.Join(testmodels.Root(t), ".build", "ollama", "ollama")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("skipping: Ollama is not built at %s (make ollama builds it from the Go module proxy; make test does)", bin)
	}
	gguf, err := filepath.Abs(filepath.Join(testmodels.Root(t), "..", "shared", "models", "stories260K.gguf"))
	if err == nil {
		_, err = os.Stat(gguf)
	}
	if err != nil {
		t.Skipf("skipping: the tiny trained model is not at ../shared/models/stories260K.gguf (%v)", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	env := append(os.Environ(), "OLLAMA_HOST="+host, "OLLAMA_MODELS="+filepath.Join(dir, "models"), "HOME="+dir, "OLLAMA_NOPRUNE=1")
	ctx, cancel := context.WithCancel(context.Background())
	serve := exec.CommandContext(ctx, bin, "serve")
	serve.Env = env
	logs, _ := os.Create(filepath.Join(dir, "serve.log"))
	serve.Stdout, serve.Stderr = logs, logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		serve.Wait()
		logs.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logs.Name())
			t.Logf("ollama serve:\n%s", b[max(0, len(b)-4000):])
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + host + "/api/version")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ollama serve did not answer: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	modelfile := filepath.Join(dir, "Modelfile")
	os.WriteFile(modelfile, []byte(fmt.Sprintf(ollamaModelfile, gguf)), 0o644)
	create := exec.CommandContext(ctx, bin, "create", ollamaModel, "-f", modelfile)
	create.Env = env
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("ollama create: %v\n%s", err, out)
	}
	return "http://" + host
}

// TestRemoteOllama: the official OpenAI, Anthropic and System One SDKs
// against inferkit fronting Ollama: blocking and streaming, tools,
// structured output and decisions. Ollama is keyless: the gateway's
// key is the only one the clients hold.
func TestRemoteOllama(t *testing.T) {
	up := startOllama(t)
	gw := gatewayAs(t, 512, ollamaModel, up)
	ctx := context.Background()
	client := openaiSDK(gw, key)
	direct := openaiSDK(up, "ollama")

	params := chatRequest("Once upon a time")
	params.MaxTokens = openai.Int(16)
	c, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	straight := params
	straight.Model = ollamaModel
	want, err := direct.Chat.Completions.New(ctx, straight)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("through inferkit: %q; straight from Ollama: %q", c.Choices[0].Message.Content, want.Choices[0].Message.Content)
	if c.Choices[0].Message.Content != want.Choices[0].Message.Content || c.Usage.PromptTokens != want.Usage.PromptTokens || c.Model != policy.Core25Mini {
		t.Errorf("through inferkit %+v, straight %+v", c.Choices[0], want.Choices[0])
	}

	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	params.Logprobs, params.TopLogprobs = openai.Bool(true), openai.Int(2)
	s := client.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.Choices[0].Message.Content != want.Choices[0].Message.Content || acc.Usage.CompletionTokens != want.Usage.CompletionTokens ||
		len(acc.Choices[0].Logprobs.Content) == 0 {
		t.Errorf("streamed %q %+v", acc.Choices[0].Message.Content, acc.Usage)
	}

	// Tools reach Ollama (its template lists them), and the answer comes
	// back in each style.
	tools := chatRequest("What is the weather in Paris?")
	tools.MaxTokens = openai.Int(16)
	tools.Tools = chatTools(t)
	tools.ReasoningEffort = shared.ReasoningEffortNone
	if c, err := client.Chat.Completions.New(ctx, tools); err != nil || c.Choices[0].Message.Content == "" && len(c.Choices[0].Message.ToolCalls) == 0 {
		t.Errorf("chat with tools: %+v %v", c, err)
	}
	ac := anthropicSDK(gw, key)
	ms := ac.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: policy.Core25Mini, MaxTokens: 16,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather in Paris?"))},
		Tools:    anthropicTools(t), Temperature: anthropic.Float(0)})
	var msg anthropic.Message
	for ms.Next() {
		if err := msg.Accumulate(ms.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := ms.Err(); err != nil || len(msg.Content) == 0 || msg.Usage.OutputTokens == 0 {
		t.Errorf("messages: %+v %v", msg, err)
	}

	// Structured output is Ollama's json_schema.
	js := chatRequest("Once upon a time")
	js.MaxTokens = openai.Int(8)
	js.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	if c, err := client.Chat.Completions.New(ctx, js); err != nil || !strings.HasPrefix(strings.TrimSpace(c.Choices[0].Message.Content), "{") {
		t.Errorf("json_object: %+v %v", c, err)
	}

	// Decisions, from Ollama's first-token log-probabilities, through
	// System One's SDK: every check but the one of 255 options, which a
	// remote engine refuses by name.
	results := systemOneChecks(t, gw, key)
	for name, r := range results {
		switch {
		case name == "255 options":
			if !strings.Contains(r, "remote engine") {
				t.Errorf("%s: %s", name, r)
			}
		case r != "ok":
			t.Errorf("%s: %s", name, r)
		}
	}
	if len(results) < 7 {
		t.Errorf("checks %v", results)
	}
}
