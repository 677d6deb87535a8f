package inference

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // image.DecodeConfig reads GIF, JPEG and PNG
	_ "image/jpeg"
	_ "image/png"
)

// MaxImageSide is the most pixels an image may have on either side. A
// picture is decoded in full before the projector shrinks it, so this
// bounds the memory one image takes (48 MiB at most).
const MaxImageSide = 4096

// checkImage reads an image's header: it must be a PNG, JPEG or GIF within
// MaxImageSide. Only then is it decoded, by llama.cpp.
func checkImage(img []byte) error {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(img))
	switch {
	case errors.Is(err, image.ErrFormat):
		return errors.New("is not a PNG, JPEG or GIF picture")
	case err != nil:
		return fmt.Errorf("is not a readable %s picture: %v", format, err)
	case cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > MaxImageSide || cfg.Height > MaxImageSide:
		return fmt.Errorf("is %d×%d pixels; at most %d a side", cfg.Width, cfg.Height, MaxImageSide)
	}
	return nil
}

// requestImages returns the images of req's messages, in order, each
// checked to be a picture the projector can read.
func requestImages(req Request) ([][]byte, error) {
	var images [][]byte
	for i, m := range req.Messages {
		for _, p := range m.Content {
			if p.Image == nil {
				continue
			}
			if err := checkImage(p.Image); err != nil {
				return nil, fieldError(fmt.Sprintf("Messages[%d]", i), "image %d: %v", len(images), err)
			}
			images = append(images, p.Image)
		}
	}
	return images, nil
}
