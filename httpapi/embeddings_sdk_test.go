//go:build cgo

package httpapi_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/httpapi"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/policy"
)

// embedServer serves, on the real engine, a tiny BERT embedding model
// (mean pooling) as "core-embed" and a tiny Qwen3 decoder embedding model
// (last pooling) as "qwen-embed", catalogued as trained for truncation
// down to 16 dimensions, beside the tiny chat model as core-2-5-mini.
func embedServer(t *testing.T) string {
	t.Helper()
	chat, _ := policy.Model(policy.Core25Mini)
	chat.Path = tinyModel(t)
	models := []catalog.Model{
		chat,
		{ID: "core-embed", Path: inferencetest.Model(t, inferencetest.Options{Arch: "bert", Pooling: "mean", Seed: 1}), Kind: catalog.KindEmbedding},
		{ID: "qwen-embed", Path: inferencetest.Model(t, inferencetest.Options{Arch: "qwen3", Pooling: "last", Seed: 1}), Kind: catalog.KindEmbedding, MinDimensions: 16},
	}
	return serveEngine(t, inference.Config{Models: models, Parallel: 1, ContextTokens: sdkContext}, httpapi.Config{Models: models}, "")
}

func unitLength(v []float64) bool {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Abs(math.Sqrt(s)-1) < 1e-4
}

// TestSDKEmbeddings drives POST /v1/embeddings with the official OpenAI
// Go SDK: every input shape, base64, dimensions, usage and errors.
func TestSDKEmbeddings(t *testing.T) {
	client := openaiSDK(embedServer(t), key)
	ctx := context.Background()
	texts := []string{"The sky is blue.", "Stock prices fell on Monday.", "cats"}
	for _, model := range []string{"core-embed", "qwen-embed"} {
		t.Run(model, func(t *testing.T) {
			res, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
				Model: openai.EmbeddingModel(model),
				Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Data) != len(texts) || res.Model != model || res.Usage.PromptTokens == 0 || res.Usage.TotalTokens != res.Usage.PromptTokens {
				t.Fatalf("response %s", res.RawJSON())
			}
			for i, d := range res.Data {
				if d.Index != int64(i) || len(d.Embedding) != 64 || !unitLength(d.Embedding) {
					t.Errorf("data[%d]: index %d, %d values", i, d.Index, len(d.Embedding))
				}
			}
			one, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
				Model: openai.EmbeddingModel(model),
				Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String(texts[1])},
			})
			if err != nil {
				t.Fatal(err)
			}
			for j, x := range one.Data[0].Embedding {
				if math.Abs(x-res.Data[1].Embedding[j]) > 1e-4 {
					t.Fatalf("alone and batched differ at %d: %v, %v", j, x, res.Data[1].Embedding[j])
				}
			}
			// base64: little-endian float32 bytes of the same vector.
			b64, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
				Model:          openai.EmbeddingModel(model),
				Input:          openai.EmbeddingNewParamsInputUnion{OfString: openai.String(texts[1])},
				EncodingFormat: openai.EmbeddingNewParamsEncodingFormatBase64,
			})
			if err != nil {
				t.Fatal(err)
			}
			var s string
			if err := json.Unmarshal([]byte(b64.Data[0].JSON.Embedding.Raw()), &s); err != nil {
				t.Fatalf("base64 embedding %s: %v", b64.Data[0].JSON.Embedding.Raw(), err)
			}
			raw, err := base64.StdEncoding.DecodeString(s)
			if err != nil || len(raw) != 4*64 {
				t.Fatalf("base64 of %d bytes, %v", len(raw), err)
			}
			for j := range 64 {
				x := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
				if float64(x) != float64(float32(one.Data[0].Embedding[j])) {
					t.Fatalf("base64 value %d: %v, float %v", j, x, one.Data[0].Embedding[j])
				}
			}
			// Token arrays.
			toks, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
				Model: openai.EmbeddingModel(model),
				Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfTokenArrays: [][]int64{{10, 11, 12}, {13}}},
			})
			if err != nil || len(toks.Data) != 2 {
				t.Fatalf("token arrays: %v", err)
			}
			single, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
				Model: openai.EmbeddingModel(model),
				Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfTokens: []int64{10, 11, 12}},
			})
			if err != nil || len(single.Data) != 1 || single.Usage.PromptTokens >= toks.Usage.PromptTokens {
				t.Fatalf("one token array: %v", err)
			}
		})
	}
	short, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model:      "qwen-embed",
		Input:      openai.EmbeddingNewParamsInputUnion{OfString: openai.String("cats")},
		Dimensions: openai.Int(16),
	})
	if err != nil || len(short.Data[0].Embedding) != 16 || !unitLength(short.Data[0].Embedding) {
		t.Fatalf("16 dimensions: %v", err)
	}
	for _, c := range []struct {
		name   string
		params openai.EmbeddingNewParams
		param  string
	}{
		{"dimensions of a model not trained for them", openai.EmbeddingNewParams{Model: "core-embed", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("x")}, Dimensions: openai.Int(16)}, "dimensions"},
		{"token outside the vocabulary", openai.EmbeddingNewParams{Model: "core-embed", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfTokenArrays: [][]int64{{1}, {2, 1 << 30}}}}, "input[1][1]"},
		{"empty string", openai.EmbeddingNewParams{Model: "core-embed", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a", ""}}}, "input[1]"},
		{"a chat model", openai.EmbeddingNewParams{Model: policy.Core25Mini, Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("x")}}, "model"},
	} {
		_, err := client.Embeddings.New(ctx, c.params)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Param != c.param {
			t.Errorf("%s: %v, want a 400 naming %s", c.name, err, c.param)
		}
	}
}
