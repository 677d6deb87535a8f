//go:build cgo

package inference

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/ollama/ollama/llama"
	"github.com/ollama/ollama/ml"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/llamacpp"
)

// imageEngine serves "tiny", a byte-level llama with a vision projector that
// makes 16 tokens of each image.
func imageEngine(t *testing.T, cfg Config) (*Engine, *runner) {
	t.Helper()
	cfg.Models = []catalog.Model{{
		ID:        "tiny",
		Path:      inferencetest.Model(t, inferencetest.Options{}),
		Projector: inferencetest.Projector(t, inferencetest.ProjectorOptions{}),
	}}
	cfg.Threads = 1
	cfg.Context = 512
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, e.names["tiny"].runner
}

const imageTokensEach = 16

var (
	red   = inferencetest.PNG(40, 30, 1)
	green = inferencetest.PNG(40, 30, 2)
)

var imageBranches = []Branch{
	{Text: "Is it a cat? ", Candidates: []int{'y', 'n'}},
	{Text: "Pick A, B or C: ", Candidates: []int{'A', 'B', 'C'}},
}

func scoreImages(t *testing.T, e *Engine, prefix string, images ...[]byte) ScoreResult {
	t.Helper()
	res, err := e.Score(context.Background(), ScoreRequest{Model: "tiny", Prefix: prefix, Images: images, Branches: imageBranches})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestImageMarker(t *testing.T) {
	if ImageMarker != llamacpp.MediaMarker {
		t.Fatalf("ImageMarker %q, llama.cpp's marker %q", ImageMarker, llamacpp.MediaMarker)
	}
}

// Images are read: they count as prompt tokens, change the scores, and an
// image's scores do not depend on the cache state or on other requests
// decoded beside it.
func TestScoreImages(t *testing.T) {
	e, r := imageEngine(t, Config{Parallel: 2})
	if !e.Models()[0].Images {
		t.Fatal("ModelInfo.Images is false for a model with a projector")
	}
	const prefix = "Look: " + ImageMarker + " and " + ImageMarker + ". "
	branchTokens := len(imageBranches[0].Text) + len(imageBranches[1].Text)

	cold := scoreImages(t, e, prefix, red, green)
	want := len("Look: ") + len(" and ") + len(". ") + 2*imageTokensEach
	if cold.Usage.PromptTokens != want+branchTokens || cold.Usage.CachedTokens != 0 {
		t.Fatalf("usage %+v, want %d prompt tokens (two images of %d), none cached", cold.Usage, want+branchTokens, imageTokensEach)
	}

	// The same images again: all of the prefix comes from the cache.
	before := r.decoded.Load()
	warm := scoreImages(t, e, prefix, red, green)
	if warm.Usage.CachedTokens != want {
		t.Errorf("repeat: %d cached tokens, want the whole prefix's %d", warm.Usage.CachedTokens, want)
	}
	if got := r.decoded.Load() - before; got != int64(branchTokens) {
		t.Errorf("repeat: decoded %d tokens, want the branches' %d", got, branchTokens)
	}
	for i := range imageBranches {
		sameScores(t, "cached images", warm.Branches[i], cold.Branches[i])
	}

	// A different second image: the cache keeps the prefix up to it and
	// decodes it; the scores change.
	swapped := scoreImages(t, e, prefix, red, green[:len(green):len(green)])
	if swapped.Usage.CachedTokens != want {
		t.Errorf("same bytes in another slice: %d cached, want %d", swapped.Usage.CachedTokens, want)
	}
	other := scoreImages(t, e, prefix, red, red)
	if n := len("Look: ") + imageTokensEach + len(" and "); other.Usage.CachedTokens != n {
		t.Errorf("another second image: %d cached tokens, want %d (up to that image)", other.Usage.CachedTokens, n)
	}
	if same(other.Branches[1].LogProbs, cold.Branches[1].LogProbs) {
		t.Error("another image gives the very same scores: the image is not read")
	}

	// Cold, on a fresh engine, while another request with the same images
	// prefills beside it: the same numbers.
	e2, _ := imageEngine(t, Config{Parallel: 2})
	var wg sync.WaitGroup
	results := make([]ScoreResult, 2)
	for i := range results {
		wg.Go(func() { results[i] = scoreImages(t, e2, prefix, red, green) })
	}
	wg.Wait()
	for _, res := range results {
		for i := range imageBranches {
			sameScores(t, "concurrent", res.Branches[i], cold.Branches[i])
		}
	}
}

// A prompt cut into small batches decodes an image across several of them
// and gives the same numbers.
func TestScoreImageSmallBatches(t *testing.T) {
	big, _ := imageEngine(t, Config{Parallel: 1})
	small, _ := imageEngine(t, Config{Parallel: 1, Batch: 5, BranchContext: 64})
	const prefix = "A picture, " + ImageMarker + ", to judge. "
	want := scoreImages(t, big, prefix, green)
	got := scoreImages(t, small, prefix, green)
	for i := range imageBranches {
		sameScores(t, "batch 5", got.Branches[i], want.Branches[i])
	}
}

func same(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestScoreImageErrors(t *testing.T) {
	e, _ := imageEngine(t, Config{Parallel: 1})
	text, _ := byteEngine(t, Config{Parallel: 1})
	b := []Branch{{Text: "? ", Candidates: []int{'y'}}}
	for _, tc := range []struct {
		name   string
		e      *Engine
		prefix string
		images [][]byte
		index  int // of the *ImageError, or -1 for another invalid request
	}{
		{"text-only model", text, ImageMarker, [][]byte{red}, -1},
		{"more images than markers", e, ImageMarker, [][]byte{red, green}, -1},
		{"fewer images than markers", e, ImageMarker + ImageMarker, [][]byte{red}, -1},
		{"not a picture", e, ImageMarker + ImageMarker, [][]byte{red, []byte("GIF89a, or so it says")}, 1},
		{"empty", e, ImageMarker, [][]byte{{}}, 0},
		{"truncated PNG", e, ImageMarker, [][]byte{red[:len(red)/2]}, 0},
		{"too large", e, ImageMarker, [][]byte{inferencetest.PNG(MaxImageSide+1, 1, 0)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.e.Score(context.Background(), ScoreRequest{Model: "tiny", Prefix: tc.prefix, Images: tc.images, Branches: b})
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("error %v, want ErrInvalidRequest", err)
			}
			ie, ok := errors.AsType[*ImageError](err)
			if tc.index < 0 && ok || tc.index >= 0 && (!ok || ie.Index != tc.index) {
				t.Fatalf("error %v, want an ImageError for image %d", err, tc.index)
			}
		})
	}
	// The engine still works.
	scoreImages(t, e, "ok "+ImageMarker, red)
}

func TestProjectorConfigErrors(t *testing.T) {
	model := inferencetest.Model(t, inferencetest.Options{})
	for _, tc := range []struct {
		name   string
		models []catalog.Model
		want   string
	}{
		{"width mismatch", []catalog.Model{{ID: "a", Path: model, Projector: inferencetest.Projector(t, inferencetest.ProjectorOptions{TextEmbd: 128})}}, "projector"},
		{"missing file", []catalog.Model{{ID: "a", Path: model, Projector: t.TempDir() + "/none.gguf"}}, "projector"},
		{"two projectors for one file", []catalog.Model{
			{ID: "a", Path: model, Projector: inferencetest.Projector(t, inferencetest.ProjectorOptions{})},
			{ID: "b", Path: model, Projector: inferencetest.Projector(t, inferencetest.ProjectorOptions{Seed: 1})},
		}, "another entry"},
		{"encoder", []catalog.Model{{ID: "a", Path: inferencetest.Model(t, inferencetest.Options{Arch: "bert"}), Projector: inferencetest.Projector(t, inferencetest.ProjectorOptions{})}}, "encoder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(Config{Models: tc.models, Threads: 1, Context: 256})
			if err == nil {
				e.Close()
				t.Fatal("New succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

// An entry without a projector shares the file, and the images, of one
// with it.
func TestProjectorSharedFile(t *testing.T) {
	model := inferencetest.Model(t, inferencetest.Options{})
	e, err := New(Config{Threads: 1, Context: 256, Models: []catalog.Model{
		{ID: "plain", Path: model},
		{ID: "tiny", Path: model, Projector: inferencetest.Projector(t, inferencetest.ProjectorOptions{})},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, info := range e.Models() {
		if !info.Images {
			t.Errorf("%s: Images false", info.ID)
		}
	}
	scoreImages(t, e, ImageMarker, red)
}

// The engine's image path gives what ollama's llama package gives when it
// decodes the same prompt on its own: text tokens, the image's embeddings
// in a batch of their own, then text again, on one sequence of a fresh
// context. The numbers then cannot be right only relative to each other.
func TestScoreImageMatchesReference(t *testing.T) {
	modelPath := inferencetest.Model(t, inferencetest.Options{})
	projPath := inferencetest.Projector(t, inferencetest.ProjectorOptions{})
	const before, after, branch = "A picture: ", " Is it red? ", "Answer: "
	cands := []int{'y', 'n', 'A', ' '}

	e, err := New(Config{Threads: 1, Context: 256, Models: []catalog.Model{{ID: "tiny", Path: modelPath, Projector: projPath}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	got, err := e.Score(context.Background(), ScoreRequest{Model: "tiny", Prefix: before + ImageMarker + after, Images: [][]byte{red}, Branches: []Branch{{Text: branch, Candidates: cands}}})
	if err != nil {
		t.Fatal(err)
	}

	model, err := llama.LoadModelFromFile(modelPath, llama.ModelParams{UseMmap: true})
	if err != nil {
		t.Fatal(err)
	}
	defer llama.FreeModel(model)
	lctx, err := llama.NewContextWithModel(model, llama.NewContextParams(256, 64, 1, 1, ml.FlashAttentionAuto, ""))
	if err != nil {
		t.Fatal(err)
	}
	mtmd, err := llama.NewMtmdContext(lctx, projPath)
	if err != nil {
		t.Fatal(err)
	}
	defer mtmd.Free()
	chunks, err := mtmd.MultimodalTokenize(lctx, red)
	if err != nil {
		t.Fatal(err)
	}
	var embeds [][]float32
	for _, c := range chunks {
		embeds = append(embeds, c.Embed)
	}
	if len(embeds) != imageTokensEach {
		t.Fatalf("the reference made %d image embeddings, want %d", len(embeds), imageTokensEach)
	}
	pos := 0
	decode := func(tokens []int, embeds [][]float32, logits bool) {
		t.Helper()
		width := 0
		if embeds != nil {
			width = model.NEmbd()
		}
		b, err := llama.NewBatch(64, 1, width)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		n := max(len(tokens), len(embeds))
		for i := range n {
			var tok int
			var emb []float32
			if embeds != nil {
				emb = embeds[i]
			} else {
				tok = tokens[i]
			}
			b.Add(tok, emb, pos, logits && i == n-1, 0)
			pos++
		}
		if err := lctx.Decode(b); err != nil {
			t.Fatal(err)
		}
	}
	text := func(s string) []int {
		toks, err := model.Tokenize(s, false, true)
		if err != nil {
			t.Fatal(err)
		}
		return toks
	}
	decode(text(before), nil, false)
	decode(nil, embeds, false)
	decode(text(after+branch), nil, true)
	logits := lctx.GetLogitsIth(-1)
	if len(logits) != model.NumVocab() {
		t.Fatalf("%d reference logits", len(logits))
	}
	// Random weights move the numbers little: an image's rows out of
	// order shift them by about 1e-3.
	closeScores(t, got.Branches[0], logSoftmax(logits, cands))
}

// logSoftmax is the log-softmax of logits at the candidates.
func logSoftmax(logits []float32, cands []int) []float64 {
	toks := make([]llamacpp.Token, len(cands))
	for i, c := range cands {
		toks[i] = llamacpp.Token(c)
	}
	return candidateScores(logits, toks).LogProbs
}

// closeScores fails t unless got's log-probabilities are want's within
// 1e-5.
func closeScores(t *testing.T, got BranchScore, want []float64) {
	t.Helper()
	for i := range want {
		if d := math.Abs(got.LogProbs[i] - want[i]); d > 1e-5 {
			t.Errorf("candidate %d: log-probability %v, reference %v", i, got.LogProbs[i], want[i])
		}
	}
}

// Gemma 3 reads an image's tokens all at once, with causal attention off,
// beside a sliding-window text model: the engine gives what a plain
// sequence of decodes on a fresh context gives, and causal attention would
// give other numbers.
func TestScoreImageNonCausal(t *testing.T) {
	modelPath := inferencetest.Model(t, inferencetest.Options{Arch: "gemma3"})
	projPath := inferencetest.Projector(t, inferencetest.ProjectorOptions{Type: "gemma3"})
	const prefix, branch = "Look: " + ImageMarker + " now. ", "Answer: "
	cands := []int{'y', 'n', 'A', ' '}
	e, err := New(Config{Threads: 1, Context: 256, Parallel: 2, Batch: 16, Branches: 2, BranchContext: 64,
		Models: []catalog.Model{{ID: "tiny", Path: modelPath, Projector: projPath}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if !e.names["tiny"].projector.NonCausal() {
		t.Fatal("the gemma3 projector is causal")
	}
	req := ScoreRequest{Model: "tiny", Prefix: prefix, Images: [][]byte{red}, Branches: []Branch{{Text: branch, Candidates: cands}}}
	var got []ScoreResult
	for range 2 { // cold, then from the cache
		res, err := e.Score(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res)
	}

	reference := func(causal bool) []float64 {
		t.Helper()
		m, err := llamacpp.LoadModel(modelPath, llamacpp.ModelParams{})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		p, err := llamacpp.LoadProjector(projPath, m, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		ctx, err := llamacpp.NewContext(m, llamacpp.ContextParams{Context: 256, Batch: 64, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer ctx.Close()
		chunks, err := p.Tokenize(prefix, [][]byte{red})
		if err != nil {
			t.Fatal(err)
		}
		toks, err := m.Tokenize(branch, false, true)
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, llamacpp.Chunk{Tokens: toks})
		pos, last := 0, 0
		for _, c := range chunks {
			var b *llamacpp.Batch
			if c.Image != nil {
				b = llamacpp.NewEmbeddingBatch(ctx, 64)
				for i := range c.Image.Tokens() {
					if _, err := b.AddEmbedding(c.Image.Row(i), pos, []int{0}, false); err != nil {
						t.Fatal(err)
					}
					pos++
				}
				ctx.SetCausal(causal)
			} else {
				b = llamacpp.NewBatch(ctx, 64)
				for _, tok := range c.Tokens {
					if last, err = b.Add(tok, pos, []int{0}, true); err != nil {
						t.Fatal(err)
					}
					pos++
				}
			}
			err := ctx.Decode(b)
			ctx.SetCausal(true)
			b.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
		return logSoftmax(ctx.Logits(last), cands)
	}
	want := reference(false)
	for _, res := range got {
		closeScores(t, res.Branches[0], want)
	}
	if same(reference(true), want) {
		t.Error("causal attention over the image gives the same numbers: the test cannot tell")
	}
}
