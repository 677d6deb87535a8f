package llamacpp_test

import (
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
	"github.com/inferkit/inferkit/internal/backend/backendtest"
	"github.com/inferkit/inferkit/internal/llamacpp"
	inferencetest "github.com/inferkit/inferkit/internal/tinymodel"
)

// A recurrent (Mamba) and a hybrid (Jamba) model take checkpoints that
// keep the seam's promises (backendtest.Checkpoints); an attention model
// takes none.
func TestCheckpoints(t *testing.T) {
	for _, arch := range []string{"mamba", "jamba", "llama"} {
		t.Run(arch, func(t *testing.T) {
			m, err := llamacpp.LoadModel(inferencetest.Model(t, inferencetest.Options{Arch: arch}), llamacpp.ModelParams{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ctx, err := llamacpp.NewContext(m, llamacpp.ContextParams{Context: 512, Sequences: 2, Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer ctx.Close()
			if arch == "llama" {
				if backend.FindCheckpointer(ctx) != nil {
					t.Error("an attention model takes checkpoints")
				}
				return
			}
			backendtest.Checkpoints(t, m, ctx)
		})
	}
}
