//go:build cgo

package decision_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/inferkit/inferkit/catalog"
	"github.com/inferkit/inferkit/decision"
	"github.com/inferkit/inferkit/inference"
	"github.com/inferkit/inferkit/inference/inferencetest"
)

// prefixes keeps the prefix of every prepared Score request.
type prefixes struct {
	*inference.Engine
	mu   sync.Mutex
	seen []inference.ScoreRequest
}

func (p *prefixes) PrepareScore(req inference.ScoreRequest) (*inference.PreparedScore, error) {
	p.mu.Lock()
	p.seen = append(p.seen, req)
	p.mu.Unlock()
	return p.Engine.PrepareScore(req)
}

// animatedGIF is a clip of n solid frames, each shown for delay
// hundredths of a second.
func animatedGIF(t *testing.T, n, delay int) []byte {
	t.Helper()
	g := &gif.GIF{}
	pal := color.Palette{color.RGBA{255, 0, 0, 255}, color.RGBA{0, 255, 0, 255}, color.RGBA{0, 0, 255, 255}}
	for i := range n {
		img := image.NewPaletted(image.Rect(0, 0, 32, 24), pal)
		for j := range img.Pix {
			img.Pix[j] = uint8(i % len(pal))
		}
		g.Image = append(g.Image, img)
		g.Delay = append(g.Delay, delay)
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, g); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A video entry becomes frames sampled over the clip, each read as a
// picture captioned with its time: an animated GIF of three frames is
// three pictures, counted as input tokens; an MP4 (made with ffmpeg's
// testsrc) is VideoFrames pictures. Admission is told the most pictures
// before any frame is sampled.
func TestEngineVideo(t *testing.T) {
	e, err := inference.New(inference.Config{Threads: 1, Parallel: 1, ContextTokens: 2048, Models: []catalog.Model{{
		ID: "vision", Kind: catalog.KindDecision,
		Path:      inferencetest.Model(t, inferencetest.Options{ContextLength: 4096}),
		Projector: inferencetest.Projector(t, inferencetest.ProjectorOptions{}),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rec := &prefixes{Engine: e}
	ev, err := decision.New(decision.Config{Engine: rec, Model: "vision", Images: true})
	if err != nil {
		t.Fatal(err)
	}
	still := base64.StdEncoding.EncodeToString(inferencetest.PNG(32, 24, 1))
	ask := func(t *testing.T, clip []byte, wantFrames int) {
		t.Helper()
		rec.seen = nil
		req := decode(t, `{"model": "vision", "state": "A clip from the garden.", "questions": {"moving": {"type": "noul", "instructions": "Does anything move?"}},
			"images": ["`+still+`", "data:video/mp4;base64,`+base64.StdEncoding.EncodeToString(clip)+`"]}`)
		p, err := ev.Prepare(req)
		if err != nil {
			t.Fatal(err)
		}
		if p.Pictures != 1+decision.VideoFrames {
			t.Errorf("Pictures %d before sampling, want the image and %d frames", p.Pictures, decision.VideoFrames)
		}
		res, err := ev.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		checkAnswers(t, req, res)
		last := rec.seen[len(rec.seen)-1]
		captions := regexp.MustCompile(`Image 2, a video: the frame at \d+\.\d s`).FindAllString(last.Prefix, -1)
		if len(captions) != wantFrames || len(last.Images) != 1+wantFrames {
			t.Fatalf("%d frame captions and %d pictures in the prompt, want %d frames:\n%s", len(captions), len(last.Images), wantFrames, last.Prefix)
		}
		// Each picture of the tiny projector is 16 tokens.
		if res.Usage.InputTokens < 16*(1+wantFrames) {
			t.Errorf("usage %+v: the frames' tokens are missing", res.Usage)
		}
	}
	t.Run("gif", func(t *testing.T) { ask(t, animatedGIF(t, 3, 50), 3) })
	t.Run("mp4", func(t *testing.T) {
		ffmpeg, err := exec.LookPath("ffmpeg")
		if err != nil {
			t.Skip("ffmpeg is not installed (make setup installs Debian's ffmpeg)")
		}
		path := filepath.Join(t.TempDir(), "clip.mp4")
		out, err := exec.Command(ffmpeg, "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=duration=2:size=64x48:rate=10", "-pix_fmt", "yuv420p", path).CombinedOutput()
		if err != nil {
			t.Fatalf("ffmpeg: %v: %s", err, out)
		}
		clip, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ask(t, clip, decision.VideoFrames)

		// A clip ffmpeg cannot read names its entry.
		broken := append(clip[:64:64], bytes.Repeat([]byte{0}, 512)...)
		req := decode(t, `{"model": "vision", "state": "s", "questions": {"q": {"type": "noul"}}, "images": ["`+still+`", "`+base64.StdEncoding.EncodeToString(broken)+`"]}`)
		if _, err := ev.Evaluate(context.Background(), req); !isEntryError(err, "images[1]") {
			t.Errorf("a broken MP4: %v, want an error naming images[1]", err)
		}

		// Without ffmpeg, an MP4 is refused before any work, saying what
		// to install.
		t.Setenv("PATH", t.TempDir())
		req = decode(t, `{"model": "vision", "state": "s", "questions": {"q": {"type": "noul"}}, "images": ["`+base64.StdEncoding.EncodeToString(clip)+`"]}`)
		_, err = ev.Prepare(req)
		if !isEntryError(err, "images[0]") || !strings.Contains(err.Error(), "ffmpeg") {
			t.Errorf("an MP4 without ffmpeg: %v, want an error naming images[0] and ffmpeg", err)
		}
	})
}

func isEntryError(err error, param string) bool {
	de, ok := errors.AsType[*decision.Error](err)
	return ok && de.Param == param
}
