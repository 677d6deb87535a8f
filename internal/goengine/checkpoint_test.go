//go:build cgo

package goengine_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/backend/backendtest"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
)

// Qwen3.5 takes checkpoints that keep the seam's promises
// (backendtest.Checkpoints), and refuses one that holds a value that is
// not a number; an attention model takes none.
func TestCheckpoints(t *testing.T) {
	m := load(t, inferencetest.Options{Arch: "qwen35"})
	backendtest.Checkpoints(t, m, newContext(t, m, 2))

	m = load(t, inferencetest.Options{Arch: "qwen35"}) // a model makes one context
	ctx := newContext(t, m, 1)
	toks, err := m.Tokenize("A prompt.", false)
	if err != nil {
		t.Fatal(err)
	}
	generate(t, m, ctx, map[int][]backend.Token{0: toks}, map[int]int{0: 0}, 1)
	state, err := backend.FindCheckpointer(ctx).Checkpoint(0)
	if err != nil {
		t.Fatal(err)
	}
	nan := slices.Clone(state)
	bits := math.Float32bits(float32(math.NaN()))
	nan[len(nan)-4], nan[len(nan)-3], nan[len(nan)-2], nan[len(nan)-1] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
	if err := backend.FindCheckpointer(ctx).RestoreCheckpoint(0, len(toks), nan); !errors.Is(err, backend.ErrBadState) {
		t.Errorf("a checkpoint with a NaN: %v, want ErrBadState", err)
	}

	if backend.FindCheckpointer(newContext(t, load(t, inferencetest.Options{Arch: "qwen3"}), 1)) != nil {
		t.Error("an attention model takes checkpoints")
	}
}
