package video_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/gif"

	"github.com/inferkit/inferkit/internal/video"
)

func ExampleFrames() {
	// A 2-second animated GIF: red for 1.5 s, then blue for 0.5 s.
	pal := color.Palette{color.RGBA{255, 0, 0, 255}, color.RGBA{0, 0, 255, 255}}
	anim := &gif.GIF{Delay: []int{150, 50}}
	for i := range 2 {
		p := image.NewPaletted(image.Rect(0, 0, 1000, 500), pal)
		for j := range p.Pix {
			p.Pix[j] = uint8(i)
		}
		anim.Image = append(anim.Image, p)
	}
	var clip bytes.Buffer
	if err := gif.EncodeAll(&clip, anim); err != nil {
		panic(err)
	}

	fmt.Println(video.Kind(clip.Bytes()))
	// Four samples, at 0.25, 0.75, 1.25 and 1.75 s: the first three show
	// the same red picture, which comes back once.
	frames, err := video.Frames(context.Background(), clip.Bytes(), video.Options{MaxFrames: 4, MaxSide: 400})
	if err != nil {
		panic(err)
	}
	for _, f := range frames {
		fmt.Printf("%v %d×%d PNG\n", f.Time, f.Width, f.Height)
	}
	// Output:
	// gif
	// 250ms 400×200 PNG
	// 1.75s 400×200 PNG
}
