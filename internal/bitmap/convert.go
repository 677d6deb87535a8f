package bitmap

import (
	"context"
	"fmt"
	"image"
	"image/color"
)

// toRGB converts img into a width×height RGB, each pixel flattened onto
// white; pixels of the canvas that img does not cover (outside a GIF's
// first frame) are white. It checks ctx every few rows.
func toRGB(ctx context.Context, img image.Image, width, height int) (*RGB, error) {
	out := &RGB{Width: width, Height: height, Pix: make([]byte, 3*width*height)}
	r := img.Bounds().Intersect(image.Rect(0, 0, width, height))
	if r != image.Rect(0, 0, width, height) {
		for i := range out.Pix {
			out.Pix[i] = 0xff
		}
	}
	var row func(y int, dst []byte)
	switch m := img.(type) {
	case *image.YCbCr:
		row = func(y int, dst []byte) {
			for x := r.Min.X; x < r.Max.X; x++ {
				yi, ci := m.YOffset(x, y), m.COffset(x, y)
				dst[0], dst[1], dst[2] = color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
				dst = dst[3:]
			}
		}
	case *image.Gray:
		row = func(y int, dst []byte) {
			for _, g := range m.Pix[m.PixOffset(r.Min.X, y):m.PixOffset(r.Max.X, y)] {
				dst[0], dst[1], dst[2] = g, g, g
				dst = dst[3:]
			}
		}
	case *image.RGBA: // alpha premultiplied
		row = func(y int, dst []byte) {
			p := m.Pix[m.PixOffset(r.Min.X, y):m.PixOffset(r.Max.X, y)]
			for ; len(p) >= 4; p = p[4:] {
				white := 0xff - p[3]
				dst[0], dst[1], dst[2] = p[0]+white, p[1]+white, p[2]+white
				dst = dst[3:]
			}
		}
	case *image.NRGBA:
		row = func(y int, dst []byte) {
			p := m.Pix[m.PixOffset(r.Min.X, y):m.PixOffset(r.Max.X, y)]
			for ; len(p) >= 4; p = p[4:] {
				dst[0], dst[1], dst[2] = onWhite(p[0], p[3]), onWhite(p[1], p[3]), onWhite(p[2], p[3])
				dst = dst[3:]
			}
		}
	case *image.NRGBA64: // the high byte of each sample
		row = func(y int, dst []byte) {
			p := m.Pix[m.PixOffset(r.Min.X, y):m.PixOffset(r.Max.X, y)]
			for ; len(p) >= 8; p = p[8:] {
				dst[0], dst[1], dst[2] = onWhite(p[0], p[6]), onWhite(p[2], p[6]), onWhite(p[4], p[6])
				dst = dst[3:]
			}
		}
	case *image.RGBA64: // premultiplied; the high byte of each sample
		row = func(y int, dst []byte) {
			p := m.Pix[m.PixOffset(r.Min.X, y):m.PixOffset(r.Max.X, y)]
			for ; len(p) >= 8; p = p[8:] {
				white := 0xff - p[6]
				dst[0], dst[1], dst[2] = p[0]+white, p[2]+white, p[4]+white
				dst = dst[3:]
			}
		}
	case *image.Gray16:
		row = func(y int, dst []byte) {
			p := m.Pix[m.PixOffset(r.Min.X, y):m.PixOffset(r.Max.X, y)]
			for ; len(p) >= 2; p = p[2:] {
				dst[0], dst[1], dst[2] = p[0], p[0], p[0]
				dst = dst[3:]
			}
		}
	case *image.Paletted:
		var pal [256][3]byte
		for i := range pal {
			pal[i] = [3]byte{0, 0, 0} // an index past the palette is black
			if i < len(m.Palette) {
				pal[i] = flatten(m.Palette[i])
			}
		}
		row = func(y int, dst []byte) {
			for _, k := range m.Pix[m.PixOffset(r.Min.X, y):m.PixOffset(r.Max.X, y)] {
				copy(dst, pal[k][:])
				dst = dst[3:]
			}
		}
	case *image.CMYK:
		row = func(y int, dst []byte) {
			p := m.Pix[m.PixOffset(r.Min.X, y):m.PixOffset(r.Max.X, y)]
			for ; len(p) >= 4; p = p[4:] {
				dst[0], dst[1], dst[2] = color.CMYKToRGB(p[0], p[1], p[2], p[3])
				dst = dst[3:]
			}
		}
	default: // no decoder of the package makes another kind
		row = func(y int, dst []byte) {
			for x := r.Min.X; x < r.Max.X; x++ {
				c := flatten(img.At(x, y))
				copy(dst, c[:])
				dst = dst[3:]
			}
		}
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		if y%64 == 0 && ctx.Err() != nil {
			return nil, fmt.Errorf("bitmap: %w", context.Cause(ctx))
		}
		row(y, out.Pix[3*(y*width+r.Min.X):])
	}
	return out, nil
}

// onWhite is the sample v of alpha a (not premultiplied) over white.
func onWhite(v, a uint8) uint8 {
	return uint8((int(v)*int(a) + 0xff*(0xff-int(a)) + 0x7f) / 0xff)
}

// flatten is c over white, in 8 bits.
func flatten(c color.Color) [3]byte {
	r, g, b, a := c.RGBA() // premultiplied, 16 bits
	white := 0xffff - a
	return [3]byte{uint8((r + white) >> 8), uint8((g + white) >> 8), uint8((b + white) >> 8)}
}
