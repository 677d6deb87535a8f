package backend

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// StateReader reads the fields of a sequence state in order,
// little-endian as llama.cpp writes them on the machines it runs on here,
// for a backend that checks a state field by field before its library
// reads it. The first field that is not as expected (or that the state
// is too short to hold) sets Err, an error wrapping ErrBadState that
// names the field and its offset; later reads then return 0 and do
// nothing. Make one with NewStateReader; it is not safe for concurrent
// use.
type StateReader struct {
	prefix string
	b      []byte
	off    int
	err    error
}

// NewStateReader reads state; prefix starts its errors ("llamacpp").
func NewStateReader(prefix string, state []byte) *StateReader {
	return &StateReader{prefix: prefix, b: state}
}

// Offset is how many bytes have been read.
func (r *StateReader) Offset() int { return r.off }

// Err is the first failure, or nil.
func (r *StateReader) Err() error { return r.err }

// Fail records a failure at the current offset, unless one is recorded.
func (r *StateReader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s: sequence state at byte %d: %s: %w", r.prefix, r.off, fmt.Sprintf(format, args...), ErrBadState)
	}
}

// Finish fails if bytes are left after the last field, and returns Err.
func (r *StateReader) Finish() error {
	if r.err == nil && r.off != len(r.b) {
		r.Fail("%d bytes past the state's end", len(r.b)-r.off)
	}
	return r.err
}

func (r *StateReader) take(what string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b)-r.off < n {
		r.Fail("%s: cut short", what)
		return nil
	}
	b := r.b[r.off : r.off+n]
	r.off += n
	return b
}

// U32 reads a uint32.
func (r *StateReader) U32(what string) uint32 {
	if b := r.take(what, 4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

// U64 reads a uint64.
func (r *StateReader) U64(what string) uint64 {
	if b := r.take(what, 8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// Expect reads a uint32 that must be want.
func (r *StateReader) Expect(what string, want uint32) {
	if got := r.U32(what); r.err == nil && got != want {
		r.Fail("%s %d, this context's is %d", what, got, want)
	}
}

// ExpectBool reads a uint32 that must be 1 when want is true, else 0.
func (r *StateReader) ExpectBool(what string, want bool) {
	var w uint32
	if want {
		w = 1
	}
	r.Expect(what, w)
}

// Expect64 reads a uint64 that must be want.
func (r *StateReader) Expect64(what string, want uint64) {
	if got := r.U64(what); r.err == nil && got != want {
		r.Fail("%s %d, this context's is %d", what, got, want)
	}
}

// Skip passes n×size bytes of data.
func (r *StateReader) Skip(what string, n, size uint64) {
	if r.err != nil {
		return
	}
	hi, lo := bits.Mul64(n, size)
	if hi != 0 || lo > uint64(len(r.b)-r.off) {
		r.Fail("%s: %d bytes, %d left", what, lo, len(r.b)-r.off)
		return
	}
	r.off += int(lo)
}

// Position reads a cell's position, which must be in [0, bound) and,
// with seen (a bit per position, at least bound bits), one that no other
// cell marked in seen has.
func (r *StateReader) Position(bound uint32, seen []uint64) {
	pos := int32(r.U32("cell's position"))
	if r.err != nil {
		return
	}
	if pos < 0 || uint32(pos) >= bound {
		r.Fail("position %d, this context's are 0 to %d", pos, int64(bound)-1)
		return
	}
	if seen != nil {
		w, b := pos/64, uint64(1)<<(pos%64)
		if seen[w]&b != 0 {
			r.Fail("position %d twice", pos)
			return
		}
		seen[w] |= b
	}
}
