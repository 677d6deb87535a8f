package llamacpp_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/llamacpp"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
)

// On a recurrent (Mamba) and a hybrid (Jamba) model, a sequence taken back
// to a checkpoint and given other tokens gives the logits that a sequence
// decoded cold gives; a checkpoint of another position, cut short or of
// another sequence's shape is refused before llama.cpp reads it, leaving
// the sequence as it was. An attention model takes none.
func TestCheckpointRestore(t *testing.T) {
	for _, arch := range []string{"mamba", "jamba"} {
		t.Run(arch, func(t *testing.T) {
			m, err := llamacpp.LoadModel(inferencetest.Model(t, inferencetest.Options{Arch: arch}), llamacpp.ModelParams{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			shared, err := m.Tokenize("A system prompt that every turn shares.", true)
			if err != nil {
				t.Fatal(err)
			}
			first, _ := m.Tokenize(" First question?", false)
			second, _ := m.Tokenize(" Another one?", false)
			ctx, err := llamacpp.NewContext(m, llamacpp.ContextParams{Context: 512, Sequences: 2, Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer ctx.Close()
			cp := backend.FindCheckpointer(ctx)
			if cp == nil {
				t.Fatal("no checkpoints on a recurrent model")
			}
			want := decodeAt(t, ctx, slices.Concat(shared, second), 0, 1)

			decodeAt(t, ctx, shared, 0, 0)
			state, err := cp.Checkpoint(0)
			if err != nil {
				t.Fatal(err)
			}
			decodeAt(t, ctx, first, len(shared), 0)
			if ctx.RemoveTokens(0, len(shared), -1) {
				t.Fatal("a recurrent memory cut back without a checkpoint")
			}
			for _, bad := range []struct {
				what  string
				n     int
				state []byte
			}{
				{"at another position", len(shared) - 1, state},
				{"cut short", len(shared), state[:len(state)-1]},
				{"longer", len(shared), append(slices.Clone(state), 0)},
			} {
				if err := cp.RestoreCheckpoint(0, bad.n, bad.state); !errors.Is(err, backend.ErrBadState) {
					t.Errorf("a checkpoint %s: %v, want ErrBadState", bad.what, err)
				}
				if got := ctx.MaxPos(0); got != len(shared)+len(first)-1 {
					t.Errorf("a refused checkpoint %s left the sequence at %d, want %d", bad.what, got, len(shared)+len(first)-1)
				}
			}
			if err := cp.RestoreCheckpoint(0, len(shared), state); err != nil {
				t.Fatal(err)
			}
			if got := ctx.MaxPos(0); got != len(shared)-1 {
				t.Fatalf("restored sequence ends at %d, want %d", got, len(shared)-1)
			}
			if got := decodeAt(t, ctx, second, len(shared), 0); !slices.Equal(got, want) {
				t.Error("the sequence restored to its checkpoint gives other logits than a cold one")
			}
		})
	}
	m, err := llamacpp.LoadModel(inferencetest.Model(t, inferencetest.Options{}), llamacpp.ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, err := llamacpp.NewContext(m, llamacpp.ContextParams{Context: 256, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	if backend.FindCheckpointer(ctx) != nil {
		t.Error("an attention model takes checkpoints")
	}
}
