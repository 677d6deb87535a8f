package video

import (
	"bytes"
	"encoding/binary"
)

// Kind sniffs a clip's container from its first bytes: "gif" for a GIF
// with more than one frame, "mp4" for ISO BMFF that starts with an ftyp
// box (MP4, M4V, QuickTime, 3GP; not the HEIF and AVIF image brands nor the
// M4A audio ones), "webm" for EBML whose DocType is webm or matroska, and
// "" for anything else, a still GIF and a PNG included. It reads no more
// than it needs: the header for MP4 and WebM, the block structure up to
// the second frame for GIF. Kind does not check that the rest of the clip
// is sound; Frames does. It is safe for concurrent use.
func Kind(data []byte) string {
	switch {
	case isGIF(data):
		if g, err := scanGIF(data, 2); err == nil && len(g.frames) >= 2 {
			return "gif"
		}
	case isMP4(data):
		return "mp4"
	case isWebM(data):
		return "webm"
	}
	return ""
}

func isGIF(data []byte) bool {
	return bytes.HasPrefix(data, []byte("GIF87a")) || bytes.HasPrefix(data, []byte("GIF89a"))
}

// notVideoBrands are ftyp major brands of ISO BMFF files that hold still
// images or audio only.
var notVideoBrands = []string{
	"avif", "avis", "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1", "mif2", "avci",
	"M4A ", "M4B ", "M4P ",
}

// isMP4 reports whether data starts with a plausible ftyp box: size,
// "ftyp", major brand, minor version and whole compatible brands.
func isMP4(data []byte) bool {
	if len(data) < 16 || string(data[4:8]) != "ftyp" {
		return false
	}
	size := binary.BigEndian.Uint32(data)
	if size < 16 || size > 1024 || size%4 != 0 {
		return false
	}
	major := string(data[8:12])
	for _, b := range notVideoBrands {
		if major == b {
			return false
		}
	}
	for _, c := range data[8:12] {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// isWebM reports whether data starts with an EBML header whose DocType is
// "webm" or "matroska".
func isWebM(data []byte) bool {
	if !bytes.HasPrefix(data, []byte{0x1a, 0x45, 0xdf, 0xa3}) {
		return false
	}
	size, n := ebmlVint(data[4:], false)
	if n == 0 {
		return false
	}
	body := data[4+n:]
	if size >= 0 && size < int64(len(body)) {
		body = body[:size]
	}
	// The header holds a handful of elements; 32 is plenty.
	for range 32 {
		id, n := ebmlVint(body, true)
		if n == 0 {
			return false
		}
		body = body[n:]
		size, m := ebmlVint(body, false)
		if m == 0 || size < 0 || size > int64(len(body)-m) {
			return false
		}
		val := body[m : m+int(size)]
		body = body[m+int(size):]
		if id == 0x4282 { // DocType
			doc := string(bytes.TrimRight(val, "\x00"))
			return doc == "webm" || doc == "matroska"
		}
	}
	return false
}

// ebmlVint reads an EBML variable-length integer from the start of b and
// returns it with its length in bytes, or n == 0 when b does not start
// with one. An ID keeps its length marker; a size loses it, and a size of
// all ones (unknown) is returned as -1.
func ebmlVint(b []byte, id bool) (v int64, n int) {
	if len(b) == 0 || b[0] == 0 {
		return 0, 0
	}
	n = 1
	for mask := byte(0x80); b[0]&mask == 0; mask >>= 1 {
		n++
	}
	if n > 8 || len(b) < n || (id && n > 4) {
		return 0, 0
	}
	var u uint64
	for _, c := range b[:n] {
		u = u<<8 | uint64(c)
	}
	if id {
		return int64(u), n
	}
	marker := uint64(1) << (7 * n)
	u &^= marker
	if u == marker-1 {
		return -1, n
	}
	return int64(u), n
}
