package decision

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// Image is one entry of a Request's images, for multimodal models: a
// picture (PNG, JPEG or GIF) or a video clip (MP4, WebM or animated GIF),
// of which the model reads up to VideoFrames frames sampled evenly over
// it, each captioned with its time (MP4 and WebM need ffmpeg on the
// server). On the wire an entry is a string, either a data URL
// ("data:image/png;base64,...", "data:video/mp4;base64,...") or bare
// base64, or an object holding one of those as "url" or as "data" (bare
// base64 beside an optional "media_type"). Remote URLs are refused: the
// server fetches nothing. Data holds the decoded file, whose format is
// read from its bytes.
type Image struct {
	Data []byte

	// err is a problem found while decoding, reported by Validate.
	err error
}

// wireImage is the object form of an entry. Its media_type is accepted and
// not trusted: the engine reads the format from the bytes.
type wireImage struct {
	URL       string `json:"url"`
	Data      string `json:"data"`
	MediaType string `json:"media_type"`
}

// UnmarshalJSON reads an image entry. An entry of the wrong shape is
// reported by Validate, with its index.
func (im *Image) UnmarshalJSON(b []byte) error {
	*im = Image{}
	var s string
	switch b = bytes.TrimSpace(b); {
	case len(b) > 0 && b[0] == '"':
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	case len(b) > 0 && b[0] == '{':
		var w wireImage
		if err := json.Unmarshal(b, &w); err != nil {
			im.err = errors.New(`must be a string, or an object with "url" or "data" strings`)
			return nil
		}
		if (w.URL == "") == (w.Data == "") {
			im.err = errors.New(`must have one of "url" and "data"`)
			return nil
		}
		s = w.URL + w.Data
		if w.Data != "" && strings.HasPrefix(w.Data, "data:") {
			im.err = errors.New(`"data" holds bare base64; a data URL goes in "url"`)
			return nil
		}
	default:
		im.err = errors.New("must be a data URL or base64 string, or an object with one")
		return nil
	}
	im.Data, im.err = decodeImage(s)
	return nil
}

// MarshalJSON writes the image as bare base64.
func (im Image) MarshalJSON() ([]byte, error) {
	return json.Marshal(base64.StdEncoding.EncodeToString(im.Data))
}

// decodeImage reads a data URL or bare base64 (standard or URL-safe, with
// or without padding).
func decodeImage(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	lower := strings.ToLower(s)
	switch {
	case strings.HasPrefix(lower, "http://"), strings.HasPrefix(lower, "https://"):
		return nil, errors.New("remote URLs are not fetched: send the picture inline, as a data URL or base64")
	case strings.HasPrefix(lower, "data:"):
		meta, payload, ok := strings.Cut(s[len("data:"):], ",")
		if !ok || !strings.HasSuffix(strings.ToLower(meta), ";base64") {
			return nil, errors.New(`a data URL must be "data:<media type>;base64,<data>"`)
		}
		if mt := strings.ToLower(meta); !strings.HasPrefix(mt, "image/") && !strings.HasPrefix(mt, "video/") {
			return nil, errors.New("the data URL's media type must be image/... or video/...")
		}
		s = payload
	}
	if s == "" {
		return nil, errors.New("is empty")
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("is not valid base64")
}
