//go:build cgo

package inference_test

import (
	"context"
	"strings"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// Quantized KV caches serve requests on models whose heads are a
// multiple of 32 wide, and are refused, not crashed on, elsewhere.
func TestKVCacheTypes(t *testing.T) {
	path := inferencetest.Model(t, inferencetest.Options{Embd: 128, Heads: 2}) // heads of 64
	zero := 0.0
	req := inference.Request{Model: "tiny", Prompt: "Once upon a time", MaxTokens: 16, Temperature: &zero, IgnoreEOS: true}
	for _, ct := range []string{"f16", "q8_0", "q4_0"} {
		e := newEngine(t, inference.Config{Models: []catalog.Model{{ID: "tiny", Path: path}}, ContextTokens: 256, KeyCache: ct, ValueCache: ct})
		res, err := e.Generate(context.Background(), req)
		if err != nil || res.Usage.CompletionTokens != 16 {
			t.Fatalf("%s: %+v, %v", ct, res.Usage, err)
		}
	}
	// The trained tiny model's heads are 8 wide: llama.cpp would abort.
	_, err := inference.New(inference.Config{Models: []catalog.Model{{ID: "stories", Path: storiesPath(t)}}, ContextTokens: 256, Threads: 1, ValueCache: "q8_0"})
	if err == nil || !strings.Contains(err.Error(), "multiple of 32") {
		t.Errorf("q8_0 values on heads of 8: %v", err)
	}
	for _, bad := range []inference.Config{{KeyCache: "q8"}, {ValueCache: "F16"}} {
		bad.Models = []catalog.Model{{ID: "tiny", Path: path}}
		if e, err := inference.New(bad); err == nil || !strings.Contains(err.Error(), "Cache") {
			if e != nil {
				e.Close()
			}
			t.Errorf("%+v: %v", bad, err)
		}
	}
}
