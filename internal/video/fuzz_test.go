package video

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"testing"
	"time"

	"github.com/inferkit/inferkit/internal/boundedtest"
)

// FuzzKind checks that Kind never panics and agrees with the sniffers
// Frames dispatches on: go test -fuzz FuzzKind ./internal/video
func FuzzKind(f *testing.F) {
	f.Add(disposalGIF(f))
	f.Add(ftyp("isom"))
	f.Add(ebml("webm"))
	f.Add([]byte("\x1a\x45\xdf\xa3\x01\x00\x00\x00\x00\x00\x00\x1f\x42\x82\x88matroska"))
	f.Add([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = boundedtest.Run(t, 5*time.Second, "Kind", func() error {
			switch k := Kind(data); {
			case k == "gif" && !isGIF(data), k == "mp4" && !isMP4(data), k == "webm" && !isWebM(data):
				t.Errorf("Kind = %q, but the sniffer disagrees", k)
			case k != "" && k != "gif" && k != "mp4" && k != "webm":
				t.Errorf("Kind = %q", k)
			}
			return nil
		})
	})
}

// FuzzFrames feeds GIFs to Frames: it must return frames that keep their
// promises, or an error, within a bound, without panicking. Go test
// -fuzz FuzzFrames ./internal/video
func FuzzFrames(f *testing.F) {
	f.Add(disposalGIF(f))
	f.Add(rawGIF(8, 8, []image.Rectangle{image.Rect(0, 0, 1, 1), image.Rect(1, 1, 8, 8)}, true))
	f.Add(rawGIF(8, 8, []image.Rectangle{image.Rect(0, 0, 1, 1), image.Rect(0, 0, 1, 1)}, false))
	f.Add(makeGIF(f, 3, 2, []gifFrameSpec{
		{rect: image.Rect(0, 0, 3, 2), fill: solid(1), delay: 0, disposal: 2},
		{rect: image.Rect(1, 0, 2, 2), fill: solid(0), delay: 3, disposal: 3},
		{rect: image.Rect(0, 1, 3, 2), fill: solid(4), delay: 7},
	}))
	opt := Options{MaxFrames: 5, MaxSide: 16, Timeout: 20 * time.Second}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !isGIF(data) || len(data) > 1<<20 {
			return // Frames hands anything else to ffmpeg
		}
		var frames []Frame
		err := boundedtest.Run(t, 30*time.Second, "Frames", func() error {
			var err error
			frames, err = Frames(context.Background(), data, opt)
			return err
		})
		if err != nil {
			return
		}
		if len(frames) == 0 || len(frames) > opt.MaxFrames {
			t.Fatalf("%d frames", len(frames))
		}
		for i, fr := range frames {
			if i > 0 && fr.Time <= frames[i-1].Time {
				t.Fatalf("frame %d at %v, after %v", i, fr.Time, frames[i-1].Time)
			}
			img, err := png.Decode(bytes.NewReader(fr.Image))
			if err != nil {
				t.Fatalf("frame %d: %v", i, err)
			}
			if b := img.Bounds(); b.Dx() != fr.Width || b.Dy() != fr.Height || fr.Width > opt.MaxSide || fr.Height > opt.MaxSide || fr.Width < 1 || fr.Height < 1 {
				t.Fatalf("frame %d is %v, says %d×%d", i, b, fr.Width, fr.Height)
			}
		}
	})
}
