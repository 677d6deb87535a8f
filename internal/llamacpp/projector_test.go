package llamacpp

import (
	"context"
	"math"
	"testing"

	"github.com/inferkit/inferkit/internal/bitmap"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
)

// decodeAll decodes pictures for Tokenize.
func decodeAll(t *testing.T, pictures [][]byte) []*bitmap.RGB {
	t.Helper()
	var out []*bitmap.RGB
	for _, pic := range pictures {
		img, err := bitmap.Decode(context.Background(), pic)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, img)
	}
	return out
}

// decodeChunks decodes what Projector.Tokenize made of a prompt on
// sequence 0 of ctx, as the engine does: text in token batches, each image
// in an embedding batch of its own (2-D positions on an M-RoPE model,
// causal attention off when the projector asks). It returns the logits of
// the last token.
func decodeChunks(t *testing.T, p *Projector, ctx *Context, chunks []Chunk) []float32 {
	t.Helper()
	pos, last := 0, 0
	for _, c := range chunks {
		var b *Batch
		var err error
		if c.Image != nil {
			b = NewEmbeddingBatch(ctx, ctx.BatchSize())
			for i := range c.Image.Tokens() {
				if x := c.Image.GridX; x > 0 {
					_, err = b.AddGridEmbedding(c.Image.Row(i), pos, i/x, i%x, []int{0})
				} else {
					_, err = b.AddEmbedding(c.Image.Row(i), pos+i, []int{0}, false)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			pos += c.Image.Positions
			ctx.SetCausal(!p.NonCausal())
		} else {
			b = NewBatch(ctx, ctx.BatchSize())
			for _, tok := range c.Tokens {
				if last, err = b.Add(tok, pos, []int{0}, true); err != nil {
					t.Fatal(err)
				}
				pos++
			}
		}
		err = ctx.Decode(b)
		ctx.SetCausal(true)
		b.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return append([]float32(nil), ctx.Logits(last)...)
}

// projectorKind is a kind of projector and a model it fits.
type projectorKind struct {
	name      string
	model     inferencetest.Options
	projector inferencetest.ProjectorOptions
}

// projectorKinds are the kinds of projector the tests cover:
// positions one per token (LLaVA), an image read whole with causal
// attention off (Gemma 3), and 2-D M-RoPE positions (Qwen2-VL).
var projectorKinds = []projectorKind{
	{"llava", inferencetest.Options{}, inferencetest.ProjectorOptions{}},
	{"gemma3", inferencetest.Options{Arch: "gemma3"}, inferencetest.ProjectorOptions{Type: "gemma3"}},
	{"qwen2vl", inferencetest.Options{Arch: "qwen2vl"}, inferencetest.ProjectorOptions{Type: "qwen2vl"}},
}

// loadProjectorKind loads tc's model and projector, both closed when
// the test ends.
func loadProjectorKind(t *testing.T, tc projectorKind) (*Model, *Projector) {
	t.Helper()
	m, err := LoadModel(inferencetest.Model(t, tc.model), ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	p, err := LoadProjector(inferencetest.Projector(t, tc.projector), m, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return m, p
}

// Images decoded through Batch and Context give the logits that llama.cpp's
// own mtmd helper gives, for each kind of projector: positions one per
// token (LLaVA), an image read whole with causal attention off (Gemma 3),
// and 2-D M-RoPE positions (Qwen2-VL).
func TestProjectorMatchesHelper(t *testing.T) {
	for _, tc := range projectorKinds {
		t.Run(tc.name, func(t *testing.T) {
			m, p := loadProjectorKind(t, tc)
			const text = "Look: " + MediaMarker + " and " + MediaMarker + ". Answer:"
			images := [][]byte{inferencetest.PNG(40, 30, 1), inferencetest.PNG(24, 36, 2)}
			newContext := func() *Context {
				ctx, err := NewContext(m, ContextParams{Context: 512, Batch: 256, Threads: 1})
				if err != nil {
					t.Fatal(err)
				}
				return ctx
			}
			want := newContext()
			defer want.Close()
			if err := EvalWithHelper(p, want, text, images); err != nil {
				t.Fatal(err)
			}
			ctx := newContext()
			defer ctx.Close()
			chunks, err := p.Tokenize(text, decodeAll(t, images))
			if err != nil {
				t.Fatal(err)
			}
			got := decodeChunks(t, p, ctx, chunks)
			var worst float64
			for i, l := range want.Logits(-1) {
				worst = max(worst, math.Abs(float64(l-got[i])))
			}
			if worst > 1e-4 {
				t.Errorf("logits differ from the helper's by up to %g", worst)
			}
			if ctx.MaxPos(0) != want.MaxPos(0) {
				t.Errorf("last position %d, the helper's %d", ctx.MaxPos(0), want.MaxPos(0))
			}
		})
	}
}

// A projector that places images with M-RoPE positions needs a text model
// that reads them, and the other way round.
func TestProjectorMRoPEMismatch(t *testing.T) {
	for _, tc := range []struct {
		model     inferencetest.Options
		projector inferencetest.ProjectorOptions
	}{
		{inferencetest.Options{}, inferencetest.ProjectorOptions{Type: "qwen2vl"}},
		{inferencetest.Options{Arch: "qwen2vl"}, inferencetest.ProjectorOptions{}},
	} {
		m, err := LoadModel(inferencetest.Model(t, tc.model), ModelParams{})
		if err != nil {
			t.Fatal(err)
		}
		if p, err := LoadProjector(inferencetest.Projector(t, tc.projector), m, 1); err == nil {
			p.Close()
			t.Errorf("%s projector on a %s model: loaded", tc.projector.Type, tc.model.Arch)
		}
		m.Close()
	}
}

// ImageTokens counts, from an image's size alone, the tokens that Tokenize
// makes of the marker and an image of that size, for each kind of
// projector (Qwen2-VL's count depends on the size), and refuses a size
// past bitmap.MaxSide or an RGB that is not of its size.
func TestProjectorImageTokens(t *testing.T) {
	for _, tc := range projectorKinds {
		t.Run(tc.name, func(t *testing.T) {
			_, p := loadProjectorKind(t, tc)
			for _, size := range [][2]int{{40, 30}, {24, 36}, {300, 20}, {40, 30}} {
				img := &bitmap.RGB{Width: size[0], Height: size[1], Pix: make([]byte, 3*size[0]*size[1])}
				chunks, err := p.Tokenize(MediaMarker, []*bitmap.RGB{img})
				if err != nil {
					t.Fatal(err)
				}
				want := 0
				for _, c := range chunks {
					want += len(c.Tokens)
					if c.Image != nil {
						want += c.Image.Tokens()
					}
				}
				if got, err := p.ImageTokens(size[0], size[1]); err != nil || got != want {
					t.Errorf("%v: ImageTokens %d, %v; Tokenize made %d", size, got, err, want)
				}
			}
			if _, err := p.ImageTokens(bitmap.MaxSide+1, 1); err == nil {
				t.Error("ImageTokens of a side past MaxSide: no error")
			}
			if _, err := p.Tokenize(MediaMarker, []*bitmap.RGB{{Width: 2, Height: 2, Pix: make([]byte, 11)}}); err == nil {
				t.Error("Tokenize of an RGB shorter than its size: no error")
			}
		})
	}
}
