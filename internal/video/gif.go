package video

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"io"
	"slices"
	"time"
)

// Bounds on a GIF, checked before any pixel is decoded.
const (
	maxGIFSide   = 4096
	maxGIFFrames = 10_000
	maxGIFArea   = 128_000_000 // pixels over all frames
)

// gifFrame is one image of a GIF as scanGIF finds it.
type gifFrame struct {
	gce         []byte // the graphic control extension that precedes it, or nil
	img         []byte // the image descriptor through the image data's terminator
	rect        image.Rectangle
	delay       time.Duration
	disposal    byte
	transparent int // palette index, or -1
}

// gifScan is a GIF's block structure.
type gifScan struct {
	width, height int
	head          []byte // header, logical screen descriptor, global colour table
	frames        []gifFrame
}

// scanGIF walks the block structure of a GIF without decoding any image
// data. It stops after maxFrames frames when maxFrames > 0; otherwise it
// scans the whole GIF and enforces the frame count and area limits. A GIF
// that ends at a block boundary without its trailer is accepted, as
// browsers do.
func scanGIF(data []byte, maxFrames int) (gifScan, error) {
	var g gifScan
	if !isGIF(data) || len(data) < 13 {
		return g, errors.New("video: the GIF is truncated in its header")
	}
	g.width = int(binary.LittleEndian.Uint16(data[6:]))
	g.height = int(binary.LittleEndian.Uint16(data[8:]))
	pos := 13
	if flags := data[10]; flags&0x80 != 0 {
		pos += 3 << (flags&7 + 1)
	}
	if pos > len(data) {
		return g, errors.New("video: the GIF is truncated in its colour table")
	}
	g.head = data[:pos]
	truncated := func() (gifScan, error) {
		return g, fmt.Errorf("video: the GIF is truncated after %d frames", len(g.frames))
	}
	// skip returns the offset past the data sub-blocks that start at p, or
	// -1 when data ends first.
	skip := func(p int) int {
		for p < len(data) {
			n := int(data[p])
			p++
			if n == 0 {
				return p
			}
			p += n
		}
		return -1
	}
	var gce []byte
	area := 0
	for pos < len(data) {
		start := pos
		switch data[pos] {
		case 0x21: // extension
			if pos+2 > len(data) {
				return truncated()
			}
			if data[pos+1] == 0xf9 { // graphic control
				if pos+8 > len(data) {
					return truncated()
				}
				if data[pos+2] != 4 || data[pos+7] != 0 {
					return g, fmt.Errorf("video: the GIF's graphic control extension at byte %d is malformed", pos)
				}
				gce = data[pos : pos+8]
				pos += 8
				continue
			}
			if pos = skip(pos + 2); pos < 0 {
				return truncated()
			}
		case 0x2c: // image descriptor
			if pos+11 > len(data) {
				return truncated()
			}
			left := int(binary.LittleEndian.Uint16(data[pos+1:]))
			top := int(binary.LittleEndian.Uint16(data[pos+3:]))
			w := int(binary.LittleEndian.Uint16(data[pos+5:]))
			h := int(binary.LittleEndian.Uint16(data[pos+7:]))
			flags := data[pos+9]
			pos += 10
			if flags&0x80 != 0 {
				pos += 3 << (flags&7 + 1)
			}
			if pos >= len(data) {
				return truncated()
			}
			if pos = skip(pos + 1); pos < 0 { // past the LZW code size
				return truncated()
			}
			if left+w > g.width || top+h > g.height {
				return g, fmt.Errorf("video: frame %d of the GIF (%d×%d at %d,%d) lies outside its %d×%d screen",
					len(g.frames)+1, w, h, left, top, g.width, g.height)
			}
			f := gifFrame{img: data[start:pos], rect: image.Rect(left, top, left+w, top+h), transparent: -1, delay: 100 * time.Millisecond}
			if gce != nil {
				f.gce = gce
				f.disposal = gce[3] >> 2 & 7
				if cs := binary.LittleEndian.Uint16(gce[4:]); cs > 1 {
					f.delay = time.Duration(cs) * 10 * time.Millisecond
				}
				if gce[3]&1 != 0 {
					f.transparent = int(gce[6])
				}
				gce = nil
			}
			g.frames = append(g.frames, f)
			if maxFrames > 0 && len(g.frames) >= maxFrames {
				return g, nil
			}
			if len(g.frames) > maxGIFFrames {
				return g, fmt.Errorf("video: the GIF has more than %d frames", maxGIFFrames)
			}
			if area += w * h; area > maxGIFArea {
				return g, fmt.Errorf("video: the GIF's frames add up to more than %d megapixels", maxGIFArea/1_000_000)
			}
		case 0x3b: // trailer
			return g, nil
		default:
			return g, fmt.Errorf("video: the GIF is malformed: unexpected byte 0x%02x at byte %d", data[pos], pos)
		}
	}
	return g, nil
}

// gifFrames composites the GIF's frames and samples them.
func gifFrames(ctx context.Context, data []byte, o Options) ([]Frame, error) {
	cfg, err := gif.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("video: cannot read the GIF: %w", err)
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > maxGIFSide || cfg.Height > maxGIFSide {
		return nil, fmt.Errorf("video: the GIF's screen is %d×%d pixels; want 1 to %d a side", cfg.Width, cfg.Height, maxGIFSide)
	}
	g, err := scanGIF(data, 0)
	if err != nil {
		return nil, err
	}
	switch len(g.frames) {
	case 0:
		return nil, errors.New("video: the GIF has no frames")
	case 1:
		return nil, errors.New("video: the GIF has a single frame: send it as an image, not a clip")
	}
	var total time.Duration
	for _, f := range g.frames {
		total += f.delay
	}
	times := sampleTimes(total, o.MaxFrames)
	ow, oh := fit(g.width, g.height, o.MaxSide)

	canvas := image.NewRGBA(image.Rect(0, 0, g.width, g.height))
	var saved []byte // canvas under the current frame, for disposal 3
	var out []Frame
	var start time.Duration
	si := 0
	for i, f := range g.frames {
		if si == len(times) {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, ctxErr(ctx)
		}
		if f.disposal == 3 {
			saved = copyRect(saved[:0], canvas, f.rect)
		}
		if err := drawGIFFrame(canvas, g.head, f); err != nil {
			return nil, fmt.Errorf("video: frame %d of the GIF: %w", i+1, err)
		}
		end := start + f.delay
		if times[si] < end {
			png, err := encodePNG(resize(canvas, ow, oh))
			if err != nil {
				return nil, err
			}
			out = append(out, Frame{Time: times[si], Image: png, Width: ow, Height: oh})
			for si < len(times) && times[si] < end {
				si++ // later samples on the same frame: the same picture
			}
		}
		start = end
		switch f.disposal {
		case 2: // restore to background: browsers clear to transparent
			clearRect(canvas, f.rect)
		case 3: // restore to previous
			pasteRect(canvas, f.rect, saved)
		}
	}
	return out, nil
}

// drawGIFFrame decodes frame f on its own, as a one-frame GIF made of the
// file's head, the frame's graphic control extension and its image, and
// draws its opaque pixels onto canvas.
func drawGIFFrame(canvas *image.RGBA, head []byte, f gifFrame) error {
	img, err := gif.Decode(io.MultiReader(bytes.NewReader(head), bytes.NewReader(f.gce),
		bytes.NewReader(f.img), bytes.NewReader([]byte{0x3b})))
	if err != nil {
		return err
	}
	p, ok := img.(*image.Paletted)
	if !ok || p.Rect != f.rect {
		return fmt.Errorf("decoded as %T %v, not a %v paletted image", img, img.Bounds(), f.rect)
	}
	var pal [256][4]byte
	var opaque [256]bool
	for i, c := range p.Palette {
		if i == 256 {
			break
		}
		r, g, b, a := c.RGBA()
		pal[i] = [4]byte{byte(r >> 8), byte(g >> 8), byte(b >> 8), 255}
		opaque[i] = a != 0 && i != f.transparent
	}
	w := f.rect.Dx()
	for y := 0; y < f.rect.Dy(); y++ {
		src := p.Pix[y*p.Stride : y*p.Stride+w]
		dst := canvas.Pix[canvas.PixOffset(f.rect.Min.X, f.rect.Min.Y+y):]
		for x, idx := range src {
			if opaque[idx] {
				copy(dst[4*x:4*x+4], pal[idx][:])
			}
		}
	}
	return nil
}

// copyRect appends the canvas's pixels in r to buf.
func copyRect(buf []byte, canvas *image.RGBA, r image.Rectangle) []byte {
	buf = slices.Grow(buf, 4*r.Dx()*r.Dy())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		o := canvas.PixOffset(r.Min.X, y)
		buf = append(buf, canvas.Pix[o:o+4*r.Dx()]...)
	}
	return buf
}

// pasteRect writes pixels saved by copyRect back into r.
func pasteRect(canvas *image.RGBA, r image.Rectangle, buf []byte) {
	row := 4 * r.Dx()
	for y := r.Min.Y; y < r.Max.Y && len(buf) >= row; y++ {
		copy(canvas.Pix[canvas.PixOffset(r.Min.X, y):], buf[:row])
		buf = buf[row:]
	}
}

// clearRect makes r transparent.
func clearRect(canvas *image.RGBA, r image.Rectangle) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		o := canvas.PixOffset(r.Min.X, y)
		clear(canvas.Pix[o : o+4*r.Dx()])
	}
}
