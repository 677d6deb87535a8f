//go:build cgo

package inference_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// storiesPath is the real trained tiny llama that CI keeps beside the
// checkout. Tests of real generation skip without it.
func storiesPath(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs("../../shared/models/stories260K.gguf")
	if err == nil {
		if _, err = os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("skipping: the tiny trained model is not at ../shared/models/stories260K.gguf (%v); CI has it beside the checkout", err)
	return ""
}

// newEngine starts an engine for a test. Tests decode with one thread:
// llama.cpp's threads spin while they wait, and test binaries of several
// packages run side by side on CI's two cores.
func newEngine(t testing.TB, cfg inference.Config) *inference.Engine {
	t.Helper()
	if cfg.Threads == 0 {
		cfg.Threads = 1
	}
	e, err := inference.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func stories(t testing.TB, parallel int) *inference.Engine {
	return newEngine(t, inference.Config{
		Models:        []catalog.Model{{ID: "stories", Path: storiesPath(t)}},
		Parallel:      parallel,
		ContextTokens: 256,
	})
}

func greedy(prompt string, maxTokens int) inference.Request {
	zero := 0.0
	return inference.Request{Model: "stories", Prompt: prompt, MaxTokens: maxTokens, Temperature: &zero}
}

func collect(t testing.TB, e *inference.Engine, req inference.Request) (string, inference.Result) {
	t.Helper()
	var b strings.Builder
	for ev, err := range e.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(ev.Text)
		if ev.Final != nil {
			return b.String(), *ev.Final
		}
	}
	t.Fatal("stream ended without a final event")
	return "", inference.Result{}
}

func TestGreedyGenerateMatchesStream(t *testing.T) {
	e := stories(t, 1)
	req := greedy("Once upon a time", 60)
	res, err := e.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%q %+v", res.Text, res.Usage)
	if res.Usage.CompletionTokens != 60 || res.FinishReason != inference.FinishLength {
		t.Errorf("usage %+v finish %q, want 60 tokens and length", res.Usage, res.FinishReason)
	}
	if !strings.Contains(res.Text, " ") || len(res.Text) < 100 {
		t.Errorf("implausible continuation %q", res.Text)
	}
	streamed, final := collect(t, e, req)
	if streamed != res.Text || final.Text != res.Text {
		t.Errorf("stream %q / final %q differ from Generate %q", streamed, final.Text, res.Text)
	}
	again, _ := e.Generate(context.Background(), req)
	if again.Text != res.Text {
		t.Errorf("greedy output changed between runs: %q vs %q", again.Text, res.Text)
	}
}

// Batching never mixes sequences: greedy output of a request is the same
// alone and beside three others with different prompts.
func TestGreedySameAloneAndConcurrent(t *testing.T) {
	prompts := []string{"Once upon a time", "The little dog", "Lily and Ben went to the", "One day, a big"}
	solo := stories(t, 1)
	want := make([]string, len(prompts))
	for i, p := range prompts {
		res, err := solo.Generate(context.Background(), greedy(p, 48))
		if err != nil {
			t.Fatal(err)
		}
		want[i] = res.Text
	}
	e := stories(t, 4)
	for round := range 3 {
		got := make([]string, len(prompts))
		var wg sync.WaitGroup
		for i, p := range prompts {
			wg.Go(func() {
				res, err := e.Generate(context.Background(), greedy(p, 48))
				if err != nil {
					t.Error(err)
				}
				got[i] = res.Text
			})
		}
		wg.Wait()
		for i := range prompts {
			if got[i] != want[i] {
				t.Errorf("round %d, prompt %q:\nconcurrent %q\nalone      %q", round, prompts[i], got[i], want[i])
			}
		}
	}
}

// Stop strings end generation, are reported, and never reach the output,
// even when the model writes them across several tokens.
func TestStopStringAcrossTokens(t *testing.T) {
	e := stories(t, 1)
	full, err := e.Generate(context.Background(), greedy("Once upon a time", 60))
	if err != nil {
		t.Fatal(err)
	}
	// Pick a stop string that straddles tokens: a word and the space and
	// first letters of the next.
	i := strings.Index(full.Text, "girl named")
	if i < 0 {
		t.Fatalf("unexpected continuation %q", full.Text)
	}
	stop := "irl nam"
	req := greedy("Once upon a time", 60)
	req.Stop = []string{"never appears", stop}
	var streamed strings.Builder
	var res inference.Result
	for ev, err := range e.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		streamed.WriteString(ev.Text)
		if ev.Final != nil {
			res = *ev.Final
		}
	}
	want := full.Text[:i+1]
	if res.Text != want || streamed.String() != want {
		t.Errorf("text %q / streamed %q, want %q", res.Text, streamed.String(), want)
	}
	if res.FinishReason != inference.FinishStopSequence || res.StopSequence != stop {
		t.Errorf("finish %q stop %q, want stop_sequence %q", res.FinishReason, res.StopSequence, stop)
	}
}

func TestContextLengthError(t *testing.T) {
	e := stories(t, 1)
	long := strings.Repeat("Once upon a time there was a girl. ", 60)
	_, err := e.Generate(context.Background(), greedy(long, 10))
	if !errors.Is(err, inference.ErrContextLength) {
		t.Errorf("long prompt: %v, want ErrContextLength", err)
	}
	_, err = e.Generate(context.Background(), greedy("Once", 1000))
	if !errors.Is(err, inference.ErrContextLength) {
		t.Errorf("max tokens past the context: %v, want ErrContextLength", err)
	}
	// A default limit is a cap: lowered to the room the prompt leaves.
	clamped := greedy("Once", 1000)
	clamped.ClampMaxTokens, clamped.IgnoreEOS = true, true
	res, err := e.Generate(context.Background(), clamped)
	if err != nil || res.Usage.PromptTokens+res.Usage.CompletionTokens != 256 || res.FinishReason != inference.FinishLength {
		t.Errorf("clamped: %v, usage %+v finish %q; want the context's 256 tokens filled", err, res.Usage, res.FinishReason)
	}
	clamped.Prompt = long
	if _, err := e.Generate(context.Background(), clamped); !errors.Is(err, inference.ErrContextLength) {
		t.Errorf("clamped, prompt alone too long: %v, want ErrContextLength", err)
	}
}

func TestErrors(t *testing.T) {
	e := stories(t, 1)
	tests := []struct {
		name string
		req  inference.Request
		want error
	}{
		{"unknown model", inference.Request{Model: "nope", Prompt: "x"}, inference.ErrModelNotFound},
		{"no prompt", inference.Request{Model: "stories"}, inference.ErrInvalidRequest},
		{"negative temperature", inference.Request{Model: "stories", Prompt: "x", Temperature: ptr(-1.0)}, inference.ErrInvalidRequest},
		{"top_p above 1", inference.Request{Model: "stories", Prompt: "x", TopP: ptr(1.5)}, inference.ErrInvalidRequest},
		{"bad role", inference.Request{Model: "stories", Messages: []inference.Message{inference.Text("robot", "hi")}}, inference.ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := e.Generate(context.Background(), tt.req); !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// With one sequence busy and a queue of one, a third request is refused
// at once with ErrOverloaded. The busy request runs a tiny model to the end
// of a 16K context, never stopping at an end-of-turn token, so that it
// cannot finish during the test.
func TestOverloaded(t *testing.T) {
	path := inferencetest.Model(t, inferencetest.Options{ContextLength: 16384})
	e := newEngine(t, inference.Config{Models: []catalog.Model{{ID: "tiny", Path: path}}, Parallel: 1, Queue: 1, ContextTokens: 16384})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	busy := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for range e.Stream(ctx, inference.Request{Model: "tiny", Prompt: "x", IgnoreEOS: true}) {
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
			_, err := e.Generate(ctx, inference.Request{Model: "tiny", Prompt: "y", MaxTokens: 5})
			errs <- err
		}()
	}
	if err := <-errs; !errors.Is(err, inference.ErrOverloaded) {
		t.Errorf("first to return: %v, want ErrOverloaded", err)
	}
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("queued request after cancel: %v, want context.Canceled", err)
	}
}

func TestCancelledContext(t *testing.T) {
	e := stories(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	var last error
	for ev, err := range e.Stream(ctx, greedy("Once upon a time", 0)) {
		if err != nil {
			last = err
			break
		}
		if ev.Text != "" {
			n++
		}
		if n == 3 {
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Errorf("stream ended with %v, want context.Canceled", last)
	}
	if _, err := e.Generate(context.Background(), greedy("Once", 3)); err != nil {
		t.Errorf("engine unusable after a cancel: %v", err)
	}
}

func TestClose(t *testing.T) {
	// bleve, which the search benchmark links in, starts its analysis
	// workers when its package loads.
	defer goleak.VerifyNone(t, goleak.IgnoreTopFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"))
	e, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "stories", Path: storiesPath(t)}}, ContextTokens: 256, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	result := make(chan error, 1)
	go func() {
		for _, err := range e.Stream(context.Background(), greedy("Once upon a time", 0)) {
			if err != nil {
				result <- err
				return
			}
			select {
			case started <- struct{}{}:
			default:
			}
		}
		result <- nil
	}()
	<-started
	e.Close()
	if err := <-result; err != nil && !errors.Is(err, inference.ErrClosed) {
		t.Errorf("running stream ended with %v, want ErrClosed or the end", err)
	}
	if _, err := e.Generate(context.Background(), greedy("Once", 3)); !errors.Is(err, inference.ErrClosed) {
		t.Errorf("Generate after Close: %v, want ErrClosed", err)
	}
}

// IgnoreEOS runs to MaxTokens even where the model would end its turn.
func TestIgnoreEOS(t *testing.T) {
	e := newEngine(t, inference.Config{Models: []catalog.Model{{ID: "tiny", Path: inferencetest.Model(t, inferencetest.Options{})}}, ContextTokens: 512})
	one := 1.0
	for seed := range int64(20) {
		req := inference.Request{Model: "tiny", Prompt: "Hi", MaxTokens: 400, Temperature: &one, Seed: &seed}
		res, err := e.Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if res.FinishReason != inference.FinishStop {
			continue // this seed does not end early; try the next
		}
		req.IgnoreEOS = true
		res, err = e.Generate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if res.FinishReason != inference.FinishLength || res.Usage.CompletionTokens != 400 {
			t.Errorf("seed %d with IgnoreEOS: finish %q after %d tokens, want length after 400", seed, res.FinishReason, res.Usage.CompletionTokens)
		}
		return
	}
	t.Fatal("no seed ended its turn early: the test proved nothing")
}

// Requests that used to reach llama.cpp in states it aborts on are
// refused, or end with an error, and the engine goes on.
func TestRequestsThatCannotRun(t *testing.T) {
	e := tinyThinker(t)
	for name, req := range map[string]inference.Request{
		"IgnoreEOS with a format":        {Model: "tiny", Prompt: "x", MaxTokens: 300, IgnoreEOS: true, Format: &inference.Format{JSON: true}},
		"IgnoreEOS with a required call": {Model: "tiny", Messages: []inference.Message{inference.Text(inference.RoleUser, "x")}, MaxTokens: 300, IgnoreEOS: true, Tools: testTools, ToolChoice: inference.ToolChoice{Mode: inference.ToolRequired}},
	} {
		_, err := e.Generate(context.Background(), req)
		if !errors.Is(err, inference.ErrInvalidRequest) {
			t.Errorf("%s: %v, want ErrInvalidRequest", name, err)
		}
	}
	if _, err := e.Generate(context.Background(), inference.Request{Model: "tiny", Prompt: "x", MaxTokens: 3}); err != nil {
		t.Errorf("engine after them: %v", err)
	}
	if _, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "m", Path: "x.gguf"}}, Parallel: 8, Batch: 16}); err == nil {
		t.Error("a batch smaller than 4 tokens per sequence was accepted")
	}
}
