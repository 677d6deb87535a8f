package tinymodel

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// weightStd is the standard deviation of the random weights: small enough
// that activations and logits stay finite, large enough that logits differ.
const weightStd = 0.02

// chunkElems is how many elements one worker generates and encodes at a
// time. It is a multiple of the Q8_0 block size, and part of what a seed
// means: changing it changes every model's weights.
const chunkElems = 1 << 16

// Q8_0: blocks of 32 values, each an fp16 scale followed by 32 int8.
const (
	q8Block      = 32
	q8BlockBytes = 2 + q8Block
)

// tensorSpec describes one tensor to write.
type tensorSpec struct {
	name  string
	shape []uint64 // ne0 (the contiguous dimension) first, as GGUF stores it
	typ   tensorType
	ones  bool // every element is 1 (norm weights); else random
	zeros bool // every element is 0 (norm biases)
	// scale multiplies the random values (0 means 1): for layers whose
	// output must vary more than weightStd gives.
	scale float32
	// offset is added to the random values after scale: for parameters
	// that must keep a sign, such as a Mamba layer's A.
	offset float32
	// values, if not nil, are the tensor's elements, written as they are
	// (typ F32): for tensors that converters compute rather than copy,
	// such as Gemma 4's rope_freqs.
	values []float32
}

func (t tensorSpec) elems() uint64 {
	n := uint64(1)
	for _, d := range t.shape {
		n *= d
	}
	return n
}

func (t tensorSpec) size() uint64 { return t.typ.bytes(t.elems()) }

// chunk is one piece of a tensor's data, encoded by a worker and written in
// file order.
type chunk struct {
	t     *tensorSpec
	index uint64 // chunk number within the tensor
	last  bool   // the tensor's last chunk
	seed  uint64 // the tensor's stream
	out   chan *[]byte
}

// writeData streams the tensors' data after the header: workers fill and
// encode chunks in parallel, and the writer writes them in order, so memory
// stays bounded by a few chunks per worker whatever the model's size.
func writeData(g *ggufWriter, ts []tensorSpec, seed int64) {
	workers := runtime.GOMAXPROCS(0)
	done := make(chan struct{})
	defer close(done)
	order := make(chan *chunk, 2*workers)
	work := make(chan *chunk, 2*workers)
	bufs := sync.Pool{New: func() any {
		b := make([]byte, 0, 4*chunkElems)
		return &b
	}}

	go func() {
		defer close(work)
		defer close(order)
		for i := range ts {
			t := &ts[i]
			n := (t.elems() + chunkElems - 1) / chunkElems
			s := tensorSeed(seed, t.name)
			for c := range n {
				ch := &chunk{t: t, index: c, last: c == n-1, seed: s, out: make(chan *[]byte, 1)}
				select {
				case order <- ch:
				case <-done:
					return
				}
				select {
				case work <- ch:
				case <-done:
					return
				}
			}
		}
	}()
	for range workers {
		go func() {
			vals := make([]float32, chunkElems)
			for ch := range work {
				b := bufs.Get().(*[]byte)
				*b = encodeChunk((*b)[:0], vals, ch)
				ch.out <- b
			}
		}()
	}
	for ch := range order {
		b := <-ch.out
		g.write(*b)
		bufs.Put(b)
		if ch.last {
			g.pad()
		}
		if g.err != nil {
			return
		}
	}
}

// tensorSeed gives each tensor its own random stream, so that a tensor's
// values depend only on the seed and its name.
func tensorSeed(seed int64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64() ^ uint64(seed)
}

// encodeChunk appends the encoding of chunk ch to dst, using vals as
// scratch.
func encodeChunk(dst []byte, vals []float32, ch *chunk) []byte {
	start := ch.index * chunkElems
	n := min(ch.t.elems()-start, chunkElems)
	v := vals[:n]
	switch {
	case ch.t.values != nil:
		copy(v, ch.t.values[start:])
	case ch.t.ones:
		for i := range v {
			v[i] = 1
		}
	case ch.t.zeros:
		clear(v)
	default:
		fillRandom(v, ch.seed, ch.index)
		if s := ch.t.scale; s != 0 && s != 1 {
			for i := range v {
				v[i] *= s
			}
		}
		if d := ch.t.offset; d != 0 {
			for i := range v {
				v[i] += d
			}
		}
	}
	switch ch.t.typ {
	case typeF16:
		return appendF16(dst, v)
	case typeQ8_0:
		return appendQ8_0(dst, v)
	default:
		return appendF32(dst, v)
	}
}

// fillRandom fills v with values uniform in [-a, a), a chosen so that their
// standard deviation is weightStd. Uniform rather than normal values are
// cheaper to draw, and the engine's speed and behaviour do not depend on the
// distribution.
func fillRandom(v []float32, seed, stream uint64) {
	r := rand.NewPCG(seed, stream)
	const scale = weightStd * 1.7320508075688772 / (1 << 31) // sqrt(3) / 2^31
	i := 0
	for ; i+1 < len(v); i += 2 {
		u := r.Uint64()
		v[i] = float32(int32(uint32(u))) * scale
		v[i+1] = float32(int32(uint32(u>>32))) * scale
	}
	if i < len(v) {
		v[i] = float32(int32(uint32(r.Uint64()))) * scale
	}
}

func appendF32(dst []byte, v []float32) []byte {
	for _, x := range v {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
	}
	return dst
}

func appendF16(dst []byte, v []float32) []byte {
	for _, x := range v {
		dst = binary.LittleEndian.AppendUint16(dst, f16(x))
	}
	return dst
}

// appendQ8_0 appends v, whose length is a multiple of 32, in ggml's Q8_0
// encoding: per block of 32 values, the scale d = max|x|/127 as fp16 and
// then round(x/d) as 32 int8, rounding halves away from zero as ggml's
// reference quantizer does.
func appendQ8_0(dst []byte, v []float32) []byte {
	n := len(dst)
	dst = slices.Grow(dst, len(v)/q8Block*q8BlockBytes)[:n+len(v)/q8Block*q8BlockBytes]
	for b := 0; b+q8Block <= len(v); b += q8Block {
		blk := v[b : b+q8Block]
		out := dst[n : n+q8BlockBytes]
		n += q8BlockBytes
		var amax uint32 // of the bits without sign, which order like the values
		for _, x := range blk {
			amax = max(amax, math.Float32bits(x)&^(1<<31))
		}
		d := math.Float32frombits(amax) / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(out, f16(d))
		for j, x := range blk {
			// roundf: add ±0.5 and truncate, exactly in float64.
			q := float64(x * id)
			half := math.Float64frombits(math.Float64bits(0.5) | math.Float64bits(q)&(1<<63))
			out[2+j] = byte(int8(q + half))
		}
	}
	return dst
}

// f16 converts x to IEEE 754 half precision, rounding to nearest even.
func f16(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff && mant != 0: // NaN
		return sign | 0x7e00
	case exp == 0xff: // infinity
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	switch {
	case e >= 0x1f: // overflow
		return sign | 0x7c00
	case e <= 0: // subnormal or zero in half precision
		if e < -10 {
			return sign
		}
		m := mant | 0x800000
		shift := uint(14 - e)
		h := uint16(m >> shift)
		rem, half := m&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > half || rem == half && h&1 == 1 {
			h++
		}
		return sign | h
	}
	h := sign | uint16(e)<<10 | uint16(mant>>13)
	rem := mant & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++ // may carry into the exponent, up to infinity: still correct
	}
	return h
}
