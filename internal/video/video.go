package video

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
)

// MaxBytes is the largest clip Frames accepts, 64 MiB; callers may cap
// request bodies with it.
const MaxBytes = 64 << 20

// Bounds on Options.
const (
	defaultMaxFrames = 8
	maxMaxFrames     = 32
	defaultMaxSide   = 768
	maxMaxSide       = 2048
	defaultTimeout   = 30 * time.Second
)

// ErrNoFFmpeg is returned, wrapped, by Frames for an MP4 or WebM clip when
// ffmpeg is not installed (or Options.FFmpeg names no executable file).
var ErrNoFFmpeg = errors.New("video: ffmpeg is not installed: install Debian's ffmpeg package (apt-get install ffmpeg) to read MP4 and WebM clips")

// Frame is one sampled picture of a clip.
type Frame struct {
	// Time is the sample time, from the start of the clip, at which the
	// picture is on screen.
	Time time.Duration
	// Image is the picture, PNG-encoded, opaque RGB.
	Image []byte
	// Width and Height are Image's size in pixels.
	Width, Height int
}

// Options bounds Frames. The zero value samples up to 8 frames of at most
// 768 pixels a side within 30 seconds, with the ffmpeg found on PATH.
type Options struct {
	// MaxFrames is how many frames are sampled, evenly over the clip;
	// 0 means 8. It must not exceed 32.
	MaxFrames int
	// MaxSide bounds each frame's width and height in pixels: larger
	// frames are scaled down, keeping their aspect ratio; smaller ones are
	// left as they are. 0 means 768. It must not exceed 2048.
	MaxSide int
	// Timeout bounds the decoding of one clip; 0 means 30 seconds.
	Timeout time.Duration
	// FFmpeg is the path of the ffmpeg executable; "" looks up "ffmpeg" on
	// PATH. Only MP4 and WebM clips need it.
	FFmpeg string
}

// resolve applies the defaults and checks the bounds.
func (o Options) resolve() (Options, error) {
	switch {
	case o.MaxFrames < 0 || o.MaxFrames > maxMaxFrames:
		return o, fmt.Errorf("video: Options.MaxFrames is %d; want 1 to %d, or 0 for %d", o.MaxFrames, maxMaxFrames, defaultMaxFrames)
	case o.MaxSide < 0 || o.MaxSide > maxMaxSide:
		return o, fmt.Errorf("video: Options.MaxSide is %d; want 1 to %d, or 0 for %d", o.MaxSide, maxMaxSide, defaultMaxSide)
	case o.Timeout < 0:
		return o, fmt.Errorf("video: Options.Timeout is %v; want a positive duration, or 0 for %v", o.Timeout, defaultTimeout)
	}
	if o.MaxFrames == 0 {
		o.MaxFrames = defaultMaxFrames
	}
	if o.MaxSide == 0 {
		o.MaxSide = defaultMaxSide
	}
	if o.Timeout == 0 {
		o.Timeout = defaultTimeout
	}
	return o, nil
}

// Frames samples up to opt.MaxFrames frames evenly over the clip's
// duration and returns them in order of time, as PNG scaled to fit
// opt.MaxSide; the package documentation gives the sampling rule. The clip
// is an MP4, WebM or animated GIF (see Kind) of at most MaxBytes. It
// returns an error, never a partial result, when the clip cannot be read,
// exceeds a bound, or ctx ends or opt.Timeout passes first (the error then
// wraps ctx's error or context.DeadlineExceeded). Frames does not keep or
// modify data and is safe for concurrent use; each call on an MP4 or WebM
// clip runs ffmpeg twice, one process at a time.
func Frames(ctx context.Context, data []byte, opt Options) ([]Frame, error) {
	o, err := opt.resolve()
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, errors.New("video: the clip is empty")
	}
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("video: the clip is %d bytes; the limit is %d (64 MiB): send a shorter or smaller clip", len(data), MaxBytes)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, o.Timeout,
		fmt.Errorf("video: decoding the clip took longer than %v: %w", o.Timeout, context.DeadlineExceeded))
	defer cancel()

	var frames []Frame
	switch {
	case isGIF(data):
		frames, err = gifFrames(ctx, data, o)
	case isMP4(data):
		frames, err = ffmpegFrames(ctx, data, "mp4", o)
	case isWebM(data):
		frames, err = ffmpegFrames(ctx, data, "webm", o)
	default:
		return nil, errors.New("video: the clip is not an MP4, WebM or animated GIF")
	}
	if err != nil {
		return nil, err
	}
	return dedupe(frames), nil
}

// ctxErr says why ctx ended, wrapping its error.
func ctxErr(ctx context.Context) error {
	cause := context.Cause(ctx)
	if cause == ctx.Err() {
		return fmt.Errorf("video: decoding the clip stopped: %w", cause)
	}
	return cause
}

// sampleTimes returns the n sample times of a clip lasting d:
// t_i = (i+0.5)·d/n.
func sampleTimes(d time.Duration, n int) []time.Duration {
	ts := make([]time.Duration, n)
	for i := range ts {
		// d ≤ 2^63/64 for every clip that reaches here, so this cannot
		// overflow.
		ts[i] = time.Duration(int64(d) * int64(2*i+1) / int64(2*n))
	}
	return ts
}

// dedupe drops each frame whose picture is identical to the one before.
func dedupe(frames []Frame) []Frame {
	out := frames[:0]
	for i, f := range frames {
		if i > 0 && bytes.Equal(f.Image, out[len(out)-1].Image) {
			continue
		}
		out = append(out, f)
	}
	return out
}
