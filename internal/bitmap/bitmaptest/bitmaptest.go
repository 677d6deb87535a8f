// Package bitmaptest makes hostile pictures for tests: progressive JPEGs
// of many scans, and a PNG whose compressed pixel data inflates far past
// the size its header declares. Each is made in milliseconds from its
// parameters; none is stored.
package bitmaptest

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
)

// JPEG describes a progressive JPEG of few bytes and much work.
type JPEG struct {
	// Width and Height are its size, multiples of 16.
	Width, Height int
	// Colour makes it YCbCr 4:2:0 (three components, the first sampled
	// 2×2); otherwise it is grey.
	Colour bool
	// Scans is its number of scans, at least 1: a DC scan that sets every
	// block to 0, then AC scans of one component each, each a few
	// end-of-band runs over all the component's blocks.
	Scans int
	// Component is the component (1 to 3) that every AC scan reads; 0
	// takes each in turn.
	Component int
	// Empty leaves out the scans' data: each scan is its header alone,
	// as in the scan bomb as it was found. The JPEG is then no valid
	// one.
	Empty bool
}

// Bytes returns the JPEG. Every scan is a few bytes, and makes a decoder
// walk every block of its components again.
func (j JPEG) Bytes() []byte {
	var b bytes.Buffer
	b.Write([]byte{0xff, 0xd8})
	segment(&b, 0xdb, append([]byte{0}, bytes.Repeat([]byte{1}, 64)...))
	n, sampling := 1, byte(0x11)
	if j.Colour {
		n, sampling = 3, 0x22
	}
	sof := []byte{8, byte(j.Height >> 8), byte(j.Height), byte(j.Width >> 8), byte(j.Width), byte(n)}
	for i := range n {
		sof = append(sof, byte(1+i), sampling, 0)
		sampling = 0x11
	}
	segment(&b, 0xc2, sof)
	// DC: symbol 0 (no change) as the 1-bit code 0. AC: the end-of-band
	// symbols 0x00 to 0xE0 as the 4-bit codes 0 to 14.
	segment(&b, 0xc4, append(append([]byte{0x00, 1}, make([]byte, 15)...), 0))
	ac := append([]byte{0x10, 0, 0, 0, 15}, make([]byte, 12)...)
	for k := range 15 {
		ac = append(ac, byte(k<<4))
	}
	segment(&b, 0xc4, ac)

	luma := (j.Width / 8) * (j.Height / 8)
	blocks := []int{luma}
	if j.Colour {
		blocks = append(blocks, luma/4, luma/4)
	}
	s := []byte{byte(n)}
	for i := range n {
		s = append(s, byte(1+i), 0x00)
	}
	segment(&b, 0xda, append(s, 0, 0, 0))
	if !j.Empty {
		w := bitWriter{out: &b}
		for _, c := range blocks {
			for range c {
				w.write(0, 1)
			}
		}
		w.flush()
	}
	for i := range j.Scans - 1 {
		c := j.Component
		if c == 0 {
			c = 1 + i%n
		}
		segment(&b, 0xda, []byte{1, byte(c), 0x00, 1, 63, 0})
		if j.Empty {
			continue
		}
		w := bitWriter{out: &b}
		for left := blocks[c-1]; left > 0; {
			// An end-of-band run of class k: the code of symbol k<<4,
			// then k bits, for a run of 2^k plus those bits.
			run := min(left, 32767)
			k := 0
			for 2<<k <= run {
				k++
			}
			w.write(uint32(k), 4)
			w.write(uint32(run-1<<k), k)
			left -= run
		}
		w.flush()
	}
	b.Write([]byte{0xff, 0xd9})
	return b.Bytes()
}

func segment(b *bytes.Buffer, marker byte, data []byte) {
	b.Write([]byte{0xff, marker, byte((len(data) + 2) >> 8), byte(len(data) + 2)})
	b.Write(data)
}

// bitWriter writes entropy-coded bits, most significant first, stuffing
// a 0 byte after each 0xFF.
type bitWriter struct {
	out  *bytes.Buffer
	acc  uint32
	bits int
}

func (w *bitWriter) write(v uint32, n int) {
	for i := n - 1; i >= 0; i-- {
		w.acc = w.acc<<1 | (v>>i)&1
		if w.bits++; w.bits == 8 {
			w.emit()
		}
	}
}

func (w *bitWriter) emit() {
	w.out.WriteByte(byte(w.acc))
	if byte(w.acc) == 0xff {
		w.out.WriteByte(0)
	}
	w.acc, w.bits = 0, 0
}

// flush pads the last byte with 1 bits.
func (w *bitWriter) flush() {
	for w.bits != 0 {
		w.write(1, 1)
	}
}

// ZlibBomb returns a PNG that declares 1×1 RGB pixel and whose pixel data
// is a zlib stream of n zero bytes: about n/1000 bytes of file.
func ZlibBomb(n int) []byte {
	var idat bytes.Buffer
	z, _ := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	zeros := make([]byte, 1<<20)
	for left := n; left > 0; left -= len(zeros) {
		z.Write(zeros[:min(left, len(zeros))])
	}
	z.Close()
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], 1)
	binary.BigEndian.PutUint32(ihdr[4:], 1)
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
	chunk(&b, "IHDR", ihdr)
	chunk(&b, "IDAT", idat.Bytes())
	chunk(&b, "IEND", nil)
	return b.Bytes()
}

func chunk(b *bytes.Buffer, kind string, data []byte) {
	binary.Write(b, binary.BigEndian, uint32(len(data)))
	crc := crc32.NewIEEE()
	crc.Write([]byte(kind))
	crc.Write(data)
	b.WriteString(kind)
	b.Write(data)
	binary.Write(b, binary.BigEndian, crc.Sum32())
}
