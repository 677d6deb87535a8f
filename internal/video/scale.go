package video

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"math"
)

// fit returns the size of a w×h picture scaled down, keeping its aspect
// ratio, so that neither side exceeds maxSide; a picture that fits already
// keeps its size. Neither side is less than 1.
func fit(w, h, maxSide int) (int, int) {
	if w <= maxSide && h <= maxSide {
		return w, h
	}
	s := float64(maxSide) / float64(max(w, h))
	return max(1, min(maxSide, int(math.Round(float64(w)*s)))), max(1, min(maxSide, int(math.Round(float64(h)*s))))
}

// tap is one source pixel's share of an output pixel.
type tap struct {
	src    int
	weight float32
}

// boxTaps returns, for each of the m output pixels along an axis of n
// source pixels, the source pixels its box covers, weighted by how much of
// each it covers; the weights of each output pixel add up to 1.
func boxTaps(n, m int) [][]tap {
	taps := make([][]tap, m)
	scale := float64(n) / float64(m)
	for i := range taps {
		lo, hi := float64(i)*scale, float64(i+1)*scale
		for s := int(lo); s < n && float64(s) < hi; s++ {
			cover := math.Min(hi, float64(s+1)) - math.Max(lo, float64(s))
			if cover > 0 {
				taps[i] = append(taps[i], tap{s, float32(cover / scale)})
			}
		}
	}
	return taps
}

// resize returns src, flattened onto white, scaled to w×h by averaging the
// source pixels under each output pixel (an area filter: right for
// shrinking, the only way it is used). src is premultiplied RGBA.
func resize(src *image.RGBA, w, h int) *image.RGBA {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	if w == sw && h == sh {
		for y := range sh {
			s := src.Pix[src.PixOffset(src.Rect.Min.X, src.Rect.Min.Y+y):]
			d := dst.Pix[y*dst.Stride:]
			for x := range sw {
				bg := 255 - s[4*x+3]
				for c := range 3 {
					d[4*x+c] = s[4*x+c] + bg // premultiplied: cannot wrap
				}
				d[4*x+3] = 255
			}
		}
		return dst
	}
	xt, yt := boxTaps(sw, w), boxTaps(sh, h)
	// The vertical pass sums in fixed point, weights in 1/65536: each
	// output row's weights add up to 1, so a sum stays below 255·65536+ε.
	acc := make([]uint32, 3*sw)
	for y, ys := range yt {
		clear(acc)
		for _, ty := range ys {
			wy := uint32(ty.weight*65536 + 0.5)
			s := src.Pix[src.PixOffset(src.Rect.Min.X, src.Rect.Min.Y+ty.src):]
			s = s[:4*sw]
			a := acc[:3*sw]
			for x := range sw {
				p := s[4*x : 4*x+4 : 4*x+4]
				q := a[3*x : 3*x+3 : 3*x+3]
				bg := 255 - uint32(p[3]) // flattened onto white
				q[0] += wy * (uint32(p[0]) + bg)
				q[1] += wy * (uint32(p[1]) + bg)
				q[2] += wy * (uint32(p[2]) + bg)
			}
		}
		d := dst.Pix[y*dst.Stride:]
		for x, xs := range xt {
			var r, g, b float32
			for _, tx := range xs {
				q := acc[3*tx.src : 3*tx.src+3 : 3*tx.src+3]
				r += tx.weight * float32(q[0])
				g += tx.weight * float32(q[1])
				b += tx.weight * float32(q[2])
			}
			d[4*x] = toByte(r / 65536)
			d[4*x+1] = toByte(g / 65536)
			d[4*x+2] = toByte(b / 65536)
			d[4*x+3] = 255
		}
	}
	return dst
}

// toByte rounds a channel value to a byte.
func toByte(v float32) byte { return byte(min(255, max(0, v+0.5))) }

// encodePNG encodes an opaque picture as PNG, quickly: the projector decodes
// it at once, so size matters little.
func encodePNG(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("video: encoding a frame as PNG: %w", err)
	}
	return buf.Bytes(), nil
}
