package messages

import (
	"testing"

	"github.com/inferkit/inferkit/formats/internal/formatstest"
)

// TestNames checks the style's table of parameter names (see
// formats.ParamNames).
func TestNames(t *testing.T) { formatstest.ParamNames(t, names) }
