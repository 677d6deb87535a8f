package tinymodel

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// GGUF v3, little endian: magic, version, tensor count, KV count, the KV
// pairs, the tensor infos, padding to the alignment, then the tensor data,
// each tensor starting at a multiple of the alignment.
const (
	ggufVersion   = 3
	ggufAlignment = 32
)

// GGUF metadata value types.
const (
	ggufUint32  uint32 = 4
	ggufInt32   uint32 = 5
	ggufFloat32 uint32 = 6
	ggufBool    uint32 = 7
	ggufString  uint32 = 8
	ggufArray   uint32 = 9
)

// ggml tensor types.
type tensorType uint32

const (
	typeF32  tensorType = 0
	typeF16  tensorType = 1
	typeQ8_0 tensorType = 8
)

// bytes is the size in bytes of n elements of type t; n must be a
// multiple of the type's block size.
func (t tensorType) bytes(n uint64) uint64 {
	switch t {
	case typeF16:
		return 2 * n
	case typeQ8_0:
		return n / q8Block * q8BlockBytes
	default:
		return 4 * n
	}
}

// kv is one metadata pair. Value is a string, uint32, int32, float32, bool,
// []string, []int32, []float32 or []bool.
type kv struct {
	Key   string
	Value any
}

// ggufWriter writes GGUF through a buffer and remembers the first error.
type ggufWriter struct {
	w   *bufio.Writer
	err error
	n   uint64 // bytes written
	buf [8]byte
}

func (g *ggufWriter) write(b []byte) {
	if g.err != nil {
		return
	}
	var n int
	n, g.err = g.w.Write(b)
	g.n += uint64(n)
}

func (g *ggufWriter) u32(v uint32) {
	binary.LittleEndian.PutUint32(g.buf[:4], v)
	g.write(g.buf[:4])
}

func (g *ggufWriter) u64(v uint64) {
	binary.LittleEndian.PutUint64(g.buf[:8], v)
	g.write(g.buf[:8])
}

func (g *ggufWriter) str(s string) {
	g.u64(uint64(len(s)))
	if g.err == nil {
		var n int
		n, g.err = g.w.WriteString(s)
		g.n += uint64(n)
	}
}

func (g *ggufWriter) pad() {
	var zero [ggufAlignment]byte
	if r := g.n % ggufAlignment; r != 0 {
		g.write(zero[:ggufAlignment-r])
	}
}

func (g *ggufWriter) kv(p kv) {
	g.str(p.Key)
	switch v := p.Value.(type) {
	case string:
		g.u32(ggufString)
		g.str(v)
	case uint32:
		g.u32(ggufUint32)
		g.u32(v)
	case int32:
		g.u32(ggufInt32)
		g.u32(uint32(v))
	case float32:
		g.u32(ggufFloat32)
		g.u32(math.Float32bits(v))
	case bool:
		g.u32(ggufBool)
		if v {
			g.write([]byte{1})
		} else {
			g.write([]byte{0})
		}
	case []string:
		g.u32(ggufArray)
		g.u32(ggufString)
		g.u64(uint64(len(v)))
		for _, s := range v {
			g.str(s)
		}
	case []int32:
		g.u32(ggufArray)
		g.u32(ggufInt32)
		g.u64(uint64(len(v)))
		for _, x := range v {
			g.u32(uint32(x))
		}
	case []float32:
		g.u32(ggufArray)
		g.u32(ggufFloat32)
		g.u64(uint64(len(v)))
		for _, x := range v {
			g.u32(math.Float32bits(x))
		}
	case []bool:
		g.u32(ggufArray)
		g.u32(ggufBool)
		g.u64(uint64(len(v)))
		for _, x := range v {
			if x {
				g.write([]byte{1})
			} else {
				g.write([]byte{0})
			}
		}
	default:
		if g.err == nil {
			g.err = fmt.Errorf("inferencetest: metadata %s: unsupported type %T", p.Key, p.Value)
		}
	}
}

// header writes everything before the tensor data, padding included.
func (g *ggufWriter) header(kvs []kv, ts []tensorSpec) {
	g.write([]byte("GGUF"))
	g.u32(ggufVersion)
	g.u64(uint64(len(ts)))
	g.u64(uint64(len(kvs)))
	for _, p := range kvs {
		g.kv(p)
	}
	var off uint64
	for _, t := range ts {
		g.str(t.name)
		g.u32(uint32(len(t.shape)))
		for _, d := range t.shape {
			g.u64(d)
		}
		g.u32(uint32(t.typ))
		g.u64(off)
		off += t.size()
		off += (ggufAlignment - off%ggufAlignment) % ggufAlignment
	}
	g.pad()
}

// writeGGUF writes a GGUF file of metadata kvs and tensors ts, with the
// random weights of seed, to a temporary file beside path and renames it, so
// path never holds a partial file.
func writeGGUF(path string, kvs []kv, ts []tensorSpec, seed int64) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("inferencetest: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	g := &ggufWriter{w: bufio.NewWriterSize(f, 256<<10)}
	g.header(kvs, ts)
	writeData(g, ts, seed)
	if g.err == nil {
		g.err = g.w.Flush()
	}
	if g.err != nil {
		return fmt.Errorf("inferencetest: writing %s: %w", path, g.err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("inferencetest: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("inferencetest: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("inferencetest: %w", err)
	}
	return nil
}
