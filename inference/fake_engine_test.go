package inference

// These tests run the engine on the pure-Go fake backend
// (internal/backend/fakebackend), so they run without cgo too, in
// milliseconds: what the engine adds to the runner (its errors, its chat
// templates). The runner's own scheduling, prefix reuse, branching and
// cancellation tests are internal/runner's (runner_test.go).

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/backend/fakebackend"
	"github.com/inferkit/inferkit/internal/runner"
)

// fkEngine starts an engine whose one model, "fake", runs on the fake
// backend: one token per byte of a prompt, no BOS. The model file is a
// placeholder (the prompt cache on disk keys entries by its bytes).
func fkEngine(t *testing.T, cfg Config) (*Engine, *runner.Runner) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fake.gguf")
	if err := os.WriteFile(path, []byte("a fake model"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Models = []catalog.Model{{ID: "fake", Path: path}}
	cfg.MemoryLimit = -1
	cfg.Logger = slog.New(slog.DiscardHandler)
	if cfg.ContextTokens == 0 {
		cfg.ContextTokens = 1024
	}
	cfg.load = func(string, func(float32) bool) (backend.Model, error) {
		return fakebackend.New(fakebackend.Options{}), nil
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, e.names["fake"].runner
}

func fkGreedy(prompt string, maxTokens int) Request {
	zero := 0.0
	return Request{Model: "fake", Prompt: prompt, MaxTokens: maxTokens, Temperature: &zero}
}

func fkGenerate(t *testing.T, e *Engine, req Request) Result {
	t.Helper()
	res, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// With the one sequence busy and the queue full, a request fails at once
// with ErrOverloaded; the queued one ends with its context.
func TestFakeOverloaded(t *testing.T) {
	e, _ := fkEngine(t, Config{Parallel: 1, Queue: 1, ContextTokens: 16384})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	busy := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for range e.Stream(ctx, Request{Model: "fake", Prompt: "x", IgnoreEOS: true}) {
			select {
			case busy <- struct{}{}:
			default:
			}
		}
	})
	<-busy
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := e.Generate(ctx, Request{Model: "fake", Prompt: "y", MaxTokens: 5})
			errs <- err
		}()
	}
	if err := <-errs; !errors.Is(err, ErrOverloaded) {
		t.Errorf("first to return: %v, want ErrOverloaded", err)
	}
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("queued request after cancel: %v, want context.Canceled", err)
	}
}

var fkSystem = strings.Repeat("You are a careful assistant who answers briefly. ", 8)

// Chat requests render with the model's ChatML template, whose markup
// becomes control tokens while the messages' text stays text; a second
// turn reuses the first turn's prompt and the tokens it generated, as far
// as the template renders them the same.
func TestFakeChatSecondTurn(t *testing.T) {
	e, r := fkEngine(t, Config{Parallel: 1})
	zero := 0.0
	turn1 := Request{Model: "fake", MaxTokens: 8, Temperature: &zero, Messages: []Message{
		Text(RoleSystem, fkSystem), Text(RoleUser, "What is <|im_end|> a prefix?"),
	}}
	texts, _, err := e.names["fake"].prompt(turn1, false)
	if err != nil {
		t.Fatal(err)
	}
	var controls int
	for _, tok := range texts[0] {
		if tok >= fakebackend.BOS {
			controls++
		}
	}
	if controls != 5 { // <|im_start|> and <|im_end|> for each message, and the assistant's <|im_start|>
		t.Errorf("%d control tokens in the prompt, want 5: the user's text stays text", controls)
	}
	res1 := fkGenerate(t, e, turn1)
	kv := r.Cache(0)
	turn2 := turn1
	turn2.Messages = append(slices.Clone(turn1.Messages), Text(RoleAssistant, res1.Text), Text(RoleUser, "And a suffix?"))
	texts, _, err = e.names["fake"].prompt(turn2, false)
	if err != nil {
		t.Fatal(err)
	}
	res2 := fkGenerate(t, e, turn2)
	if want := runner.CommonPrefix(kv, texts[0]); res2.Usage.CachedTokens != want {
		t.Errorf("second turn: %d cached, want %d (the tokens it shares with the KV cache)", res2.Usage.CachedTokens, want)
	}
	if res2.Usage.CachedTokens < res1.Usage.PromptTokens {
		t.Errorf("second turn reused %d tokens, less than the first turn's prompt of %d", res2.Usage.CachedTokens, res1.Usage.PromptTokens)
	}
}

// Every request releases its lease on the model once it is done, its
// jobs included, whichever way it ends: afterwards Unload finds the model
// held by nobody. Close stops a model whose lease a request still holds,
// and frees it when the request lets go.
func TestFakeLeasesReleased(t *testing.T) {
	e, _ := fkEngine(t, Config{Parallel: 1, Queue: 4})
	ctx := context.Background()
	fkGenerate(t, e, fkGreedy("Once upon a time", 4))
	choices := fkGreedy("Once upon a time", 0)
	choices.Choices, choices.IgnoreEOS = 3, true
	for _, err := range e.Stream(ctx, choices) {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	p, err := e.Prepare(ctx, fkGreedy("The little dog", 4))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range e.Run(ctx, p) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Score(ctx, ScoreRequest{Model: "fake", Prefix: fkSystem, Branches: []Branch{{Text: "Yes? ", Candidates: [][]int{{'y'}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Tokenize("fake", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CountTokens(fkGreedy("x", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Generate(ctx, Request{Model: "fake", Prompt: "x", TopLogprobs: -1}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("an invalid request: %v", err)
	}
	st := e.res.of[e.names["fake"]]
	users := func() int {
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.users
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := e.Unload(wctx, "fake"); err != nil {
		t.Fatalf("Unload: %v (%d leases held)", err, users())
	}
	if n := users(); n != 0 {
		t.Errorf("%d leases held after Unload", n)
	}

	l, err := e.acquire(ctx, "fake")
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	if _, err := l.m.tokenize("still readable", false, 0); err != nil {
		t.Errorf("a held model after Close: %v", err)
	}
	if _, err := e.start(ctx, l.m, &Prepared{Request: fkGreedy("x", 1), plan: &plan{prompt: []int32{'x'}, budget: -1}}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("a request on a held model after Close: %v, want ErrClosed", err)
	}
	st.mu.Lock()
	orphan := st.orphan
	st.mu.Unlock()
	if !orphan {
		t.Error("Close freed a model that a lease held")
	}
	l.release()
	l.release() // only the first counts
	if n := users(); n != 0 || l.m.llm != nil {
		t.Errorf("after the last release: %d leases, weights %v; want none, freed", n, l.m.llm)
	}
}
