package video

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needFFmpeg skips the test, saying why, when ffmpeg is not installed.
func needFFmpeg(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("video: ffmpeg is not installed (apt-get install ffmpeg, or run `make test`, which installs it): skipping the MP4 and WebM tests")
	}
}

// makeClip has ffmpeg write a clip named name from the arguments that
// precede the output, and returns its bytes.
func makeClip(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	args = append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}, args...)
	if b, err := exec.Command("ffmpeg", append(args, out)...).CombinedOutput(); err != nil {
		t.Fatalf("making %s: %v\n%s", name, err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// counterSource is a lavfi source of 32×32 grey frames at 10 fps lasting
// 4 s, frame n of grey level 6n, so a pixel tells which frame it is.
const counterSource = "color=black:size=32x32:rate=10:duration=4,format=gray,geq=lum='N*6'"

// fakeFFmpeg writes a shell script to stand in for ffmpeg.
func fakeFFmpeg(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ffmpeg")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// privateTemp points the package's temporary folders at a fresh folder
// and fails the test if anything is left in it at the end.
func privateTemp(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	t.Cleanup(func() {
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("temporary folder left behind: %s", left[0].Name())
		}
	})
}

func TestFFmpegSamplesTheFrameOnScreen(t *testing.T) {
	needFFmpeg(t)
	privateTemp(t)
	mp4 := makeClip(t, "counter.mp4", "-f", "lavfi", "-i", counterSource, "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p", "-g", "10")
	webm := makeClip(t, "counter.webm", "-f", "lavfi", "-i", counterSource, "-c:v", "libvpx", "-crf", "4", "-b:v", "2M", "-pix_fmt", "yuv420p", "-g", "10")
	for _, tc := range []struct {
		name string
		data []byte
		kind string
		n    int
	}{
		{"mp4 8", mp4, "mp4", 8},
		{"mp4 32", mp4, "mp4", 32},
		{"webm 8", webm, "webm", 8},
		{"webm 3", webm, "webm", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if k := Kind(tc.data); k != tc.kind {
				t.Fatalf("Kind = %q, want %q", k, tc.kind)
			}
			frames, err := Frames(context.Background(), tc.data, Options{MaxFrames: tc.n})
			if err != nil {
				t.Fatal(err)
			}
			if len(frames) != tc.n {
				t.Fatalf("%d frames, want %d", len(frames), tc.n)
			}
			const d = 4 * time.Second
			for i, f := range frames {
				// The rule: t_i = (i+0.5)·D/N, showing the frame on screen then.
				want := d * time.Duration(2*i+1) / time.Duration(2*tc.n)
				if f.Time != want {
					t.Errorf("frame %d at %v, want %v", i, f.Time, want)
				}
				onScreen := int(want / (100 * time.Millisecond))
				if f.Width != 32 || f.Height != 32 {
					t.Errorf("frame %d is %d×%d, want 32×32", i, f.Width, f.Height)
				}
				c := pixel(t, f, 16, 16)
				if got := (int(c.G) + 3) / 6; got != onScreen {
					t.Errorf("frame %d at %v shows frame %d (grey %d), want frame %d", i, f.Time, got, c.G, onScreen)
				}
			}
		})
	}
}

func TestFFmpegFewerFramesThanSamples(t *testing.T) {
	needFFmpeg(t)
	// Three frames, one a second: eight samples fall on them 3, 2 and 3
	// times; each picture comes back once, at its first sample.
	clip := makeClip(t, "three.mp4", "-f", "lavfi", "-i", "color=black:size=32x32:rate=1:duration=3,format=gray,geq=lum='N*60'",
		"-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p")
	frames, err := Frames(context.Background(), clip, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{187500 * time.Microsecond, 1312500 * time.Microsecond, 2062500 * time.Microsecond}
	if len(frames) != len(want) {
		t.Fatalf("%d frames, want %d", len(frames), len(want))
	}
	for i, f := range frames {
		if f.Time != want[i] {
			t.Errorf("frame %d at %v, want %v", i, f.Time, want[i])
		}
		if c := pixel(t, f, 16, 16); (int(c.G)+30)/60 != i {
			t.Errorf("frame %d shows grey %d, want about %d", i, c.G, 60*i)
		}
	}
}

func TestFFmpegScales(t *testing.T) {
	needFFmpeg(t)
	clip := makeClip(t, "big.mp4", "-f", "lavfi", "-i", "testsrc=duration=2:size=640x480:rate=10", "-pix_fmt", "yuv420p")
	// Anamorphic: 320×240 stored, pixels twice as wide as high.
	wide := makeClip(t, "wide.webm", "-f", "lavfi", "-i", "testsrc=duration=1:size=320x240:rate=10,setsar=2", "-c:v", "libvpx", "-b:v", "500k")
	for _, tc := range []struct {
		name        string
		data        []byte
		maxSide     int
		wantW, want int
	}{
		{"down to 64", clip, 64, 64, 48},
		{"default", clip, 0, 640, 480},
		{"square pixels", wide, 0, 640, 240},
		{"square pixels, down", wide, 320, 320, 120},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames, err := Frames(context.Background(), tc.data, Options{MaxFrames: 4, MaxSide: tc.maxSide})
			if err != nil {
				t.Fatal(err)
			}
			if len(frames) != 4 {
				t.Fatalf("%d frames, want 4", len(frames))
			}
			for i, f := range frames {
				if f.Width != tc.wantW || f.Height != tc.want {
					t.Errorf("frame %d is %d×%d, want %d×%d", i, f.Width, f.Height, tc.wantW, tc.want)
				}
				if i > 0 && f.Time <= frames[i-1].Time {
					t.Errorf("frame %d at %v is not after frame %d at %v", i, f.Time, i-1, frames[i-1].Time)
				}
				pixel(t, f, f.Width-1, f.Height-1) // decodes, at the size it claims
			}
		})
	}
}

func TestFFmpegHostile(t *testing.T) {
	needFFmpeg(t)
	privateTemp(t)
	mp4 := makeClip(t, "c.mp4", "-f", "lavfi", "-i", "testsrc=duration=2:size=160x120:rate=10", "-pix_fmt", "yuv420p")
	webm := makeClip(t, "c.webm", "-f", "lavfi", "-i", "testsrc=duration=2:size=160x120:rate=10", "-c:v", "libvpx")
	audio := makeClip(t, "a.mp4", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "aac")
	rng := rand.New(rand.NewPCG(1, 2))
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = byte(rng.UintN(256))
	}
	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"truncated mp4", "moov atom not found", mp4[:len(mp4)/2]},
		{"truncated webm", "ffmpeg", webm[:200]},
		{"junk claiming ftyp", "video: ffmpeg cannot read the clip", append(ftyp("isom"), junk...)},
		{"junk claiming EBML", "video: ffmpeg cannot read the clip", append(ebml("webm"), junk...)},
		{"audio only", "no video stream", audio},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if Kind(tc.data) == "" {
				t.Fatal("Kind does not take it for a clip: the test checks nothing")
			}
			frames, err := Frames(context.Background(), tc.data, Options{Timeout: 20 * time.Second})
			if err == nil {
				t.Fatalf("got %d frames, want an error", len(frames))
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), os.TempDir()) {
				t.Fatalf("error %q, want one that says %q and names no temporary file", err, tc.want)
			}
		})
	}
}

func TestFFmpegCancelled(t *testing.T) {
	needFFmpeg(t)
	privateTemp(t)
	clip := makeClip(t, "long.mp4", "-f", "lavfi", "-i", "testsrc=duration=10:size=640x480:rate=25", "-pix_fmt", "yuv420p")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := Frames(ctx, clip, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want one wrapping context.Canceled", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("Frames returned %v after the cancel", el)
	}
}

func TestFFmpegProcess(t *testing.T) {
	privateTemp(t)
	clip := append(ftyp("isom"), make([]byte, 64)...)
	for _, tc := range []struct {
		name, script, want string
		timeout            time.Duration
		is                 error
	}{{
		// A child that outlives its parent holds stdout open: both must go.
		name: "timeout", script: "sleep 30 & wait", timeout: 300 * time.Millisecond,
		want: "took longer than 300ms", is: context.DeadlineExceeded,
	}, {
		name: "memory limit", script: `echo "limit $(ulimit -v)" >&2; exit 1`,
		want: "limit 2097152",
	}, {
		name: "error line", script: `printf '\n[mov,mp4 @ 0x55d1] bad\033 box\nsecond line\n' >&2; exit 1`,
		want: "video: ffmpeg cannot read the clip: bad  box",
	}, {
		name: "error flood", script: `yes 'x' | head -c 10000000 | tr -d '\n' >&2; exit 1`,
		want: "xxxx…",
	}, {
		name: "overlong packet line", script: `yes 'x' | head -c 100000 | tr -d '\n'`,
		want: "overlong line",
	}, {
		name: "no packets", script: `exit 0`,
		want: "no frames",
	}, {
		name: "killed", script: `kill -9 $$`,
		want: "signal: killed",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			opt := Options{FFmpeg: fakeFFmpeg(t, tc.script), Timeout: tc.timeout}
			start := time.Now()
			_, err := Frames(context.Background(), clip, opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one that says %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("error %v does not wrap %v", err, tc.is)
			}
			if len(err.Error()) > 400 {
				t.Fatalf("error is %d bytes long", len(err.Error()))
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Fatalf("Frames took %v", el)
			}
		})
	}
}

func TestNoFFmpeg(t *testing.T) {
	clip := append(ftyp("isom"), make([]byte, 64)...)
	dir := t.TempDir()
	notExec := filepath.Join(dir, "ffmpeg.txt")
	if err := os.WriteFile(notExec, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, env string }{
		{"missing path", filepath.Join(dir, "nonexistent", "ffmpeg"), ""},
		{"not executable", notExec, ""},
		{"not on PATH", "", dir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("PATH", tc.env)
			}
			_, err := Frames(context.Background(), clip, Options{FFmpeg: tc.path})
			if !errors.Is(err, ErrNoFFmpeg) {
				t.Fatalf("error %v, want ErrNoFFmpeg", err)
			}
			if !strings.Contains(err.Error(), "apt-get install ffmpeg") {
				t.Fatalf("error %q does not say how to install ffmpeg", err)
			}
		})
	}
}

func TestFramesRefuses(t *testing.T) {
	gif := disposalGIF(t)
	for _, tc := range []struct {
		name string
		data []byte
		opt  Options
		want string
	}{
		{"too many frames asked", gif, Options{MaxFrames: 33}, "MaxFrames is 33"},
		{"negative frames", gif, Options{MaxFrames: -1}, "MaxFrames is -1"},
		{"side too large", gif, Options{MaxSide: 4096}, "MaxSide is 4096"},
		{"negative timeout", gif, Options{Timeout: -time.Second}, "Timeout is -1s"},
		{"empty", nil, Options{}, "empty"},
		{"too large", make([]byte, MaxBytes+1), Options{}, "the limit is 67108864"},
		{"PNG", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"), Options{}, "not an MP4, WebM or animated GIF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Frames(context.Background(), tc.data, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one that says %q", err, tc.want)
			}
		})
	}
}
