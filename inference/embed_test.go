//go:build cgo

package inference

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// embedEngine loads tiny embedding models of every pooling, a reranker
// and a generative llama:
//
//   - "bert-mean", "bert-cls": BERT encoders of one seed, mean and cls
//     pooling;
//   - "qwen-last", "qwen-cls": causal qwen3 decoders of one seed, last and
//     cls pooling;
//   - "nomic-mean": a nomic-bert encoder (rotary positions, fused QKV,
//     SwiGLU), mean pooling;
//   - "rank": the BERT reranker; "tiny": the llama.
func embedEngine(t *testing.T) *Engine {
	t.Helper()
	e, err := New(Config{
		Threads:       1,
		ContextTokens: 256,
		Models: []catalog.Model{
			{ID: "bert-mean", Path: inferencetest.Model(t, inferencetest.Options{Arch: "bert", Pooling: "mean", Seed: 5})},
			{ID: "bert-cls", Path: inferencetest.Model(t, inferencetest.Options{Arch: "bert", Pooling: "cls", Seed: 5})},
			{ID: "nomic-mean", Path: inferencetest.Model(t, inferencetest.Options{Arch: "nomic-bert", Pooling: "mean", Seed: 5})},
			{ID: "qwen-last", Path: inferencetest.Model(t, inferencetest.Options{Arch: "qwen3", Pooling: "last", Seed: 5})},
			{ID: "qwen-cls", Path: inferencetest.Model(t, inferencetest.Options{Arch: "qwen3", Pooling: "cls", Seed: 5})},
			{ID: "rank", Path: inferencetest.Model(t, inferencetest.Options{Arch: "bert"})},
			{ID: "tiny", Path: inferencetest.Model(t, inferencetest.Options{})},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

var embedTexts = []string{"The sky is blue today.", "It rains, and the streets are wet.", "Stock prices fell 3% on Monday!", "a", "Cats sleep most of the day; dogs less so.", "grey skies, and a cold wind from the north"}

// closeTo reports whether two vectors differ by at most tol in every
// value.
func closeTo(a, b []float32, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.IsNaN(float64(a[i])) || math.Abs(float64(a[i]-b[i])) > tol {
			return false
		}
	}
	return true
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestEmbed(t *testing.T) {
	e := embedEngine(t)
	infos := map[string]ModelInfo{}
	for _, info := range e.Models() {
		infos[info.ID] = info
	}
	for id, want := range map[string]ModelInfo{
		"bert-mean":  {Embedding: true, Pooling: "mean", Dimensions: 64},
		"bert-cls":   {Embedding: true, Pooling: "cls", Dimensions: 64},
		"nomic-mean": {Embedding: true, Pooling: "mean", Dimensions: 64},
		"qwen-last":  {Embedding: true, Pooling: "last", Dimensions: 64},
		"rank":       {Encoder: true, Pooling: "rank"},
		"tiny":       {},
	} {
		got := infos[id]
		if got.Embedding != want.Embedding || got.Encoder != want.Encoder || got.Pooling != want.Pooling || got.Dimensions != want.Dimensions {
			t.Errorf("%s: Embedding %v Encoder %v Pooling %q Dimensions %d, want %+v", id, got.Embedding, got.Encoder, got.Pooling, got.Dimensions, want)
		}
	}
	ctx := context.Background()
	for _, id := range []string{"bert-mean", "bert-cls", "nomic-mean", "qwen-last"} {
		t.Run(id, func(t *testing.T) {
			all, err := e.Embed(ctx, EmbedRequest{Model: id, Input: embedTexts})
			if err != nil {
				t.Fatal(err)
			}
			if len(all.Embeddings) != len(embedTexts) {
				t.Fatalf("%d vectors for %d inputs", len(all.Embeddings), len(embedTexts))
			}
			again, err := e.Embed(ctx, EmbedRequest{Model: id, Input: embedTexts})
			if err != nil {
				t.Fatal(err)
			}
			tokens := 0
			for i, text := range embedTexts {
				v := all.Embeddings[i]
				if len(v) != 64 || math.Abs(norm(v)-1) > 1e-4 {
					t.Errorf("input %d: %d values of norm %v", i, len(v), norm(v))
				}
				if !slices.Equal(v, again.Embeddings[i]) {
					t.Errorf("input %d: not deterministic", i)
				}
				one, err := e.Embed(ctx, EmbedRequest{Model: id, Input: []string{text}})
				if err != nil {
					t.Fatal(err)
				}
				if !closeTo(one.Embeddings[0], v, 1e-4) {
					t.Errorf("input %d: alone %v..., batched %v...", i, one.Embeddings[0][:4], v[:4])
				}
				tokens += one.Usage.PromptTokens
				// A text's tokens give the text's vector.
				ids, err := e.Tokenize(id, text)
				if err != nil {
					t.Fatal(err)
				}
				byTokens, err := e.Embed(ctx, EmbedRequest{Model: id, Tokens: [][]int{ids}})
				if err != nil {
					t.Fatal(err)
				}
				if !closeTo(byTokens.Embeddings[0], one.Embeddings[0], 1e-6) || byTokens.Usage != one.Usage {
					t.Errorf("input %d: by tokens %v... (%+v), by text %v... (%+v)", i, byTokens.Embeddings[0][:4], byTokens.Usage, one.Embeddings[0][:4], one.Usage)
				}
				for j := range i {
					if closeTo(all.Embeddings[j], v, 1e-3) {
						t.Errorf("inputs %d and %d have one vector", j, i)
					}
				}
			}
			if tokens != all.Usage.PromptTokens || tokens == 0 {
				t.Errorf("usage %d together, %d one by one", all.Usage.PromptTokens, tokens)
			}
			// Dimensions keeps the first values and normalises again.
			short, err := e.Embed(ctx, EmbedRequest{Model: id, Input: embedTexts, Dimensions: 16})
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range short.Embeddings {
				want := slices.Clone(all.Embeddings[i][:16])
				normalize(want)
				if len(v) != 16 || !closeTo(v, want, 1e-5) {
					t.Errorf("input %d at 16 dimensions: %v, want %v", i, v, want)
				}
			}
		})
	}
	// BERT wraps a text in [CLS] and [SEP].
	ids, _ := e.Tokenize("bert-mean", embedTexts[0])
	one, _ := e.Embed(ctx, EmbedRequest{Model: "bert-mean", Input: embedTexts[:1]})
	if want := len(ids) + 2; one.Usage.PromptTokens != want {
		t.Errorf("bert input of %d tokens, want %d", one.Usage.PromptTokens, want)
	}
}

// TestEmbedPooling checks that the pooling is the GGUF's: a causal
// decoder pooled on its first token (cls) gives every input that starts
// with the same token the same vector, since that token attends to
// nothing after it, while last pooling reads the whole input; on a
// bidirectional BERT, cls and mean pooling of the same weights differ.
func TestEmbedPooling(t *testing.T) {
	e := embedEngine(t)
	ctx := context.Background()
	inputs := [][]int{{10, 20, 30}, {10, 40}, {10, 20, 30, 50, 60}}
	first, err := e.Embed(ctx, EmbedRequest{Model: "qwen-cls", Tokens: inputs})
	if err != nil {
		t.Fatal(err)
	}
	last, err := e.Embed(ctx, EmbedRequest{Model: "qwen-last", Tokens: inputs})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(inputs); i++ {
		if !closeTo(first.Embeddings[i], first.Embeddings[0], 1e-5) {
			t.Errorf("cls pooling on a causal decoder: input %d differs from input 0", i)
		}
		if closeTo(last.Embeddings[i], last.Embeddings[0], 1e-3) {
			t.Errorf("last pooling: input %d equals input 0", i)
		}
	}
	// The first token's vector is the same for both poolings on an input
	// of one token (the two files share their weights).
	one, err := e.Embed(ctx, EmbedRequest{Model: "qwen-last", Tokens: [][]int{{10}}})
	if err != nil {
		t.Fatal(err)
	}
	if one.Usage.PromptTokens == 1 && !closeTo(one.Embeddings[0], first.Embeddings[0], 1e-5) {
		t.Errorf("one token: last pooling %v..., cls %v...", one.Embeddings[0][:4], first.Embeddings[0][:4])
	}
	mean, _ := e.Embed(ctx, EmbedRequest{Model: "bert-mean", Input: embedTexts[:1]})
	cls, _ := e.Embed(ctx, EmbedRequest{Model: "bert-cls", Input: embedTexts[:1]})
	if closeTo(mean.Embeddings[0], cls.Embeddings[0], 1e-3) {
		t.Error("BERT: mean and cls pooling give one vector")
	}
}

// TestEmbedNomicBERT checks a nomic-bert encoder beyond what TestEmbed
// checks of every embedding model: it wraps a text in [CLS] and [SEP] as
// BERT does, and its rotary positions make word order count, which mean
// pooling over bidirectional attention would not see without them (the
// architecture has no learned position embeddings).
func TestEmbedNomicBERT(t *testing.T) {
	e := embedEngine(t)
	ctx := context.Background()
	ids, err := e.Tokenize("nomic-mean", embedTexts[0])
	if err != nil {
		t.Fatal(err)
	}
	one, err := e.Embed(ctx, EmbedRequest{Model: "nomic-mean", Input: embedTexts[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(ids) + 2; one.Usage.PromptTokens != want {
		t.Errorf("input of %d tokens, want %d", one.Usage.PromptTokens, want)
	}
	// Tokens 10, 20, 30 and their reverse, between [CLS] 2 and [SEP] 3.
	order, err := e.Embed(ctx, EmbedRequest{Model: "nomic-mean", Tokens: [][]int{{2, 10, 20, 30, 3}, {2, 30, 20, 10, 3}}})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range order.Embeddings {
		if len(v) != 64 || math.Abs(norm(v)-1) > 1e-4 {
			t.Errorf("input %d: %d values of norm %v", i, len(v), norm(v))
		}
	}
	if closeTo(order.Embeddings[0], order.Embeddings[1], 1e-3) {
		t.Error("a sequence and its reverse give one vector: positions are ignored")
	}
	bert, err := e.Embed(ctx, EmbedRequest{Model: "bert-mean", Input: embedTexts[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if closeTo(bert.Embeddings[0], one.Embeddings[0], 1e-3) {
		t.Error("nomic-bert and bert of one seed give one vector")
	}
}

func TestEmbedErrors(t *testing.T) {
	e := embedEngine(t)
	ctx := context.Background()
	many := make([]string, MaxEmbedInputs+1)
	for i := range many {
		many[i] = "x"
	}
	heavy := make([][]int, MaxEmbedInputs)
	for i := range heavy {
		heavy[i] = slices.Repeat([]int{10}, 200)
	}
	long := strings.Repeat("word ", 300)
	for _, c := range []struct {
		name  string
		req   EmbedRequest
		want  error
		field string
	}{
		{"no input", EmbedRequest{Model: "bert-mean"}, ErrInvalidRequest, "Input"},
		{"empty list", EmbedRequest{Model: "bert-mean", Input: []string{}}, ErrInvalidRequest, "Input"},
		{"too many", EmbedRequest{Model: "bert-mean", Input: many}, ErrInvalidRequest, "Input"},
		{"empty string", EmbedRequest{Model: "bert-mean", Input: []string{"a", ""}}, ErrInvalidRequest, "Input[1]"},
		{"empty tokens", EmbedRequest{Model: "bert-mean", Tokens: [][]int{{5}, {}}}, ErrInvalidRequest, "Input[1]"},
		{"both", EmbedRequest{Model: "bert-mean", Input: []string{"a"}, Tokens: [][]int{{5}}}, ErrInvalidRequest, "Input"},
		{"negative token", EmbedRequest{Model: "bert-mean", Tokens: [][]int{{5, -1}}}, ErrInvalidRequest, "Input[0][1]"},
		{"token past the vocabulary", EmbedRequest{Model: "qwen-last", Tokens: [][]int{{5}, {5, 6, 1 << 40}}}, ErrInvalidRequest, "Input[1][2]"},
		{"long text", EmbedRequest{Model: "bert-mean", Input: []string{"a", long}}, ErrContextLength, "Input[1]"},
		{"long tokens", EmbedRequest{Model: "qwen-last", Tokens: [][]int{slices.Repeat([]int{7}, 300)}}, ErrContextLength, "Input[0]"},
		{"too many tokens in all", EmbedRequest{Model: "qwen-last", Tokens: heavy}, ErrInvalidRequest, "Input"},
		{"negative dimensions", EmbedRequest{Model: "bert-mean", Input: []string{"a"}, Dimensions: -1}, ErrInvalidRequest, "Dimensions"},
		{"too many dimensions", EmbedRequest{Model: "bert-mean", Input: []string{"a"}, Dimensions: 65}, ErrInvalidRequest, "Dimensions"},
		{"generative model", EmbedRequest{Model: "tiny", Input: []string{"a"}}, ErrInvalidRequest, ""},
		{"reranker", EmbedRequest{Model: "rank", Input: []string{"a"}}, ErrInvalidRequest, ""},
		{"unknown model", EmbedRequest{Model: "nope", Input: []string{"a"}}, ErrModelNotFound, ""},
	} {
		_, err := e.Embed(ctx, c.req)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
			continue
		}
		var fe *FieldError
		if errors.As(err, &fe) != (c.field != "") || (fe != nil && fe.Path.String() != c.field) {
			t.Errorf("%s: %v, want field %q", c.name, err, c.field)
		}
	}
	if _, err := e.Generate(ctx, Request{Model: "bert-mean", Prompt: "hello"}); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("Generate on an embedding model: %v", err)
	}
	if _, err := e.Rank(ctx, RankRequest{Model: "qwen-last", Query: "q", Documents: []string{"d"}}); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("Rank on an embedding model: %v", err)
	}
	if _, err := e.RunEmbed(ctx, &PreparedEmbed{Request: EmbedRequest{Model: "bert-mean"}}); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("RunEmbed of an unprepared request: %v", err)
	}
	if _, err := e.RunEmbed(ctx, nil); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("RunEmbed(nil): %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Embed(cancelled, EmbedRequest{Model: "bert-mean", Input: []string{"a"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	// Nothing broke the engine.
	if _, err := e.Embed(ctx, EmbedRequest{Model: "qwen-last", Input: []string{"still fine"}}); err != nil {
		t.Errorf("after the errors: %v", err)
	}
}

// TestEmbedPrepared checks that PrepareEmbed counts what RunEmbed
// reports.
func TestEmbedPrepared(t *testing.T) {
	e := embedEngine(t)
	p, err := e.PrepareEmbed(EmbedRequest{Model: "bert-cls", Input: embedTexts})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.RunEmbed(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if p.InputTokens == 0 || res.Usage.PromptTokens != p.InputTokens {
		t.Errorf("prepared %d tokens, used %d", p.InputTokens, res.Usage.PromptTokens)
	}
}

// TestEmbedConcurrent embeds from several goroutines at once, on two
// models, and checks every answer against the one embedded alone.
func TestEmbedConcurrent(t *testing.T) {
	e := embedEngine(t)
	ctx := context.Background()
	want := map[string][][]float32{}
	for _, id := range []string{"bert-mean", "qwen-last"} {
		res, err := e.Embed(ctx, EmbedRequest{Model: id, Input: embedTexts})
		if err != nil {
			t.Fatal(err)
		}
		want[id] = res.Embeddings
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := []string{"bert-mean", "qwen-last"}[g%2]
			for round := range 3 {
				k := (g + round) % len(embedTexts)
				res, err := e.Embed(ctx, EmbedRequest{Model: id, Input: embedTexts[k:]})
				if err != nil {
					errs <- err
					return
				}
				for i, v := range res.Embeddings {
					if !closeTo(v, want[id][k+i], 1e-4) {
						errs <- fmt.Errorf("%s goroutine %d: input %d differs", id, g, k+i)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestNormalize(t *testing.T) {
	v := []float32{3, 4}
	if !normalize(v) || v[0] != 0.6 || v[1] != 0.8 {
		t.Errorf("normalize(3, 4) = %v", v)
	}
	zero := []float32{0, 0}
	if !normalize(zero) || zero[0] != 0 {
		t.Errorf("normalize(0, 0) = %v", zero)
	}
	if normalize([]float32{1, float32(math.NaN())}) || normalize([]float32{float32(math.Inf(1))}) {
		t.Error("a non-finite vector normalised")
	}
}
