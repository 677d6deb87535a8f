package video

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"strings"
	"testing"
	"time"
)

// The test palette; index 0 is transparent.
var (
	transparent = color.RGBA{}
	red         = color.RGBA{255, 0, 0, 255}
	green       = color.RGBA{0, 255, 0, 255}
	blue        = color.RGBA{0, 0, 255, 255}
	yellow      = color.RGBA{255, 255, 0, 255}
	white       = color.RGBA{255, 255, 255, 255}
	testPalette = color.Palette{transparent, red, green, blue, yellow}
)

// gifFrameSpec is one frame of a test GIF: rect filled by fill (a palette
// index per pixel), shown for delay hundredths of a second.
type gifFrameSpec struct {
	rect     image.Rectangle
	fill     func(x, y int) uint8
	delay    int
	disposal byte
}

func solid(i uint8) func(x, y int) uint8 { return func(int, int) uint8 { return i } }

// makeGIF encodes an animated GIF with image/gif.
func makeGIF(t testing.TB, w, h int, frames []gifFrameSpec) []byte {
	t.Helper()
	g := &gif.GIF{Config: image.Config{Width: w, Height: h, ColorModel: testPalette}}
	for _, f := range frames {
		p := image.NewPaletted(f.rect, testPalette)
		for y := f.rect.Min.Y; y < f.rect.Max.Y; y++ {
			for x := f.rect.Min.X; x < f.rect.Max.X; x++ {
				p.SetColorIndex(x, y, f.fill(x, y))
			}
		}
		g.Image = append(g.Image, p)
		g.Delay = append(g.Delay, f.delay)
		g.Disposal = append(g.Disposal, f.disposal)
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, g); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// disposalGIF is a 64×48 GIF of four frames lasting 4 s in all:
//
//	[0, 0.1s)   red screen; delay 1/100 s, shown as 100 ms
//	[0.1s, 1s)  green left half, then restored to previous (red)
//	[1s, 2s)    blue right half, then cleared to background (transparent)
//	[2s, 4s)    16×16 at the corner: yellow left 8 columns, transparent right 8
func disposalGIF(t testing.TB) []byte {
	return makeGIF(t, 64, 48, []gifFrameSpec{
		{rect: image.Rect(0, 0, 64, 48), fill: solid(1), delay: 1},
		{rect: image.Rect(0, 0, 32, 48), fill: solid(2), delay: 90, disposal: gif.DisposalPrevious},
		{rect: image.Rect(32, 0, 64, 48), fill: solid(3), delay: 100, disposal: gif.DisposalBackground},
		{rect: image.Rect(0, 0, 16, 16), fill: func(x, y int) uint8 {
			if x < 8 {
				return 4
			}
			return 0
		}, delay: 200},
	})
}

// pixel decodes a PNG frame and returns its colour at (x, y).
func pixel(t *testing.T, f Frame, x, y int) color.RGBA {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(f.Image))
	if err != nil {
		t.Fatalf("frame at %v: %v", f.Time, err)
	}
	if b := img.Bounds(); b.Dx() != f.Width || b.Dy() != f.Height {
		t.Fatalf("frame at %v: PNG is %v, Frame says %d×%d", f.Time, b, f.Width, f.Height)
	}
	r, g, b, a := img.At(x, y).RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
}

func TestGIFFramesDisposalAndTiming(t *testing.T) {
	data := disposalGIF(t)
	type probe struct {
		x, y int
		want color.RGBA
	}
	for _, tc := range []struct {
		name   string
		opt    Options
		w, h   int
		times  []time.Duration
		probes [][]probe
	}{{
		// Samples at 0.5, 1.5, 2.5 and 3.5 s; the last two show the same
		// picture, so three frames come back.
		name: "unscaled", opt: Options{MaxFrames: 4}, w: 64, h: 48,
		times: []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond, 2500 * time.Millisecond},
		probes: [][]probe{
			{{10, 20, green}, {50, 20, red}},
			{{10, 20, red}, {50, 20, blue}},
			{{4, 4, yellow}, {12, 4, red}, {10, 30, red}, {50, 20, white}},
		},
	}, {
		name: "scaled", opt: Options{MaxFrames: 4, MaxSide: 32}, w: 32, h: 24,
		times: []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond, 2500 * time.Millisecond},
		probes: [][]probe{
			{{5, 10, green}, {25, 10, red}},
			{{5, 10, red}, {25, 10, blue}},
			{{1, 1, yellow}, {6, 1, red}, {5, 15, red}, {25, 10, white}},
		},
	}, {
		// Sixteen samples 250 ms apart: the 100 ms first frame falls
		// between samples; a 0 delay counted as 0 would shift every time.
		name: "sixteen", opt: Options{MaxFrames: 16}, w: 64, h: 48,
		times: []time.Duration{125 * time.Millisecond, 1125 * time.Millisecond, 2125 * time.Millisecond},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			frames, err := Frames(context.Background(), data, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			var got []time.Duration
			for _, f := range frames {
				got = append(got, f.Time)
				if f.Width != tc.w || f.Height != tc.h {
					t.Errorf("frame at %v is %d×%d, want %d×%d", f.Time, f.Width, f.Height, tc.w, tc.h)
				}
			}
			if len(got) != len(tc.times) {
				t.Fatalf("times %v, want %v", got, tc.times)
			}
			for i := range got {
				if got[i] != tc.times[i] {
					t.Fatalf("times %v, want %v", got, tc.times)
				}
			}
			for i, ps := range tc.probes {
				for _, p := range ps {
					if c := pixel(t, frames[i], p.x, p.y); c != p.want {
						t.Errorf("frame %d (%v) at (%d,%d) is %v, want %v", i, frames[i].Time, p.x, p.y, c, p.want)
					}
				}
			}
		})
	}
}

func TestGIFFramesEvenSampling(t *testing.T) {
	// 20 frames of 100 ms, each a distinct shade of the palette's order:
	// 8 samples over 2 s fall on frames 1, 3, 6, 8, 11, 13, 16, 18.
	pal := color.Palette{}
	for i := range 20 {
		pal = append(pal, color.RGBA{uint8(10 * i), 0, 0, 255})
	}
	g := &gif.GIF{Config: image.Config{Width: 8, Height: 8, ColorModel: pal}}
	for i := range 20 {
		p := image.NewPaletted(image.Rect(0, 0, 8, 8), pal)
		for j := range p.Pix {
			p.Pix[j] = uint8(i)
		}
		g.Image = append(g.Image, p)
		g.Delay = append(g.Delay, 10)
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, g); err != nil {
		t.Fatal(err)
	}
	frames, err := Frames(context.Background(), buf.Bytes(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []int{1, 3, 6, 8, 11, 13, 16, 18}
	if len(frames) != len(want) {
		t.Fatalf("%d frames, want %d", len(frames), len(want))
	}
	for i, f := range frames {
		if wt := time.Duration(2*i+1) * time.Second / 8; f.Time != wt {
			t.Errorf("frame %d at %v, want %v", i, f.Time, wt)
		}
		if c := pixel(t, f, 3, 3); int(c.R) != 10*want[i] {
			t.Errorf("frame %d at %v shows GIF frame %d, want %d", i, f.Time, int(c.R)/10, want[i])
		}
	}
}

// rawGIF builds a GIF by hand: a w×h screen with a 2-colour global table
// and the given frames, each a descriptor for rect with a minimal (not
// necessarily decodable) image data block.
func rawGIF(w, h int, rects []image.Rectangle, trailer bool) []byte {
	var b []byte
	b = append(b, "GIF89a"...)
	b = binary.LittleEndian.AppendUint16(b, uint16(w))
	b = binary.LittleEndian.AppendUint16(b, uint16(h))
	b = append(b, 0x80, 0, 0, 0, 0, 0, 255, 255, 255)
	for _, r := range rects {
		b = append(b, 0x21, 0xf9, 4, 0, 10, 0, 0, 0) // 100 ms
		b = append(b, 0x2c)
		for _, v := range []int{r.Min.X, r.Min.Y, r.Dx(), r.Dy()} {
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		}
		b = append(b, 0, 2, 2, 0x44, 0x01, 0) // code size 2; one pixel of index 0
	}
	if trailer {
		b = append(b, 0x3b)
	}
	return b
}

func TestGIFHostile(t *testing.T) {
	tiny := make([]image.Rectangle, maxGIFFrames+1)
	for i := range tiny {
		tiny[i] = image.Rect(0, 0, 1, 1)
	}
	big := make([]image.Rectangle, 8)
	for i := range big {
		big[i] = image.Rect(0, 0, 4096, 4096)
	}
	good := disposalGIF(t)
	corrupt := bytes.Clone(good)
	scan, err := scanGIF(corrupt, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Scramble the first frame's LZW data, keeping the block structure.
	img := scan.frames[0].img
	off := bytes.Index(corrupt, img) + 11
	for i := off + 1; i < off+1+int(corrupt[off]); i++ {
		corrupt[i] ^= 0x5a
	}
	for _, tc := range []struct {
		name, data, want string
	}{
		{"huge screen", string(rawGIF(65535, 65535, []image.Rectangle{image.Rect(0, 0, 1, 1), image.Rect(0, 0, 1, 1)}, true)), "screen is 65535×65535"},
		{"zero screen", string(rawGIF(0, 0, nil, true)), "screen is 0×0"},
		{"too many frames", string(rawGIF(1, 1, tiny, true)), "more than 10000 frames"},
		{"too much area", string(rawGIF(4096, 4096, big, true)), "more than 128 megapixels"},
		{"frame off screen", string(rawGIF(8, 8, []image.Rectangle{image.Rect(0, 0, 1, 1), image.Rect(4, 4, 12, 12)}, true)), "outside its 8×8 screen"},
		{"single frame", string(rawGIF(8, 8, []image.Rectangle{image.Rect(0, 0, 1, 1)}, true)), "has a single frame"},
		{"truncated", string(good[:len(good)-20]), "truncated"},
		{"junk block", string(rawGIF(8, 8, nil, false)) + "\x99junk", "unexpected byte 0x99"},
		{"corrupt LZW", string(corrupt), "frame 1 of the GIF"},
		{"header only", "GIF89a\x08", "cannot read the GIF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames, err := Frames(context.Background(), []byte(tc.data), Options{})
			if err == nil {
				t.Fatalf("got %d frames, want an error", len(frames))
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "video: ") {
				t.Fatalf("error %q, want one that says %q", err, tc.want)
			}
		})
	}
}

func TestGIFWithoutTrailer(t *testing.T) {
	// Browsers show a GIF whose trailer is missing; so does Frames.
	data := makeGIF(t, 8, 8, []gifFrameSpec{
		{rect: image.Rect(0, 0, 8, 8), fill: solid(1), delay: 10},
		{rect: image.Rect(0, 0, 8, 8), fill: solid(2), delay: 10},
	})
	frames, err := Frames(context.Background(), data[:len(data)-1], Options{MaxFrames: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != 2 || pixel(t, frames[1], 0, 0) != green {
		t.Fatalf("got %d frames", len(frames))
	}
}

func TestGIFContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Frames(ctx, disposalGIF(t), Options{})
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("error %v, want the context's", err)
	}
}

func TestResize(t *testing.T) {
	// A 4×2 picture: left 2×2 red and transparent in a checkerboard,
	// right 2×2 blue; shrunk to 2×1, the left pixel is the mean of red and
	// white, the right one blue.
	src := image.NewRGBA(image.Rect(0, 0, 4, 2))
	for y := range 2 {
		for x := range 4 {
			switch {
			case x >= 2:
				src.SetRGBA(x, y, blue)
			case (x+y)%2 == 0:
				src.SetRGBA(x, y, red)
			}
		}
	}
	dst := resize(src, 2, 1)
	if got, want := dst.RGBAAt(0, 0), (color.RGBA{255, 128, 128, 255}); got != want {
		t.Errorf("left %v, want %v", got, want)
	}
	if got := dst.RGBAAt(1, 0); got != blue {
		t.Errorf("right %v, want %v", got, blue)
	}
	// A 3-pixel row shrunk to 2: each output pixel covers 1.5 pixels.
	row := image.NewRGBA(image.Rect(0, 0, 3, 1))
	row.SetRGBA(0, 0, color.RGBA{0, 0, 0, 255})
	row.SetRGBA(1, 0, color.RGBA{90, 90, 90, 255})
	row.SetRGBA(2, 0, color.RGBA{180, 180, 180, 255})
	dst = resize(row, 2, 1)
	if a, b := dst.RGBAAt(0, 0).R, dst.RGBAAt(1, 0).R; a != 30 || b != 150 {
		t.Errorf("row shrunk to %d, %d; want 30, 150", a, b)
	}
}

func TestFit(t *testing.T) {
	for _, tc := range []struct{ w, h, m, ow, oh int }{
		{64, 48, 768, 64, 48},
		{1280, 720, 768, 768, 432},
		{720, 1280, 768, 432, 768},
		{4096, 1, 768, 768, 1},
		{1, 4096, 16, 1, 16},
	} {
		if ow, oh := fit(tc.w, tc.h, tc.m); ow != tc.ow || oh != tc.oh {
			t.Errorf("fit(%d, %d, %d) = %d, %d; want %d, %d", tc.w, tc.h, tc.m, ow, oh, tc.ow, tc.oh)
		}
	}
}
