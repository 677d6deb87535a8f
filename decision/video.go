package decision

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/inferkit/inferkit/internal/video"
)

// VideoFrames is the most frames the model sees of one video entry: they
// are sampled evenly over the clip, and each is read as a picture
// captioned with its time.
const VideoFrames = 8

// A picture is one image the model reads before the state: an image entry,
// or a frame of a video entry.
type picture struct {
	caption string
	data    []byte
	entry   int // the index of its entry in Request.Images
}

// isVideo says whether an entry is a clip: an MP4, a WebM, or a GIF of
// more than one frame.
func (im Image) isVideo() bool { return video.Kind(im.Data) != "" }

// stillPictures are the pictures of the image entries that are no video,
// in order. A video entry that needs ffmpeg, where there is none, fails
// here, before any work.
func stillPictures(entries []Image) ([]picture, error) {
	var pics []picture
	for i, im := range entries {
		switch video.Kind(im.Data) {
		case "":
			pics = append(pics, picture{caption: fmt.Sprintf("Image %d", i+1), data: im.Data, entry: i})
		case "mp4", "webm":
			if _, err := exec.LookPath("ffmpeg"); err != nil {
				return nil, invalid(at("images", i), "is a video, and this server cannot read one: %v", video.ErrNoFFmpeg)
			}
		}
	}
	return pics, nil
}

// videoDecoders bounds the clips an Evaluator decodes at once: each may
// run ffmpeg with two threads.
const videoDecoders = 2

// allPictures are the pictures of every entry, in order: an image as it
// is, a video as up to VideoFrames frames sampled evenly over it, each
// captioned with its time.
func (e *Evaluator) allPictures(ctx context.Context, entries []Image) ([]picture, error) {
	var pics []picture
	for i, im := range entries {
		if !im.isVideo() {
			pics = append(pics, picture{caption: fmt.Sprintf("Image %d", i+1), data: im.Data, entry: i})
			continue
		}
		select {
		case e.decoders <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("decision: %w", context.Cause(ctx))
		}
		frames, err := video.Frames(ctx, im.Data, video.Options{MaxFrames: VideoFrames})
		<-e.decoders
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("decision: %w", context.Cause(ctx))
			}
			// A clip that cannot be read, or takes too long to.
			return nil, invalid(at("images", i), "%v", err)
		}
		for _, f := range frames {
			pics = append(pics, picture{caption: fmt.Sprintf("Image %d, a video: the frame at %s", i+1, seconds(f.Time)), data: f.Image, entry: i})
		}
	}
	return pics, nil
}

// seconds writes d in seconds to a tenth, such as "1.5 s".
func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
