package video

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds on an ffmpeg run.
const (
	memLimitKiB    = 2 << 20     // address space of the ffmpeg process: 2 GiB
	maxPixels      = 8192 * 4320 // largest decoded frame (8K) ffmpeg may allocate
	maxDuration    = 1e7         // seconds (116 days) a clip's timestamps may span
	maxStderr      = 8 << 10     // bytes of ffmpeg's error output kept
	maxPNG         = 16 << 20    // bytes of one frame as ffmpeg writes it
	maxErrLine     = 240         // bytes of ffmpeg's message quoted in an error
	maxPacketLine  = 1 << 10     // bytes of one line of ffmpeg's packet list
	shellLimitExit = 125         // exit status of the wrapper when it cannot limit memory
	killWait       = 2 * time.Second
	clipName       = "clip"     // the input's name in the private folder
	framePattern   = "%03d.png" // the outputs' names
	videoStream    = "0:V:0"    // the first video stream that is not cover art
)

// findFFmpeg returns the absolute path of the ffmpeg to run.
func findFFmpeg(path string) (string, error) {
	if path == "" {
		path = "ffmpeg"
	}
	bin, err := exec.LookPath(path)
	if err != nil {
		return "", fmt.Errorf("%w (%v)", ErrNoFFmpeg, err)
	}
	if abs, err := filepath.Abs(bin); err == nil {
		bin = abs
	}
	return bin, nil
}

// ffmpegFrames samples an MP4 or WebM clip with ffmpeg.
func ffmpegFrames(ctx context.Context, data []byte, kind string, o Options) ([]Frame, error) {
	bin, err := findFFmpeg(o.FFmpeg)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "inferkit-video-")
	if err != nil {
		return nil, fmt.Errorf("video: cannot make a temporary folder for ffmpeg: %w", err)
	}
	defer os.RemoveAll(dir)
	clip := filepath.Join(dir, clipName)
	if err := writeClip(clip, data); err != nil {
		return nil, err
	}
	demuxer := "mov" // ISO BMFF
	if kind == "webm" {
		demuxer = "matroska"
	}
	input := []string{
		"-nostdin", "-hide_banner", "-loglevel", "error",
		"-protocol_whitelist", "file", "-threads", "2",
		"-max_pixels", strconv.Itoa(maxPixels),
		"-f", demuxer, "-i", "file:" + clip,
	}

	// Pass 1: list the video stream's packets, without decoding, for the
	// duration.
	var pl packetList
	args := append(input[:len(input):len(input)], "-map", videoStream, "-c", "copy", "-f", "framecrc", "-")
	if err := run(ctx, bin, dir, args, &pl); err != nil {
		return nil, err
	}
	if pl.err != nil {
		return nil, pl.err
	}
	if pl.count == 0 {
		return nil, errors.New("video: the clip's video stream has no frames")
	}
	d, err := pl.duration()
	if err != nil {
		return nil, err
	}

	// Pass 2: decode once and write the frames on screen at the sample
	// times. setpts moves each frame half an interval earlier, so that the
	// fps filter's output frame i, the last input frame whose time rounded
	// up is at most i, is the frame on screen at t_i.
	n := o.MaxFrames
	var times []time.Duration
	var vf []string
	if d < time.Millisecond { // a still, or no timestamps: the first frame
		n, times = 1, []time.Duration{0}
	} else {
		times = sampleTimes(d, n)
		half := d.Seconds() / float64(2*n)
		vf = append(vf,
			fmt.Sprintf("setpts=PTS-STARTPTS-%.9f/TB", half),
			fmt.Sprintf("fps=fps=%d/%.9f:start_time=0:round=up", n, d.Seconds()))
	}
	// Scale to square pixels that fit MaxSide, never up.
	m := strconv.Itoa(o.MaxSide)
	s := "min(1," + m + "/max(iw*sar,ih))"
	vf = append(vf,
		"scale=w='max(1,round(iw*sar*"+s+"))':h='max(1,round(ih*"+s+"))':flags=area",
		"setsar=1", "format=rgb24")
	args = append(input[:len(input):len(input)],
		"-map", videoStream, "-an", "-sn", "-dn", "-filter_threads", "1",
		"-vf", strings.Join(vf, ","), "-frames:v", strconv.Itoa(n),
		"-threads", "1", "-c:v", "png", "-f", "image2", "file:"+filepath.Join(dir, framePattern))
	if err := run(ctx, bin, dir, args, nil); err != nil {
		return nil, err
	}
	var frames []Frame
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf(framePattern, i+1))
		img, err := readBounded(name, maxPNG)
		if errors.Is(err, os.ErrNotExist) {
			break // the clip ended before this sample
		}
		if err != nil {
			return nil, fmt.Errorf("video: reading a frame ffmpeg wrote: %w", err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(img))
		if err == nil && (cfg.Width > o.MaxSide || cfg.Height > o.MaxSide) {
			err = fmt.Errorf("it is %d×%d", cfg.Width, cfg.Height)
		}
		if err != nil {
			return nil, fmt.Errorf("video: ffmpeg wrote frame %d as a bad PNG: %w", i+1, err)
		}
		frames = append(frames, Frame{Time: times[i], Image: img, Width: cfg.Width, Height: cfg.Height})
	}
	if len(frames) == 0 {
		return nil, errors.New("video: ffmpeg decoded no frame of the clip")
	}
	return frames, nil
}

// writeClip writes data to a new file readable by its owner only.
func writeClip(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("video: cannot write the clip to a temporary file for ffmpeg: %w", err)
	}
	return nil
}

// readBounded reads a file of at most limit bytes.
func readBounded(name string, limit int64) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, fmt.Errorf("%s is not a regular file of at most %d bytes", filepath.Base(name), limit)
	}
	return os.ReadFile(name)
}

// run runs ffmpeg with args in dir under a 2 GiB address-space limit,
// sending its standard output to stdout (nil discards it), and kills it
// when ctx ends. The error says what went wrong in words a caller can act
// on.
func run(ctx context.Context, bin, dir string, args []string, stdout *packetList) error {
	// The shell sets the limit and becomes ffmpeg. Where the limit cannot
	// be set it must already be lower, or the wrapper gives up.
	script := fmt.Sprintf(`ulimit -v %d 2>/dev/null || [ "$(ulimit -v)" != unlimited ] || exit %d; exec "$0" "$@"`,
		memLimitKiB, shellLimitExit)
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", script, bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"LC_ALL=C"}
	var stderr boundedBuffer
	cmd.Stderr = &stderr
	if stdout != nil {
		cmd.Stdout = stdout
	}
	cmd.WaitDelay = killWait
	setProcAttr(cmd)

	// Pdeathsig fires when the thread that started the child ends: keep
	// this goroutine on its thread until the child is gone.
	runtime.LockOSThread()
	err := cmd.Run()
	runtime.UnlockOSThread()

	if ctx.Err() != nil {
		return ctxErr(ctx)
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit):
		msg := firstLine(stderr.String(), dir)
		switch code := exit.ExitCode(); {
		case code == 126 || code == 127:
			return fmt.Errorf("%w (%s: %s)", ErrNoFFmpeg, bin, msg)
		case code == shellLimitExit:
			return errors.New("video: cannot limit ffmpeg's memory with ulimit -v: refusing to run it")
		case strings.Contains(msg, "matches no streams"):
			return errors.New("video: the clip has no video stream")
		case msg == "":
			return fmt.Errorf("video: ffmpeg cannot read the clip (%v)", exit)
		default:
			return fmt.Errorf("video: ffmpeg cannot read the clip: %s", msg)
		}
	default:
		return fmt.Errorf("video: cannot run ffmpeg through /bin/sh: %w", err)
	}
}

// firstLine returns the first non-empty line of ffmpeg's error output,
// without the "[demuxer @ 0x…] " prefixes and the private folder's path,
// printable and at most maxErrLine bytes.
func firstLine(s, dir string) string {
	var line string
	for l := range strings.Lines(s) {
		if line = strings.TrimSpace(l); line != "" {
			break
		}
	}
	for strings.HasPrefix(line, "[") {
		end := strings.Index(line, "] ")
		if end < 0 || !strings.Contains(line[:end], " @ ") {
			break
		}
		line = line[end+2:]
	}
	line = strings.ReplaceAll(line, "file:"+filepath.Join(dir, clipName), "the clip")
	line = strings.ReplaceAll(line, dir+string(filepath.Separator), "")
	line = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return ' '
		}
		return r
	}, line)
	if len(line) > maxErrLine {
		cut := maxErrLine
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = line[:cut] + "…"
	}
	return line
}

// boundedBuffer keeps the first maxStderr bytes written to it.
type boundedBuffer struct{ bytes.Buffer }

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := maxStderr - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// packetList reads ffmpeg's framecrc output as it comes: a "#tb" line for
// the stream's time base, then "stream, dts, pts, duration, size, crc..."
// for each packet. It keeps only what the duration needs.
type packetList struct {
	line            []byte
	num, den        int64
	count           int
	minPts, maxPts  int64
	maxEnd, lastDur int64
	err             error
	haveTB, havePts bool
}

func (p *packetList) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 && p.err == nil {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(p.line)+len(b) > maxPacketLine {
				p.err = errors.New("video: ffmpeg's packet list has an overlong line")
			}
			p.line = append(p.line, b...)
			break
		}
		if len(p.line)+i > maxPacketLine {
			p.err = errors.New("video: ffmpeg's packet list has an overlong line")
			break
		}
		p.line = append(p.line, b[:i]...)
		p.parse(string(p.line))
		p.line = p.line[:0]
		b = b[i+1:]
	}
	return n, nil
}

// parse reads one line of the packet list.
func (p *packetList) parse(line string) {
	if rest, ok := strings.CutPrefix(line, "#tb 0:"); ok {
		num, den, ok := strings.Cut(strings.TrimSpace(rest), "/")
		a, err1 := strconv.ParseInt(num, 10, 64)
		b, err2 := strconv.ParseInt(den, 10, 64)
		if !ok || err1 != nil || err2 != nil || a <= 0 || b <= 0 {
			p.err = fmt.Errorf("video: ffmpeg gave the clip a bad time base %q", rest)
			return
		}
		p.num, p.den, p.haveTB = a, b, true
		return
	}
	if line == "" || line[0] == '#' {
		return
	}
	f := strings.SplitN(line, ",", 5)
	if len(f) < 5 {
		return
	}
	pts, err1 := strconv.ParseInt(strings.TrimSpace(f[2]), 10, 64)
	dur, err2 := strconv.ParseInt(strings.TrimSpace(f[3]), 10, 64)
	if err1 != nil || err2 != nil {
		p.err = fmt.Errorf("video: ffmpeg listed a packet as %q", line)
		return
	}
	p.count++
	if pts == math.MinInt64 { // no timestamp
		return
	}
	dur = max(dur, 0)
	end := pts + dur
	if end < pts {
		end = pts // overflow: ignore the duration
	}
	if !p.havePts {
		p.minPts, p.maxPts, p.maxEnd, p.havePts = pts, pts, end, true
	}
	p.minPts = min(p.minPts, pts)
	if pts >= p.maxPts {
		p.maxPts, p.lastDur = pts, dur
	}
	p.maxEnd = max(p.maxEnd, end)
}

// duration returns the span of the video stream's timestamps, from the
// first frame's start to the last frame's end. Where the last frame has
// no duration, it is taken to last as long as the average frame.
func (p *packetList) duration() (time.Duration, error) {
	if !p.havePts || !p.haveTB {
		return 0, nil // no timestamps: take the first frame
	}
	span := float64(p.maxEnd) - float64(p.minPts)
	if p.lastDur == 0 && p.maxEnd == p.maxPts && p.count > 1 {
		span += (float64(p.maxPts) - float64(p.minPts)) / float64(p.count-1)
	}
	sec := span * float64(p.num) / float64(p.den)
	if math.IsNaN(sec) || math.IsInf(sec, 0) || sec < 0 || sec > maxDuration {
		return 0, fmt.Errorf("video: the clip's timestamps span %g seconds; the limit is %g", sec, float64(maxDuration))
	}
	d := time.Duration(sec * float64(time.Second))
	return d, nil
}
