//go:build cgo

package inference_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
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

func newEngine(t testing.TB, cfg inference.Config) *inference.Engine {
	t.Helper()
	e, err := inference.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func stories(t testing.TB, parallel int) *inference.Engine {
	return newEngine(t, inference.Config{
		Models:   []catalog.Model{{ID: "stories", Path: storiesPath(t)}},
		Parallel: parallel,
		Context:  256,
		Threads:  2,
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
