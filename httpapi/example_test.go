package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"iter"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/policy"
)

// echo is a stand-in for *inference.Engine that answers with the last
// message.
type echo struct{}

func (echo) Models() []inference.ModelInfo {
	return []inference.ModelInfo{{ID: "core-2-5-mini", Path: "model.gguf", ContextLength: 4096}}
}

// CountTokens counts one token per word.
func (echo) CountTokens(req inference.Request) (int, error) {
	n := 0
	for _, m := range req.Messages {
		n += len(strings.Fields(m.Content[0].Text))
	}
	return n, nil
}

// Prepare counts the prompt and leaves the output its limit.
func (e echo) Prepare(ctx context.Context, req inference.Request) (*inference.Prepared, error) {
	n, err := e.CountTokens(req)
	return &inference.Prepared{Request: req, InputTokens: n, MaxOutputTokens: req.MaxTokens}, err
}

// Run answers with the last message.
func (e echo) Run(ctx context.Context, p *inference.Prepared) iter.Seq2[inference.Event, error] {
	return func(yield func(inference.Event, error) bool) {
		req := p.Request
		last := req.Messages[len(req.Messages)-1].Content[0].Text
		yield(inference.Event{Final: &inference.Result{Text: last, FinishReason: inference.FinishStop,
			Usage: inference.Usage{PromptTokens: p.InputTokens, CompletionTokens: 1}}}, nil)
	}
}

// A Handler on a caller's mux, the generation routes beside the caller's
// own; in a real server the engine is an *inference.Engine.
func Example() {
	keys, err := httpapi.NewStaticKeys("sk-example")
	if err != nil {
		log.Fatal(err)
	}
	model, _ := policy.Model(policy.Core25Mini)
	model.Path = "model.gguf"
	h, err := httpapi.New(httpapi.Config{
		Engine: echo{},
		Models: []catalog.Model{model},
		Keys:   keys,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	post := func(key, body string) {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		fmt.Println(res.StatusCode, strings.Contains(string(b), `"text":"Hi there"`), strings.Contains(string(b), "authentication_error"))
	}
	body := `{"model":"core-2-5-mini","max_tokens":64,"messages":[{"role":"user","content":"Hi there"}]}`
	post("sk-example", body)
	post("sk-wrong", body)
	// Output:
	// 200 true false
	// 401 false true
}

// The generation routes on base_url and the catalog on api_url, each
// mounted under its own prefix.
func ExampleHandler_RegisterGeneration() {
	keys, _ := httpapi.NewStaticKeys("sk-example")
	h, err := httpapi.New(httpapi.Config{Engine: echo{}, Keys: keys, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	base, api := http.NewServeMux(), http.NewServeMux()
	h.RegisterGeneration(base)
	h.RegisterModels(api)

	root := http.NewServeMux()
	root.Handle("/inference/", http.StripPrefix("/inference", base))
	root.Handle("/platform/", http.StripPrefix("/platform", api))

	for _, path := range []string{"/platform/v1/models/core-2-5-mini", "/inference/v1/models"} {
		r := httptest.NewRequest("GET", path, nil)
		r.Header.Set("Authorization", "Bearer sk-example")
		w := httptest.NewRecorder()
		root.ServeHTTP(w, r)
		fmt.Println(path, w.Code)
	}
	// Output:
	// /platform/v1/models/core-2-5-mini 200
	// /inference/v1/models 404
}
