package bitmap

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/inferkit/inferkit/internal/bitmap/bitmaptest"
)

// allocated returns the bytes that f allocates on the Go heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// pngHeader is a PNG's signature and IHDR chunk, and nothing more.
func pngHeader(w, h uint32, depth, colour, interlace byte) []byte {
	b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	b = binary.BigEndian.AppendUint32(b, w)
	b = binary.BigEndian.AppendUint32(b, h)
	b = append(b, depth, colour, 0, 0, interlace)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[12:]))
}

// Check refuses, from the bytes alone, what is no picture or passes a
// bound, and passes a picture within them, saying what it costs.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		data  []byte
		want  string // in the error; "" for none
		bytes int64  // DecodeBytes, when it passes
	}{
		{"text", []byte("hello"), "not a PNG, JPEG or GIF", 0},
		{"png 4096²", pngHeader(4096, 4096, 8, 6, 0), "", 4 << 24},
		{"png 16-bit 4096²", pngHeader(4096, 4096, 16, 6, 0), "", 8 << 24},
		{"png 16-bit interlaced 4096²", pngHeader(4096, 4096, 16, 6, 1), "would take 256 MiB to decode; at most 160 MiB", 0},
		{"png palette", pngHeader(100, 10, 4, 3, 0), "", 1000},
		{"png too wide", pngHeader(4097, 1, 8, 2, 0), "4097×1 pixels; at most 4096 a side", 0},
		{"png huge", pngHeader(1<<31, 1<<31, 8, 2, 0), "at most 4096 a side", 0},
		{"png empty", pngHeader(0, 7, 8, 2, 0), "0×7 pixels", 0},
		{"png bad depth", pngHeader(1, 1, 3, 2, 0), "colour type 2 at bit depth 3", 0},
		{"png no IHDR", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x00IEND"), "IHDR", 0},
		{"gif 4096²", []byte("GIF89a\x00\x10\x00\x10\x00\x00\x00"), "", 1 << 24},
		{"gif too tall", []byte("GIF89a\x01\x00\x01\x20\x00\x00\x00"), "1×8193 pixels", 0},
		{"gif truncated", []byte("GIF89a\x01\x00"), "truncated", 0},
		{"jpeg grey 10 scans", bitmaptest.JPEG{Width: 4096, Height: 4096, Scans: MaxScanPasses}.Bytes(), "", 5 << 24},
		{"jpeg grey 11 scans", bitmaptest.JPEG{Width: 4096, Height: 4096, Scans: MaxScanPasses + 1}.Bytes(), "more than 10 times over", 0},
		{"jpeg colour 32 chroma scans", bitmaptest.JPEG{Width: 64, Height: 64, Colour: true, Scans: MaxScans, Component: 3}.Bytes(), "", 64*64*3 + 256*96},
		{"jpeg colour 33 chroma scans", bitmaptest.JPEG{Width: 64, Height: 64, Colour: true, Scans: MaxScans + 1, Component: 3}.Bytes(), "more than 32 scans", 0},
		{"jpeg scan bomb", bitmaptest.JPEG{Width: 4096, Height: 4096, Scans: 5000, Empty: true}.Bytes(), "more than 10 times over", 0},
		{"jpeg no frame", []byte{0xff, 0xd8, 0xff, 0xd9}, "no frame header", 0},
		{"jpeg scan before frame", []byte{0xff, 0xd8, 0xff, 0xda, 0, 8, 1, 1, 0, 0, 63, 0}, "scan before its frame header", 0},
		{"jpeg bad length", []byte{0xff, 0xd8, 0xff, 0xe0, 0xff, 0xff, 0}, "bad length", 0},
		{"jpeg lossless", []byte{0xff, 0xd8, 0xff, 0xc3, 0, 2}, "not supported", 0},
		{"jpeg two components", []byte{0xff, 0xd8, 0xff, 0xc0, 0, 14, 8, 0, 1, 0, 1, 2, 1, 0x11, 0, 2, 0x11, 0}, "2 components", 0},
		{"jpeg sampling 5", []byte{0xff, 0xd8, 0xff, 0xc0, 0, 11, 8, 0, 1, 0, 1, 1, 1, 0x51, 0}, "sampling factors 5×1", 0},
		{"jpeg DNL height", []byte{0xff, 0xd8, 0xff, 0xc0, 0, 11, 8, 0, 0, 0, 1, 1, 1, 0x11, 0}, "DNL", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := Check(tc.data)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			case err == nil && h.DecodeBytes != tc.bytes:
				t.Errorf("DecodeBytes %d, want %d", h.DecodeBytes, tc.bytes)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "bitmap: ") {
				t.Errorf("error %q does not name the package", err)
			}
		})
	}
}

// The scan bomb and the zlib bomb are refused having allocated next to
// nothing; the costliest progressive JPEG that passes decodes within its
// DecodeBytes and the RGB.
func TestDecodeBombs(t *testing.T) {
	const small = 1 << 20
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"scan bomb", bitmaptest.JPEG{Width: 4096, Height: 4096, Scans: 5000, Empty: true}.Bytes(), "more than 10 times over"},
		{"valid scans past the bound", bitmaptest.JPEG{Width: 4096, Height: 4096, Colour: true, Scans: 60}.Bytes(), "more than 10 times over"},
		{"zlib bomb", bitmaptest.ZlibBomb(64 << 20), "too much pixel data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, err = Decode(context.Background(), tc.data) })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if n > small {
				t.Errorf("allocated %d bytes refusing %d bytes of input", n, len(tc.data))
			}
		})
	}
	t.Run("most scans allowed", func(t *testing.T) {
		data := bitmaptest.JPEG{Width: 4096, Height: 4096, Colour: true, Scans: 3 * (MaxScanPasses - 1)}.Bytes()
		h, err := Check(data)
		if err != nil {
			t.Fatal(err)
		}
		var img *RGB
		n := allocated(func() { img, err = Decode(context.Background(), data) })
		if err != nil {
			t.Fatal(err)
		}
		if bound := uint64(h.DecodeBytes) + uint64(len(img.Pix)) + small; n > bound {
			t.Errorf("allocated %d bytes, more than DecodeBytes %d and the RGB %d", n, h.DecodeBytes, len(img.Pix))
		}
		// Every coefficient is 0: mid grey.
		if p := img.Pix[3*(4096*100+100):][:3]; p[0] != 128 || p[1] != 128 || p[2] != 128 {
			t.Errorf("pixel %v, want mid grey", p)
		}
	})
}

// countdown is a context whose Err reports it cancelled after left calls;
// late counts the calls after that.
type countdown struct {
	context.Context
	left, late atomic.Int32
}

func (c *countdown) Err() error {
	if c.left.Add(-1) < 0 {
		c.late.Add(1)
		return context.Canceled
	}
	return nil
}

// noise is a width×height picture of random colours, encoded by enc.
func noise(t *testing.T, width, height int, enc func(*bytes.Buffer, image.Image) error) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, width, height))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
		if i%4 == 3 {
			img.Pix[i] = 0xff
		}
	}
	var b bytes.Buffer
	if err := enc(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A decode stops when its context ends: at once when it has ended
// already, and mid-way at the next read otherwise.
func TestDecodeCancelled(t *testing.T) {
	encoders := map[string]func(*bytes.Buffer, image.Image) error{
		"png":  func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) },
		"jpeg": func(b *bytes.Buffer, m image.Image) error { return jpeg.Encode(b, m, &jpeg.Options{Quality: 100}) },
	}
	for name, enc := range encoders {
		data := noise(t, 512, 512, enc)
		t.Run(name+" before", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var err error
			if n := allocated(func() { _, err = Decode(ctx, data) }); n > 64<<10 {
				t.Errorf("allocated %d bytes for a cancelled decode", n)
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want context.Canceled", err)
			}
		})
		t.Run(name+" midway", func(t *testing.T) {
			ctx := &countdown{Context: context.Background()}
			ctx.left.Store(10) // ten reads of 4 KiB, of more than 100
			_, err := Decode(ctx, data)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want context.Canceled", err)
			}
			// The read that fails, Decode's check and context.Cause.
			if n := ctx.late.Load(); n > 3 {
				t.Errorf("the context was asked %d times after it ended: the decode went on", n)
			}
		})
	}
}

// Each kind of image Go's decoders make converts to the right RGB, with
// transparency flattened onto white and a GIF's first frame placed on its
// screen.
func TestDecodeColours(t *testing.T) {
	encode := func(m image.Image) []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, m); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	nrgba := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	nrgba.Pix = []byte{10, 20, 30, 255, 200, 100, 0, 0}
	gray := image.NewGray(image.Rect(0, 0, 2, 1))
	gray.Pix = []byte{0, 77}
	deep := image.NewNRGBA64(image.Rect(0, 0, 2, 1))
	deep.SetNRGBA64(0, 0, color.NRGBA64{0x1234, 0x5678, 0x9abc, 0xffff})
	deep.SetNRGBA64(1, 0, color.NRGBA64{0, 0, 0, 0x8000})
	pal := image.NewPaletted(image.Rect(0, 0, 2, 1), color.Palette{color.NRGBA{1, 2, 3, 255}, color.NRGBA{9, 9, 9, 0}})
	pal.Pix = []byte{0, 1}
	gray16 := image.NewGray16(image.Rect(0, 0, 1, 1))
	gray16.SetGray16(0, 0, color.Gray16{0xabcd})

	var g bytes.Buffer
	frame := image.NewPaletted(image.Rect(1, 0, 2, 1), color.Palette{color.RGBA{5, 6, 7, 255}, color.RGBA{}})
	frame.Pix = []byte{0}
	if err := gif.EncodeAll(&g, &gif.GIF{Image: []*image.Paletted{frame}, Delay: []int{0},
		Config: image.Config{Width: 3, Height: 1, ColorModel: frame.Palette}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		w, h int
		want []byte
	}{
		{"nrgba", encode(nrgba), 2, 1, []byte{10, 20, 30, 255, 255, 255}},
		{"gray", encode(gray), 2, 1, []byte{0, 0, 0, 77, 77, 77}},
		{"16-bit", encode(deep), 2, 1, []byte{0x12, 0x56, 0x9a, 127, 127, 127}},
		{"palette", encode(pal), 2, 1, []byte{1, 2, 3, 255, 255, 255}},
		{"gray16", encode(gray16), 1, 1, []byte{0xab, 0xab, 0xab}},
		{"gif frame", g.Bytes(), 3, 1, []byte{255, 255, 255, 5, 6, 7, 255, 255, 255}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := Decode(context.Background(), tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if img.Width != tc.w || img.Height != tc.h || !bytes.Equal(img.Pix, tc.want) {
				t.Errorf("%d×%d %v, want %d×%d %v", img.Width, img.Height, img.Pix, tc.w, tc.h, tc.want)
			}
		})
	}
	t.Run("jpeg", func(t *testing.T) {
		src := image.NewRGBA(image.Rect(0, 0, 16, 16))
		for i := range src.Pix {
			src.Pix[i] = []byte{200, 40, 90, 255}[i%4]
		}
		var b bytes.Buffer
		if err := jpeg.Encode(&b, src, &jpeg.Options{Quality: 95}); err != nil {
			t.Fatal(err)
		}
		img, err := Decode(context.Background(), b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range img.Pix {
			if want := []int{200, 40, 90}[i%3]; int(v) < want-8 || int(v) > want+8 {
				t.Fatalf("byte %d is %d, want about %d", i, v, want)
			}
		}
	})
}

// A picture whose data breaks off is an error, not a panic.
func TestDecodeTruncated(t *testing.T) {
	data := noise(t, 64, 64, func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) })
	if _, err := Decode(context.Background(), data[:len(data)/2]); err == nil || !strings.Contains(err.Error(), "cannot be decoded") {
		t.Fatalf("error %v, want one saying the png cannot be decoded", err)
	}
}

// No input makes Check or Decode panic, or decode past the bounds.
func FuzzDecode(f *testing.F) {
	f.Add(pngHeader(3, 3, 8, 2, 0))
	f.Add(bitmaptest.JPEG{Width: 32, Height: 32, Colour: true, Scans: 4}.Bytes())
	f.Add(bitmaptest.ZlibBomb(1 << 16))
	f.Add([]byte("GIF89a\x02\x00\x02\x00\x00\x00\x00,\x00\x00\x00\x00\x02\x00\x02\x00\x00\x02\x02D\x01\x00;"))
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := Decode(context.Background(), data)
		if err == nil && len(img.Pix) != 3*img.Width*img.Height {
			t.Fatalf("%d×%d with %d bytes", img.Width, img.Height, len(img.Pix))
		}
	})
}
