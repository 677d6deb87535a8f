//go:build cgo

package inference

import (
	"errors"
	"testing"

	"github.com/inferkit/inferkit/internal/backend"
)

// otherModel is a model of a backend other than llama.cpp; only Backend
// is implemented.
type otherModel struct{ backend.Model }

func (otherModel) Backend() string { return "other" }

// Images are llama.cpp's alone: a projector for a model of another
// backend is refused, naming the backend, before any file is read.
func TestProjectorNeedsLlamaCpp(t *testing.T) {
	p, err := loadProjector("/nonexistent/mmproj.gguf", otherModel{}, 1)
	if p != nil || !errors.Is(err, backend.ErrUnsupported) {
		t.Fatalf("loadProjector: %v, %v; want an error wrapping ErrUnsupported", p, err)
	}
	t.Log(err)
}
