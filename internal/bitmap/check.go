package bitmap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// checkPNG reads a PNG's IHDR, which must be its first chunk. Go's decoder
// holds the pixels in an image of the header's colour type: 1 byte a
// pixel for a palette, up to 4 for 8-bit samples (a grey or RGB picture
// with a transparent colour becomes NRGBA) and 8 for 16-bit ones; an
// interlaced picture's passes take as much again.
func checkPNG(data []byte) (Header, error) {
	h := Header{Format: PNG}
	const ihdr = 8 + 8 + 13
	if len(data) < ihdr+4 || string(data[12:16]) != "IHDR" || binary.BigEndian.Uint32(data[8:12]) != 13 {
		return h, errors.New("bitmap: the PNG does not start with its IHDR chunk")
	}
	w, ht := binary.BigEndian.Uint32(data[16:20]), binary.BigEndian.Uint32(data[20:24])
	if w > MaxSide || ht > MaxSide {
		return h, fmt.Errorf("bitmap: the png is %d×%d pixels; at most %d a side", w, ht, MaxSide)
	}
	h.Width, h.Height = int(w), int(ht)
	depth, colour, interlace := data[24], data[25], data[28]
	var perPixel int64
	switch {
	case colour == 3 && (depth == 1 || depth == 2 || depth == 4 || depth == 8):
		perPixel = 1
	case (colour == 0 && (depth == 1 || depth == 2 || depth == 4 || depth == 8)) ||
		((colour == 2 || colour == 4 || colour == 6) && depth == 8):
		perPixel = 4
	case (colour == 0 || colour == 2 || colour == 4 || colour == 6) && depth == 16:
		perPixel = 8
	default:
		return h, fmt.Errorf("bitmap: the PNG has colour type %d at bit depth %d, which PNG does not define", colour, depth)
	}
	if interlace > 1 {
		return h, fmt.Errorf("bitmap: the PNG has interlace method %d, which PNG does not define", interlace)
	}
	h.DecodeBytes = perPixel * int64(h.Width) * int64(h.Height) * int64(1+interlace)
	return h, nil
}

// checkGIF reads a GIF's logical screen. Go's decoder reads the first
// frame only, 1 byte a pixel, and refuses one outside the screen or with
// more pixel data than its size.
func checkGIF(data []byte) (Header, error) {
	h := Header{Format: GIF}
	if len(data) < 13 {
		return h, errors.New("bitmap: the GIF is truncated in its header")
	}
	h.Width, h.Height = int(binary.LittleEndian.Uint16(data[6:8])), int(binary.LittleEndian.Uint16(data[8:10]))
	h.DecodeBytes = int64(h.Width) * int64(h.Height)
	return h, nil
}

// checkJPEG walks a JPEG's markers up to its end (EOI), skipping the
// entropy-coded data after each scan: it must have one frame header
// (SOF) of a kind Go decodes, before its first scan, and at most MaxScans
// scans. Go's decoder holds the pixels at the size of whole MCUs: 1 byte
// a pixel for grey, 3 for colour, and for 4 components (CMYK) 8; a
// progressive JPEG adds 256 bytes for each 8×8 block of each component.
func checkJPEG(data []byte) (Header, error) {
	h := Header{Format: JPEG}
	var frame []byte // the SOF segment's data
	progressive, jfif, adobeRGB := false, false, false
	scans, visits := 0, int64(0) // visits: of blocks, by the scans so far
	pos := 2                     // after SOI
walk:
	for {
		// A marker: 0xFF, any fill bytes 0xFF, then its code.
		if pos >= len(data) || data[pos] != 0xff {
			if frame != nil && scans > 0 {
				break walk // no EOI: what Go decodes of a truncated JPEG is bounded all the same
			}
			return h, fmt.Errorf("bitmap: the JPEG has no marker at byte %d", pos)
		}
		for pos < len(data) && data[pos] == 0xff {
			pos++
		}
		if pos >= len(data) {
			return h, errors.New("bitmap: the JPEG is truncated in a marker")
		}
		code := data[pos]
		pos++
		switch {
		case code == 0xd9: // EOI
			break walk
		case code == 0xd8:
			return h, errors.New("bitmap: the JPEG has a second start-of-image marker")
		case code >= 0xd0 && code <= 0xd7, code == 0x01: // RSTn, TEM: no segment
			continue
		}
		if pos+2 > len(data) {
			return h, errors.New("bitmap: the JPEG is truncated in a segment's length")
		}
		n := int(binary.BigEndian.Uint16(data[pos:]))
		if n < 2 || pos+n > len(data) {
			return h, fmt.Errorf("bitmap: the JPEG's segment at byte %d has a bad length", pos-2)
		}
		seg := data[pos+2 : pos+n]
		pos += n
		switch code {
		case 0xe0: // APP0
			jfif = jfif || bytes.HasPrefix(seg, []byte("JFIF\x00"))
		case 0xee: // APP14
			if bytes.HasPrefix(seg, []byte("Adobe")) && len(seg) >= 12 {
				adobeRGB = seg[11] == 0
			}
		case 0xc0, 0xc1, 0xc2: // baseline, extended sequential, progressive
			if frame != nil {
				return h, errors.New("bitmap: the JPEG has two frame headers")
			}
			if err := checkFrame(seg); err != nil {
				return h, err
			}
			frame, progressive = seg, code == 0xc2
		case 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf:
			return h, fmt.Errorf("bitmap: the JPEG's frame kind (marker 0x%x: lossless, hierarchical or arithmetic) is not supported", code)
		case 0xda: // SOS
			if frame == nil {
				return h, errors.New("bitmap: the JPEG has a scan before its frame header")
			}
			if scans++; scans > MaxScans {
				return h, fmt.Errorf("bitmap: the JPEG has more than %d scans", MaxScans)
			}
			n, err := scanBlocks(frame, seg)
			if err != nil {
				return h, err
			}
			if visits += n; visits > MaxScanPasses*frameBlocks(frame) {
				return h, fmt.Errorf("bitmap: the JPEG's scans read its blocks more than %d times over", MaxScanPasses)
			}
			pos = skipEntropy(data, pos)
		}
	}
	if frame == nil {
		return h, errors.New("bitmap: the JPEG has no frame header")
	}
	return jpegFrame(h, frame, progressive, adobeRGB && !jfif)
}

// skipEntropy returns where the marker after the entropy-coded data that
// starts at pos is: the first 0xFF that is not a stuffed 0xFF00, a
// restart marker or fill, or len(data).
func skipEntropy(data []byte, pos int) int {
	for pos < len(data) {
		if data[pos] != 0xff {
			pos++
			continue
		}
		k := pos + 1
		for k < len(data) && data[k] == 0xff {
			k++
		}
		if k == len(data) {
			return len(data)
		}
		if c := data[k]; c == 0 || (c >= 0xd0 && c <= 0xd7) {
			pos = k + 1
			continue
		}
		return k - 1
	}
	return pos
}

// checkFrame checks a frame header (SOF): its length, its components (1,
// 3 or 4, as Go's decoder reads) and their sampling factors.
func checkFrame(seg []byte) error {
	if len(seg) < 6 {
		return errors.New("bitmap: the JPEG's frame header is truncated")
	}
	nComp := int(seg[5])
	if nComp != 1 && nComp != 3 && nComp != 4 {
		return fmt.Errorf("bitmap: the JPEG has %d components; 1, 3 or 4 are read", nComp)
	}
	if len(seg) < 6+3*nComp {
		return errors.New("bitmap: the JPEG's frame header is truncated")
	}
	if binary.BigEndian.Uint16(seg[1:]) == 0 {
		return errors.New("bitmap: the JPEG's height is set by a DNL marker, which is not supported")
	}
	for i := range nComp {
		if hi, vi := sampling(seg, i); hi < 1 || hi > 4 || vi < 1 || vi > 4 {
			return fmt.Errorf("bitmap: the JPEG's component %d has sampling factors %d×%d", i, hi, vi)
		}
	}
	return nil
}

// sampling returns the sampling factors of component i of a checked
// frame header.
func sampling(seg []byte, i int) (int, int) {
	hv := seg[6+3*i+1]
	return int(hv >> 4), int(hv & 0x0f)
}

// mcus returns the number of MCUs across and down of a checked frame
// header, and its largest sampling factors.
func mcus(seg []byte) (mxx, myy, hmax, vmax int64) {
	hmax, vmax = 1, 1
	for i := range int(seg[5]) {
		hi, vi := sampling(seg, i)
		hmax, vmax = max(hmax, int64(hi)), max(vmax, int64(vi))
	}
	height, width := int64(binary.BigEndian.Uint16(seg[1:])), int64(binary.BigEndian.Uint16(seg[3:]))
	return (width + 8*hmax - 1) / (8 * hmax), (height + 8*vmax - 1) / (8 * vmax), hmax, vmax
}

// componentBlocks is the number of 8×8 blocks of component i of a
// checked frame header, over whole MCUs: those a scan of it walks, at
// most.
func componentBlocks(seg []byte, i int) int64 {
	mxx, myy, _, _ := mcus(seg)
	hi, vi := sampling(seg, i)
	return mxx * myy * int64(hi) * int64(vi)
}

// frameBlocks is the number of 8×8 blocks of every component of a checked
// frame header.
func frameBlocks(seg []byte) int64 {
	var n int64
	for i := range int(seg[5]) {
		n += componentBlocks(seg, i)
	}
	return n
}

// scanBlocks is the number of blocks that the scan of header sos walks in
// the frame of header frame: those of each component it names (a name
// that is no component's counts as the largest).
func scanBlocks(frame, sos []byte) (int64, error) {
	if len(sos) < 1 || sos[0] < 1 || sos[0] > 4 || len(sos) != 4+2*int(sos[0]) {
		return 0, errors.New("bitmap: the JPEG has a malformed start-of-scan header")
	}
	var n int64
	for k := range int(sos[0]) {
		largest := int64(0)
		found := false
		for i := range int(frame[5]) {
			b := componentBlocks(frame, i)
			largest = max(largest, b)
			if frame[6+3*i] == sos[1+2*k] {
				n, found = n+b, true
				break
			}
		}
		if !found {
			n += largest
		}
	}
	return n, nil
}

// jpegFrame reads a checked frame header's size into h, and the memory
// Go's decoder takes for it. Go's decoder converts a 3-component JPEG
// that it takes for RGB (Adobe's transform 0 without JFIF, or components
// named R, G and B) into RGBA, 4 bytes a pixel more.
func jpegFrame(h Header, seg []byte, progressive, adobeRGB bool) (Header, error) {
	h.Height, h.Width = int(binary.BigEndian.Uint16(seg[1:])), int(binary.BigEndian.Uint16(seg[3:]))
	nComp := int(seg[5])
	mxx, myy, hmax, vmax := mcus(seg)
	pixels := mxx * 8 * hmax * myy * 8 * vmax // whole MCUs, as Go's decoder allocates them
	perPixel := map[int]int64{1: 1, 3: 3, 4: 8}[nComp]
	if nComp == 3 && (adobeRGB || string([]byte{seg[6], seg[9], seg[12]}) == "RGB") {
		perPixel += 4
	}
	h.DecodeBytes = perPixel * pixels
	if progressive {
		h.DecodeBytes += 256 * frameBlocks(seg)
	}
	return h, nil
}
