package libllama

import (
	"fmt"
	"strconv"

	"github.com/inferkit/inferkit/internal/backend"
)

// seqLayout is what a sequence state of a context holds, as the
// library's llama_state_seq_get_data writes it for a plain attention
// cache (llama_kv_cache::state_write): the facts that check tests a state
// against before the library reads it. The library trusts a state's cell
// count and positions: a count past the cache allocates what it claims, a
// position of -1 aborts the process in an assertion; its checks of layer
// counts, types and row sizes come after it has placed the cells. llama.h
// does not expose the cache's layout, so stateLayout derives it from the
// model's metadata, and only for models whose cache it can derive
// exactly (see stateLayout).
type seqLayout struct {
	streams uint32 // KV streams: 1 with a unified cache
	cells   uint32 // cells per stream: the most a sequence holds
	// positions bounds a cell's position: the context's cells. This
	// engine never shifts positions.
	positions uint32
	vTrans    bool   // values stored transposed (without flash attention)
	nLayer    uint32 // every layer has keys and values of these sizes
	kType     int32
	vType     int32
	kRow      uint64
	vRow      uint64
	vEl       uint32 // transposed values: element size
	vEmbd     uint32 // transposed values: rows
}

// stateChecker checks the sequence states of a context before the
// library reads them: check reports whether a state is exactly one the
// library writes for the context (an error wrapping backend.ErrBadState
// names the first field that is not), and maxSize bounds a state's
// bytes. seqLayout checks an attention cache's, wholeRecurrent a
// recurrent model's.
type stateChecker interface {
	check(state []byte) error
	maxSize() int64
}

// stateMagic opens every sequence state (llama_context's io_magic).
const stateMagic = 0xaf143cd8

// ggml types of the caches this backend makes (cacheType), with their
// block sizes and bytes per block.
var ggmlTypes = map[backend.CacheType]struct {
	id           int32
	block, bytes uint64
}{
	backend.CacheF16:  {1, 1, 2},
	backend.CacheQ4_0: {2, 32, 18},
	backend.CacheQ8_0: {8, 32, 34},
}

// stateArchs are the architectures whose memory the library makes as one
// plain attention cache over every layer, with no cell extras (M-RoPE
// positions, n-gram tokens), when the GGUF names no sliding window: the
// cache whose layout stateLayout can derive from the metadata alone.
// Others keep states off rather than have a guessed layout admit a state
// the library then misreads.
var stateArchs = map[string]bool{"llama": true, "qwen2": true, "qwen3": true}

// stateLayout derives the layout of c's sequence states, or says why it
// cannot, in an error wrapping backend.ErrUnsupported.
func stateLayout(m *Model, p backend.ContextParams, nCtx, nSeq int) (*seqLayout, error) {
	no := func(why string) error {
		return backend.Unsupported(backend.LibLlama, "sequence states (the prompt cache on disk) "+why)
	}
	if p.Pooling != backend.PoolingNone {
		return nil, no("of an encoder's context")
	}
	if !m.SharesKV() {
		// A recurrent model's are checked as checkpoints (wholeRecurrent).
		return nil, no("of a hybrid model, whose attention cells' layout beside the recurrent state llama.h does not expose")
	}
	arch, _ := m.Meta("general.architecture")
	if !stateArchs[arch] {
		return nil, no(fmt.Sprintf("of architecture %q, whose cache layout is not derived here", arch))
	}
	for _, key := range []string{".attention.sliding_window", ".rope.dimension_sections"} {
		if _, ok := m.Meta(arch + key); ok {
			return nil, no("of a model with " + arch + key + ", whose cache layout is not derived here")
		}
	}
	heads := m.heads()
	kvHeads := heads
	if s, ok := m.Meta(arch + ".attention.head_count_kv"); ok {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, no("of a model with a head count per layer")
		}
		kvHeads = n
	}
	hk, hv := m.HeadDims()
	nLayer := m.layers()
	kt, okK := ggmlTypes[p.KeyType]
	vt, okV := ggmlTypes[p.ValueType]
	if heads <= 0 || kvHeads <= 0 || hk <= 0 || hv <= 0 || nLayer <= 0 || !okK || !okV || nSeq <= 0 {
		return nil, no("of a model without attention heads")
	}
	l := &seqLayout{
		streams:   1,
		cells:     uint32(nCtx),
		positions: uint32(nCtx),
		vTrans:    !flashAttention(p),
		nLayer:    uint32(nLayer),
		kType:     kt.id,
		vType:     vt.id,
		vEl:       uint32(vt.bytes),
		vEmbd:     uint32(hv * kvHeads),
	}
	if p.SplitKV {
		l.streams = uint32(nSeq)
		l.cells = uint32((nCtx/nSeq + 255) / 256 * 256) // llama_context's n_ctx_seq
	}
	kEmbd := uint64(hk * kvHeads)
	if kEmbd%kt.block != 0 || uint64(l.vEmbd)%vt.block != 0 {
		return nil, no("of a quantized cache over rows that are not whole blocks")
	}
	l.kRow = kEmbd / kt.block * kt.bytes
	l.vRow = uint64(l.vEmbd) / vt.block * vt.bytes
	return l, nil
}

// check reports whether state is exactly what llama_state_seq_get_data
// writes for one sequence of a context of layout l, field by field, with
// no byte more: an error wrapping backend.ErrBadState names the first
// field that is not. A state that passes holds, in one stream, no more
// cells than a stream has, each of one sequence at a distinct position
// from 0 to below the context's cells, and the model's layers with the
// context's types and row sizes; the library then reads it without
// aborting or allocating more than the cells it can hold.
func (l *seqLayout) check(state []byte) error {
	r := backend.NewStateReader("libllama", state)
	r.Expect("magic", stateMagic)
	if id := r.U32("source sequence"); r.Err() == nil && id >= maxSequences {
		r.Fail("source sequence %d", int32(id))
	}
	r.Expect("stream count", l.streams)
	filled := false
	for range l.streams {
		cells := r.U32("cell count")
		if r.Err() != nil || cells == 0 {
			continue
		}
		// One sequence lives in one stream: a write fills one.
		if filled {
			r.Fail("cells in two streams")
			break
		}
		filled = true
		if cells > l.cells {
			r.Fail("%d cells, a stream has %d", cells, l.cells)
			break
		}
		l.checkCells(r, cells)
		l.checkData(r, uint64(cells))
	}
	return r.Finish()
}

// checkCells reads the cells' positions and sequences.
func (l *seqLayout) checkCells(r *backend.StateReader, cells uint32) {
	seen := make([]uint64, (l.positions+63)/64)
	for range cells {
		r.Position(l.positions, seen)
		if n := r.U32("cell's sequence count"); r.Err() == nil && n != 1 {
			r.Fail("a cell of %d sequences, a write gives each one", n)
		}
		if id := r.U32("cell's sequence"); r.Err() == nil && id >= maxSequences {
			r.Fail("sequence id %d", int32(id))
		}
		if r.Err() != nil {
			return
		}
	}
}

// checkData reads the layers' keys and values of cells cells.
func (l *seqLayout) checkData(r *backend.StateReader, cells uint64) {
	r.ExpectBool("value transposition", l.vTrans)
	r.Expect("layer count", l.nLayer)
	for i := range l.nLayer {
		r.Expect(fmt.Sprintf("layer %d key type", i), uint32(l.kType))
		r.Expect64(fmt.Sprintf("layer %d key row size", i), l.kRow)
		r.Skip("keys", cells, l.kRow)
	}
	for i := range l.nLayer {
		r.Expect(fmt.Sprintf("layer %d value type", i), uint32(l.vType))
		if l.vTrans {
			r.Expect(fmt.Sprintf("layer %d value element size", i), l.vEl)
			r.Expect(fmt.Sprintf("layer %d value rows", i), l.vEmbd)
			r.Skip("values", cells*uint64(l.vEmbd), uint64(l.vEl))
			continue
		}
		r.Expect64(fmt.Sprintf("layer %d value row size", i), l.vRow)
		r.Skip("values", cells, l.vRow)
	}
}

// maxSize is the most bytes a state of one sequence of this layout can
// take: every cell of a stream.
func (l *seqLayout) maxSize() int64 {
	cells := uint64(l.cells)
	n := 4 + 4 + 4 + 4*uint64(l.streams) + 12*cells + 8
	n += uint64(l.nLayer) * (12 + cells*l.kRow)
	if l.vTrans {
		n += uint64(l.nLayer) * (12 + cells*uint64(l.vEmbd)*uint64(l.vEl))
	} else {
		n += uint64(l.nLayer) * (12 + cells*l.vRow)
	}
	return int64(min(n, 1<<62))
}
