package inference

import (
	"strings"

	"github.com/inferkit/inferkit/internal/bitmap"
)

// MaxImageSide is the most pixels an image may have on either side. An
// image is checked from its bytes when a request is prepared, decoding no
// pixel, and decoded in Go when it runs, after admission, within the
// bounds that the README's images section states (a JPEG's scans, the
// decoder's memory); no C image decoder reads a request's bytes.
const MaxImageSide = bitmap.MaxSide

// imageReason is what a bitmap error says, without the package's name,
// for an error that names the image.
func imageReason(err error) string { return strings.TrimPrefix(err.Error(), "bitmap: ") }

// requestImages returns the images of req's messages, in order, each
// checked (bitmap.Check) to be a picture the engine decodes within its
// bounds, and their headers.
func requestImages(req Request) ([][]byte, []bitmap.Header, error) {
	var images [][]byte
	var headers []bitmap.Header
	for i, m := range req.Messages {
		for _, p := range m.Content {
			if p.Image == nil {
				continue
			}
			h, err := bitmap.Check(p.Image)
			if err != nil {
				return nil, nil, fieldError(Field("Messages").At(i), "image %d: %s", len(images), imageReason(err))
			}
			images, headers = append(images, p.Image), append(headers, h)
		}
	}
	return images, headers, nil
}
