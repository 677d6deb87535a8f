package llamacpp

/*
#cgo CXXFLAGS: -std=c++17
#include "bridge.h"
*/
import "C"

import (
	"fmt"

	"github.com/inferkit/inferkit/internal/backend"
)

// readStateLayout reads the layout of c's sequence states from its
// memory (state_layout.cpp), or returns an error wrapping
// backend.ErrUnsupported for a memory it does not know.
func readStateLayout(c *C.struct_llama_context) (*stateLayout, error) {
	const maxParts, maxLayers = 4, 4096
	var parts [maxParts]C.inferkit_state_part
	layers := make([]C.inferkit_state_layer, maxLayers)
	var perEmbd C.uint32_t
	n := int(C.inferkit_state_layout(c, &parts[0], maxParts, &layers[0], maxLayers, &perEmbd))
	if n <= 0 {
		return nil, fmt.Errorf("%w (%d): %w", errNoLayout, n, backend.ErrUnsupported)
	}
	l := &stateLayout{positions: uint32(C.llama_n_ctx(c)), posPerEmbd: uint32(perEmbd)}
	for _, p := range parts[:n] {
		sp := statePart{
			recurrent: p.recurrent != 0,
			streams:   uint32(p.streams),
			cells:     uint32(p.cells),
			vTrans:    p.v_trans != 0,
			nLayer:    uint32(p.n_layer),
		}
		for _, y := range layers[p.first_layer : p.first_layer+p.layers] {
			sp.layers = append(sp.layers, stateLayer{
				hasK: y.has_k != 0, hasV: y.has_v != 0,
				kType: int32(y.k_type), vType: int32(y.v_type),
				kRow: uint64(y.k_row), vRow: uint64(y.v_row),
				vEl: uint32(y.v_el), vEmbd: uint32(y.v_embd),
			})
		}
		l.parts = append(l.parts, sp)
	}
	return l, nil
}
