package bitmap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
)

// Bounds on a picture, checked by Check before any pixel is decoded.
const (
	// MaxSide is the most pixels a picture may have on either side. The
	// RGB of the largest picture takes 48 MiB.
	MaxSide = 4096
	// MaxScans is the most scans (SOS markers) a JPEG may have. Encoders
	// write one (baseline) to about ten (progressive); each scan walks
	// every block of its components again.
	MaxScans = 32
	// MaxScanPasses bounds the work of a JPEG's scans together: they
	// may walk at most this many blocks for each 8×8 block of the
	// picture (each component counted). A baseline JPEG walks each
	// block once, a progressive one from libjpeg about 5 to 6 times.
	MaxScanPasses = 10
	// MaxDecodeBytes bounds the memory that Go's decoder of a picture
	// takes besides the RGB it is converted to: its pixels in the
	// decoder's own layout, and a progressive JPEG's coefficients (256
	// bytes for each 8×8 block of each component).
	MaxDecodeBytes = 160 << 20
)

// Format is a picture's file format.
type Format string

// The formats that Check and Decode read.
const (
	PNG  Format = "png"
	JPEG Format = "jpeg"
	GIF  Format = "gif"
)

// Header is what Check reads of a picture.
type Header struct {
	Format Format
	// Width and Height are the picture's size in pixels, that of the RGB
	// that Decode makes (a GIF's logical screen).
	Width, Height int
	// DecodeBytes is the most memory that decoding takes besides the RGB,
	// at most MaxDecodeBytes.
	DecodeBytes int64
}

// RGB is a decoded picture: packed 8-bit red, green and blue, rows top
// down, with no padding.
type RGB struct {
	Width, Height int
	// Pix holds 3·Width·Height bytes.
	Pix []byte
}

// ErrFormat means that a picture is no PNG, JPEG or GIF.
var ErrFormat = errors.New("bitmap: not a PNG, JPEG or GIF picture")

// Check reads data's header and structure, decoding no pixel, and refuses
// a picture past the package's bounds. Its work is linear in len(data).
func Check(data []byte) (Header, error) {
	var h Header
	var err error
	switch {
	case bytes.HasPrefix(data, pngMagic):
		h, err = checkPNG(data)
	case bytes.HasPrefix(data, []byte{0xff, 0xd8}):
		h, err = checkJPEG(data)
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		h, err = checkGIF(data)
	default:
		return h, ErrFormat
	}
	switch {
	case err != nil:
		return h, err
	case h.Width <= 0 || h.Height <= 0 || h.Width > MaxSide || h.Height > MaxSide:
		return h, fmt.Errorf("bitmap: the %s is %d×%d pixels; at most %d a side", h.Format, h.Width, h.Height, MaxSide)
	case h.DecodeBytes > MaxDecodeBytes:
		return h, fmt.Errorf("bitmap: the %d×%d %s would take %d MiB to decode; at most %d MiB", h.Width, h.Height, h.Format,
			(h.DecodeBytes+1<<20-1)>>20, MaxDecodeBytes>>20)
	}
	return h, nil
}

// Decode checks data (see Check) and decodes it into RGB. It stops, with
// ctx's error, soon after ctx ends: the decoders read through a reader
// that fails from then on.
func Decode(ctx context.Context, data []byte) (*RGB, error) {
	h, err := Check(data)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bitmap: %w", context.Cause(ctx))
	}
	r := &ctxReader{ctx: ctx, data: data}
	var img image.Image
	switch h.Format {
	case PNG:
		img, err = png.Decode(r)
	case JPEG:
		img, err = jpeg.Decode(r)
	case GIF:
		img, err = gif.Decode(r) // the first frame only
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("bitmap: %w", context.Cause(ctx))
	}
	if err != nil {
		return nil, fmt.Errorf("bitmap: the %s cannot be decoded: %v", h.Format, err)
	}
	b := img.Bounds()
	if h.Format != GIF && (b.Min != image.Point{} || b.Dx() != h.Width || b.Dy() != h.Height) {
		return nil, fmt.Errorf("bitmap: the %s decoded to %v, its header says %d×%d", h.Format, b, h.Width, h.Height)
	}
	return toRGB(ctx, img, h.Width, h.Height)
}

// ctxReader reads data, failing once ctx ends. It reads at most readSize
// bytes a call, and is no io.ByteReader, so that the decoders buffer
// what they read and call it often.
type ctxReader struct {
	ctx  context.Context
	data []byte
}

const readSize = 4096

func (r *ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), readSize)], r.data)
	r.data = r.data[n:]
	return n, nil
}
