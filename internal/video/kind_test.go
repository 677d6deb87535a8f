package video

import (
	"bytes"
	"image"
	"image/png"
	"testing"
)

// ftyp returns an ftyp box with the given major brand.
func ftyp(major string) []byte {
	return append([]byte("\x00\x00\x00\x18ftyp"+major+"\x00\x00\x02\x00isomiso2"), "\x00\x00\x00\x08free"...)
}

// ebml returns an EBML header with the given DocType.
func ebml(doc string) []byte {
	body := []byte{0x42, 0x86, 0x81, 0x01} // EBMLVersion 1
	body = append(body, 0x42, 0x82, 0x80|byte(len(doc)))
	body = append(body, doc...)
	body = append(body, 0x42, 0x87, 0x81, 0x04) // DocTypeVersion 4
	return append([]byte{0x1a, 0x45, 0xdf, 0xa3, 0x80 | byte(len(body))}, body...)
}

func TestKind(t *testing.T) {
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	animated := disposalGIF(t)
	still := makeGIF(t, 4, 4, []gifFrameSpec{{rect: image.Rect(0, 0, 4, 4), fill: solid(1)}})
	frameEnd := func(n int) int { // the offset past frame n's image data
		g, err := scanGIF(animated, n)
		if err != nil {
			t.Fatal(err)
		}
		f := g.frames[n-1].img
		return bytes.Index(animated, f) + len(f)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"animated GIF", animated, "gif"},
		{"animated GIF cut after frame 2", animated[:frameEnd(2)+3], "gif"},
		{"GIF cut in frame 2", animated[:frameEnd(2)-1], ""},
		{"GIF cut after frame 1", animated[:frameEnd(1)], ""},
		{"still GIF", still, ""},
		{"GIF header only", animated[:13], ""},
		{"MP4", ftyp("isom"), "mp4"},
		{"MP4 header only", ftyp("mp42")[:16], "mp4"},
		{"QuickTime", ftyp("qt  "), "mp4"},
		{"M4V", ftyp("M4V "), "mp4"},
		{"3GP", ftyp("3gp5"), "mp4"},
		{"HEIC image", ftyp("heic"), ""},
		{"AVIF image", ftyp("avif"), ""},
		{"M4A audio", ftyp("M4A "), ""},
		{"MP4 truncated", ftyp("isom")[:11], ""},
		{"ftyp with a bad size", append([]byte("\x00\x00\x00\x05ftypisom"), make([]byte, 20)...), ""},
		{"WebM", ebml("webm"), "webm"},
		{"Matroska", ebml("matroska"), "webm"},
		{"other EBML", ebml("foo"), ""},
		{"EBML truncated", ebml("webm")[:9], ""},
		{"EBML magic only", []byte{0x1a, 0x45, 0xdf, 0xa3}, ""},
		{"PNG", pngBuf.Bytes(), ""},
		{"JPEG", []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), ""},
		{"junk", []byte("this is not a video at all, just text"), ""},
		{"empty", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Kind(tc.data); got != tc.want {
				t.Fatalf("Kind = %q, want %q", got, tc.want)
			}
		})
	}
}
