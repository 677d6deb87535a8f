//go:build cgo

package httpapi_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/inferkit/inferkit/internal/testmodels"
	"github.com/inferkit/inferkit/policy"
)

// BenchmarkRemoteOverhead measures what the gateway adds in front of an
// upstream: time to first token and tokens per second of one streamed
// chat (the tiny trained story model, 128 tokens), straight to the
// upstream and through inferkit, interleaved, one pair per iteration;
// it reports the medians. Run three rounds:
//
//	go test ./httpapi -run '^$' -bench RemoteOverhead -benchtime 3x
//
// Upstreams: a second inferkit, and Ollama where make ollama built it.
func BenchmarkRemoteOverhead(b *testing.B) {
	stories, err := filepath.Abs(filepath.Join(testmodels.Root(b), "..", "shared", "models", "stories260K.gguf"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("inferkit", func(b *testing.B) {
		up := newUpstreamReplica(b, stories, 1).URL
		overhead(b, up, policy.Core25Mini, gatewayOf(b, 512, up))
	})
	b.Run("ollama", func(b *testing.B) {
		up := startOllama(b)
		overhead(b, up, ollamaModel, gatewayAs(b, 512, ollamaModel, up))
	})
}

// overhead runs b.N interleaved pairs of one stream straight to up
// (model model there) and one through gw, and reports their medians.
func overhead(b *testing.B, up, model, gw string) {
	ctx := context.Background()
	direct, through := openaiSDK(up, key), openaiSDK(gw, key)
	params := chatRequest("Once upon a time")
	params.MaxTokens = openai.Int(128)
	params.TopP = openai.Float(1) // as the gateway sends it: the chat default
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	straight := params
	straight.Model = model
	run := func(c openai.Client, p openai.ChatCompletionNewParams) (ttft time.Duration, rate float64) {
		start := time.Now()
		var first time.Time
		s := c.Chat.Completions.NewStreaming(ctx, p)
		tokens := int64(0)
		for s.Next() {
			ch := s.Current()
			if first.IsZero() && len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
				first = time.Now()
			}
			if ch.Usage.CompletionTokens > 0 {
				tokens = ch.Usage.CompletionTokens
			}
		}
		if err := s.Err(); err != nil || first.IsZero() || tokens < 2 {
			b.Fatalf("stream: %v, %d tokens", err, tokens)
		}
		end := time.Now()
		return first.Sub(start), float64(tokens-1) / end.Sub(first).Seconds()
	}
	run(direct, straight) // warm both: the model loads, the prompt caches
	run(through, params)
	var dTTFT, gTTFT []time.Duration
	var dRate, gRate []float64
	b.ResetTimer()
	for range b.N {
		t, r := run(direct, straight)
		dTTFT, dRate = append(dTTFT, t), append(dRate, r)
		t, r = run(through, params)
		gTTFT, gRate = append(gTTFT, t), append(gRate, r)
	}
	b.StopTimer()
	md, mg := median(dTTFT), median(gTTFT)
	rd, rg := median(dRate), median(gRate)
	b.ReportMetric(float64(md.Microseconds())/1000, "direct-ttft-ms")
	b.ReportMetric(float64(mg.Microseconds())/1000, "gateway-ttft-ms")
	b.ReportMetric(float64((mg-md).Microseconds())/1000, "added-ttft-ms")
	b.ReportMetric(rd, "direct-tok/s")
	b.ReportMetric(rg, "gateway-tok/s")
	b.ReportMetric(rg/rd, "throughput-ratio")
}

func median[T int64 | float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
