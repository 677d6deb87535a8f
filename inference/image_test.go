//go:build cgo

package inference

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/inference/inferencetest"
	"github.com/inferkit/inferkit/internal/llamacpp"
	"github.com/inferkit/inferkit/internal/runner"
)

// imageEngine serves "tiny", a byte-level llama with a vision projector that
// makes 16 tokens of each image.
func imageEngine(t *testing.T, cfg Config) (*Engine, *runner.Runner) {
	t.Helper()
	cfg.Models = []catalog.Model{{
		ID:        "tiny",
		Path:      inferencetest.Model(t, inferencetest.Options{}),
		Projector: inferencetest.Projector(t, inferencetest.ProjectorOptions{}),
	}}
	cfg.Threads = 1
	cfg.ContextTokens = 512
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
	{Text: "Is it a cat? ", Candidates: singles('y', 'n')},
	{Text: "Pick A, B or C: ", Candidates: singles('A', 'B', 'C')},
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
	before := r.Stats().Decoded
	warm := scoreImages(t, e, prefix, red, green)
	if warm.Usage.CachedTokens != want {
		t.Errorf("repeat: %d cached tokens, want the whole prefix's %d", warm.Usage.CachedTokens, want)
	}
	if got := r.Stats().Decoded - before; got != int64(branchTokens) {
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
	b := []Branch{{Text: "? ", Candidates: singles('y')}}
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
			e, err := New(Config{Models: tc.models, Threads: 1, ContextTokens: 256})
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
	e, err := New(Config{Threads: 1, ContextTokens: 256, Models: []catalog.Model{
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

// For each kind of projector the engine's numbers are what llama.cpp's own
// mtmd helper gives for the same prompt on a fresh context: one position a
// token (LLaVA); an image read whole with causal attention off beside
// sliding-window layers (Gemma 3); 2-D M-RoPE positions (Qwen2-VL). They
// hold cold, with the images from the prompt cache, with images split
// across small batches, and beside another request.
func TestScoreImagesMatchHelper(t *testing.T) {
	for _, tc := range []struct {
		name      string
		model     inferencetest.Options
		projector inferencetest.ProjectorOptions
		small     int // a small batch; an image read whole must fit it
	}{
		{"llava", inferencetest.Options{}, inferencetest.ProjectorOptions{}, 9},
		{"gemma3", inferencetest.Options{Arch: "gemma3"}, inferencetest.ProjectorOptions{Type: "gemma3"}, 16},
		{"qwen2vl", inferencetest.Options{Arch: "qwen2vl"}, inferencetest.ProjectorOptions{Type: "qwen2vl"}, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			modelPath, projPath := inferencetest.Model(t, tc.model), inferencetest.Projector(t, tc.projector)
			const prefix, branch = "Look: " + ImageMarker + " and " + ImageMarker + ". ", "Answer: "
			images := [][]byte{red, inferencetest.PNG(24, 36, 3)}
			cands := []int{'y', 'n', 'A', ' '}

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
			ctx, err := llamacpp.NewContext(m, llamacpp.ContextParams{Context: 512, Batch: 256, Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer ctx.Close()
			if err := llamacpp.EvalWithHelper(p, ctx, prefix+branch, images); err != nil {
				t.Fatal(err)
			}
			want := logSoftmax(ctx.Logits(-1), cands)

			req := ScoreRequest{Model: "tiny", Prefix: prefix, Images: images, Branches: []Branch{{Text: branch, Candidates: singles(cands...)}}}
			for _, batch := range []int{512, tc.small} {
				e, err := New(Config{Threads: 1, ContextTokens: 512, Parallel: 2, Batch: batch, Branches: 2, BranchContext: 64,
					Models: []catalog.Model{{ID: "tiny", Path: modelPath, Projector: projPath}}})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				var wg sync.WaitGroup
				results := make([]ScoreResult, 3)
				for i := range 2 { // two at once: one follows or copies the other
					wg.Go(func() {
						var err error
						if results[i], err = e.Score(context.Background(), req); err != nil {
							t.Error(err)
						}
					})
				}
				wg.Wait()
				if results[2], err = e.Score(context.Background(), req); err != nil { // from the cache
					t.Fatal(err)
				}
				if results[2].Usage.CachedTokens == 0 {
					t.Errorf("batch %d: the repeated prefix was not cached", batch)
				}
				for _, res := range results {
					closeScores(t, res.Branches[0], want)
				}
				if got, want := e.names["tiny"].runner.MaxPos(0), ctx.MaxPos(0)-len(branch); got != want {
					t.Errorf("batch %d: the prefix ends at position %d, the helper's at %d", batch, got, want)
				}
			}
		})
	}
}

// logSoftmax is the log-softmax of logits at the candidates.
func logSoftmax(logits []float32, cands []int) []float64 {
	toks := make([][]llamacpp.Token, len(cands))
	for i, c := range cands {
		toks[i] = []llamacpp.Token{llamacpp.Token(c)}
	}
	t := runner.NewCandidateTree(toks)
	edge := make([]float64, t.Nodes())
	t.Read(0, logits, llamacpp.LogSumExp(logits), edge)
	lp, _ := t.Score(edge)
	return lp
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
