package tinymodel

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
)

// PNG returns a width×height PNG picture of seeded noise over a gradient:
// the same arguments give the same bytes, other seeds other pictures. It
// is input for a model loaded with a [Projector]. It panics if a side is
// not positive.
func PNG(width, height int, seed int64) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, width, height))
	rng := rand.New(rand.NewPCG(uint64(seed), 0x1ab))
	for y := range height {
		for x := range width {
			img.Set(x, y, color.NRGBA{
				R: uint8(255 * x / width),
				G: uint8(255 * y / height),
				B: uint8(rng.IntN(256)),
				A: 255,
			})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // a bytes.Buffer does not fail
	}
	return b.Bytes()
}
