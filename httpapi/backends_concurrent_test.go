//go:build cgo

package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// TestBackendsServeTogether: 60 chats at once over two models on Ollama's
// Go engine and one on llama.cpp all answer 200, each with the text its
// model gives the same chat alone. Two Go-engine models answering at once
// aborted the process (heap corruption in the CPU backend they share) or
// answered 400 "the output's grammar admits no further token".
func TestBackendsServeTogether(t *testing.T) {
	files := []struct {
		id   string
		opts inferencetest.Options
	}{
		{"go-qwen35", inferencetest.Options{Arch: "qwen35"}},
		{"go-gemma4", inferencetest.Options{Arch: "gemma4", SlidingWindow: 16}},
		{"cpp-qwen3", inferencetest.Options{Seed: 3, Arch: "qwen3", ChatTemplate: inferencetest.Qwen3Template}},
	}
	var models []catalog.Model
	for _, f := range files {
		models = append(models, catalog.Model{ID: f.id, Path: inferencetest.Model(t, f.opts)})
	}
	url := serveEngine(t, inference.Config{Models: models, Parallel: 4, ContextTokens: 256, Queue: 64}, httpapi.Config{Models: models}, "")
	chat := func(model string, i int) (int, string, error) {
		body := fmt.Sprintf(`{"model":%q,"max_tokens":8,"temperature":0,"messages":[{"role":"user","content":"Question %d: what comes next?"}]}`, model, i%5)
		req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var c struct {
			Choices []struct {
				Message struct{ Content, ReasoningContent string } `json:"message"`
			} `json:"choices"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &c) != nil || len(c.Choices) != 1 {
			return resp.StatusCode, string(b), nil
		}
		m := c.Choices[0].Message
		return resp.StatusCode, m.ReasoningContent + "|" + m.Content, nil
	}
	alone := map[string]string{}
	for _, f := range files {
		for i := range 5 {
			code, text, err := chat(f.id, i)
			if err != nil || code != http.StatusOK {
				t.Fatalf("%s alone: %d %v %s", f.id, code, err, text)
			}
			alone[fmt.Sprint(f.id, i)] = text
		}
	}
	const n = 60
	var wg sync.WaitGroup
	codes, texts, errs := make([]int, n), make([]string, n), make([]error, n)
	for i := range n {
		wg.Go(func() { codes[i], texts[i], errs[i] = chat(files[i%len(files)].id, i) })
	}
	wg.Wait()
	for i := range n {
		id := files[i%len(files)].id
		switch {
		case errs[i] != nil:
			t.Errorf("chat %d (%s): %v", i, id, errs[i])
		case codes[i] != http.StatusOK:
			t.Errorf("chat %d (%s): %d %s", i, id, codes[i], texts[i])
		case texts[i] != alone[fmt.Sprint(id, i%5)]:
			t.Errorf("chat %d (%s): %q, alone %q", i, id, texts[i], alone[fmt.Sprint(id, i%5)])
		}
	}
}
